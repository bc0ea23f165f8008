#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "wrap/client_files.hpp"

using namespace ctxguard::wrap;
namespace fs = std::filesystem;

namespace {

Platform platform(Platform::Os os) {
  return Platform{
      .os = os,
      .home = os == Platform::Os::kWindows ? fs::path("C:/Users/ana") : fs::path("/home/ana"),
      .config_home = "/home/ana/.config",
      .app_data = "C:/Users/ana/AppData/Roaming",
      .codex_home = std::nullopt};
}

fs::path path_of(Client client, const Platform& where, std::optional<fs::path> project = {}) {
  auto location = client_config(client, where, project);
  REQUIRE(location.has_value());
  return location->path;
}

}  // namespace

TEST_CASE("client files: every client by name") {
  CHECK(client_named("claude-desktop") == Client::kClaudeDesktop);
  CHECK(client_named("claude-code") == Client::kClaudeCode);
  CHECK(client_named("cursor") == Client::kCursor);
  CHECK(client_named("vscode") == Client::kVsCode);
  CHECK(client_named("codex") == Client::kCodex);
  CHECK_FALSE(client_named("claude"));
}

TEST_CASE("client files: the standard locations on Linux, macOS and Windows") {
  const Platform linux_box = platform(Platform::Os::kLinux);
  const Platform mac = platform(Platform::Os::kMacOs);
  const Platform windows = platform(Platform::Os::kWindows);
  CHECK(path_of(Client::kClaudeDesktop, linux_box) ==
        "/home/ana/.config/Claude/claude_desktop_config.json");
  CHECK(path_of(Client::kClaudeDesktop, mac) ==
        "/home/ana/Library/Application Support/Claude/claude_desktop_config.json");
  CHECK(path_of(Client::kClaudeDesktop, windows) ==
        fs::path("C:/Users/ana/AppData/Roaming") / "Claude" / "claude_desktop_config.json");
  CHECK(path_of(Client::kClaudeCode, linux_box) == "/home/ana/.claude.json");
  CHECK(path_of(Client::kCursor, mac) == "/home/ana/.cursor/mcp.json");
  CHECK(path_of(Client::kVsCode, linux_box) == "/home/ana/.config/Code/User/mcp.json");
  CHECK(path_of(Client::kVsCode, mac) ==
        "/home/ana/Library/Application Support/Code/User/mcp.json");
  CHECK(path_of(Client::kCodex, linux_box) == "/home/ana/.codex/config.toml");
  Platform codex_home = linux_box;
  codex_home.codex_home = "/srv/codex";
  CHECK(path_of(Client::kCodex, codex_home) == "/srv/codex/config.toml");
}

TEST_CASE("client files: project files, and the clients that have none") {
  const Platform linux_box = platform(Platform::Os::kLinux);
  CHECK(path_of(Client::kClaudeCode, linux_box, "/work/app") == "/work/app/.mcp.json");
  CHECK(path_of(Client::kCursor, linux_box, "/work/app") == "/work/app/.cursor/mcp.json");
  const auto vscode = client_config(Client::kVsCode, linux_box, fs::path("/work/app"));
  REQUIRE(vscode.has_value());
  CHECK(vscode->path == "/work/app/.vscode/mcp.json");
  CHECK(vscode->layout.servers_key == "servers");
  CHECK_FALSE(client_config(Client::kClaudeDesktop, linux_box, fs::path("/w")).has_value());
  CHECK_FALSE(client_config(Client::kCodex, linux_box, fs::path("/w")).has_value());
}

TEST_CASE("client files: a file named by path is JSON or TOML by its name, else by its text") {
  CHECK(layout_of("config.toml", "{").format == ConfigFormat::kToml);
  CHECK(layout_of("config.toml", "{").servers_key == "mcp_servers");
  CHECK(layout_of("mcp.json", "").format == ConfigFormat::kJson);
  CHECK(layout_of("servers.conf", "  {\"mcpServers\": {}}").format == ConfigFormat::kJson);
  CHECK(layout_of("servers.conf", "[mcp_servers.x]").format == ConfigFormat::kToml);
  CHECK(layout_of("mcp.json", "{}").servers_key.empty());  // as the file has it
}

TEST_CASE("client files: this machine's platform comes from the environment") {
  // HOME on POSIX, USERPROFILE on Windows: both given, the platform reads its own.
  const std::map<std::string, std::string> variables{
      {"HOME", "/home/bo"}, {"USERPROFILE", "/home/bo"}, {"CODEX_HOME", "/c"}};
  const Platform here = Platform::current([&](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
  CHECK(here.home == fs::path("/home/bo"));
  CHECK(here.config_home == fs::path("/home/bo") / ".config");
  CHECK(here.codex_home == fs::path("/c"));
}
