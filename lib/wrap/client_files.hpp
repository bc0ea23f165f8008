#pragma once
// Where each MCP client keeps its servers, and how (docs/configuration.md, "Wrapping a client's
// servers"):
//
//   client          user file (Linux; macOS and Windows in client_files.cpp)  project file
//   (--project) claude-desktop  ~/.config/Claude/claude_desktop_config.json  mcpServers      -
//   claude-code     ~/.claude.json                               mcpServers      DIR/.mcp.json
//   cursor          ~/.cursor/mcp.json                           mcpServers DIR/.cursor/mcp.json
//   vscode          ~/.config/Code/User/mcp.json                 servers DIR/.vscode/mcp.json codex
//   $CODEX_HOME or ~/.codex, config.toml         [mcp_servers.NAME]  -

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "support/error.hpp"

namespace ctxguard::wrap {

enum class Client { kClaudeDesktop, kClaudeCode, kCursor, kVsCode, kCodex };

// The names --client takes, in the order of the table above.
std::string_view client_names();
std::optional<Client> client_named(std::string_view name);

enum class ConfigFormat { kJson, kToml };

// How a file holds its servers: a JSON object under `servers_key`, or TOML tables under it. An
// empty key in a JSON layout: `servers` when that is the key the file has (VS Code), else
// `mcpServers`.
struct ConfigLayout {
  ConfigFormat format = ConfigFormat::kJson;
  std::string servers_key;
};

struct ConfigLocation {
  std::filesystem::path path;
  ConfigLayout layout;
};

// Where the standard locations are: the operating system and the directories they start from.
struct Platform {
  enum class Os { kLinux, kMacOs, kWindows };
  Os os = Os::kLinux;
  std::filesystem::path home;                       // $HOME, or %USERPROFILE% on Windows
  std::filesystem::path config_home;                // $XDG_CONFIG_HOME, else HOME/.config (Linux)
  std::filesystem::path app_data;                   // %APPDATA% (Windows)
  std::optional<std::filesystem::path> codex_home;  // $CODEX_HOME

  using Environment = std::function<const char*(const char*)>;
  // This machine's, from the environment.
  static Platform current(const Environment& environment);
};

// The file of `client` (its project file with `project`), or why there is none.
Checked<ConfigLocation> client_config(Client client, const Platform& platform,
                                      const std::optional<std::filesystem::path>& project);

// The layout of a file named by --config-file, from its name and its text: TOML when it ends in
// .toml (or, without a .json name, its text does not start with `{`), servers under
// `mcp_servers`; JSON otherwise, its servers key as the file has it.
ConfigLayout layout_of(const std::filesystem::path& path, std::string_view text);

}  // namespace ctxguard::wrap
