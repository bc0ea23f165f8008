#include "wrap/client_files.hpp"

#include <array>
#include <utility>

namespace ctxguard::wrap {

namespace fs = std::filesystem;

namespace {

constexpr std::array<std::pair<std::string_view, Client>, 5> kClients{{
    {"claude-desktop", Client::kClaudeDesktop},
    {"claude-code", Client::kClaudeCode},
    {"cursor", Client::kCursor},
    {"vscode", Client::kVsCode},
    {"codex", Client::kCodex},
}};

const ConfigLayout kMcpServers{.format = ConfigFormat::kJson, .servers_key = "mcpServers"};
const ConfigLayout kVsCodeServers{.format = ConfigFormat::kJson, .servers_key = "servers"};
const ConfigLayout kCodexServers{.format = ConfigFormat::kToml, .servers_key = "mcp_servers"};

// Where an application keeps its per-user settings: ~/Library/Application Support on macOS,
// %APPDATA% on Windows, the XDG config directory on Linux.
fs::path application_support(const Platform& platform) {
  switch (platform.os) {
    case Platform::Os::kMacOs:
      return platform.home / "Library" / "Application Support";
    case Platform::Os::kWindows:
      return platform.app_data;
    case Platform::Os::kLinux:
      return platform.config_home;
  }
  return platform.config_home;
}

Problem no_project_file(std::string_view client) {
  return {std::string(client) + " keeps its servers in one file for the user: no --project"};
}

}  // namespace

std::string_view client_names() { return "claude-desktop, claude-code, cursor, vscode, codex"; }

std::optional<Client> client_named(std::string_view name) {
  for (const auto& [known, client] : kClients) {
    if (known == name) return client;
  }
  return std::nullopt;
}

Platform Platform::current(const Environment& environment) {
  const auto get = [&](const char* name) -> std::optional<fs::path> {
    const char* value = environment(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return fs::path(value);
  };
  Platform platform;
#if defined(_WIN32)
  platform.os = Os::kWindows;
  platform.home = get("USERPROFILE").value_or(fs::path());
#elif defined(__APPLE__)
  platform.os = Os::kMacOs;
  platform.home = get("HOME").value_or(fs::path());
#else
  platform.os = Os::kLinux;
  platform.home = get("HOME").value_or(fs::path());
#endif
  platform.config_home = get("XDG_CONFIG_HOME").value_or(platform.home / ".config");
  platform.app_data = get("APPDATA").value_or(platform.home / "AppData" / "Roaming");
  platform.codex_home = get("CODEX_HOME");
  return platform;
}

Checked<ConfigLocation> client_config(Client client, const Platform& platform,
                                      const std::optional<fs::path>& project) {
  switch (client) {
    case Client::kClaudeDesktop:
      if (project) return no_project_file("claude-desktop");
      return ConfigLocation{application_support(platform) / "Claude" / "claude_desktop_config.json",
                            kMcpServers};
    case Client::kClaudeCode:
      if (project) return ConfigLocation{*project / ".mcp.json", kMcpServers};
      return ConfigLocation{platform.home / ".claude.json", kMcpServers};
    case Client::kCursor:
      if (project) return ConfigLocation{*project / ".cursor" / "mcp.json", kMcpServers};
      return ConfigLocation{platform.home / ".cursor" / "mcp.json", kMcpServers};
    case Client::kVsCode:
      if (project) return ConfigLocation{*project / ".vscode" / "mcp.json", kVsCodeServers};
      return ConfigLocation{application_support(platform) / "Code" / "User" / "mcp.json",
                            kVsCodeServers};
    case Client::kCodex:
      if (project) return no_project_file("codex");
      return ConfigLocation{platform.codex_home.value_or(platform.home / ".codex") / "config.toml",
                            kCodexServers};
  }
  return Problem{"unknown client"};
}

ConfigLayout layout_of(const fs::path& path, std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  const bool json_text = first != std::string_view::npos && text[first] == '{';
  if (path.extension() == ".toml" || (path.extension() != ".json" && !json_text)) {
    return kCodexServers;
  }
  return ConfigLayout{.format = ConfigFormat::kJson, .servers_key = {}};
}

}  // namespace ctxguard::wrap
