#include <catch2/catch.hpp>

#include <string>

#include <toml++/toml.h>
#include <boost/json.hpp>

#include "wrap/config_edit.hpp"

using namespace ctxguard::wrap;
namespace json = boost::json;

namespace {

const ConfigLayout kDesktop{.format = ConfigFormat::kJson, .servers_key = "mcpServers"};
const ConfigLayout kCodex{.format = ConfigFormat::kToml, .servers_key = "mcp_servers"};
constexpr const char* kCtxguard = "/usr/bin/ctxguard";

// A Claude Desktop file with what real ones hold: env, a Windows path, a server without args,
// one with empty args, a remote one, a disabled one, keys only some clients know, and settings
// beside the servers.
const std::string kDesktopFile = R"({
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "C:\\Users\\ana\\Documents"],
      "env": {"NODE_OPTIONS": "--max-old-space-size=4096"}
    },
    "git": {"command": "C:\\Program Files\\uv\\uvx.exe", "args": ["mcp-server-git"], "cwd": "D:\\src"},
    "plain": {"command": "/opt/mcp/plain-server"},
    "empty-args": {"command": "memory-server", "args": []},
    "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}},
    "off": {"command": "node", "args": ["off.js"], "disabled": true, "alwaysAllow": ["read"],
            "x-note": {"owner": "ops", "since": 2024}}
  }
})";

EditResult edit(std::string_view text, const ConfigLayout& layout, const EditRequest& request,
                std::optional<std::string_view> backup = std::nullopt) {
  auto result = edit_config(text, layout, request, backup);
  if (auto* problem = std::get_if<std::string>(&result)) FAIL(*problem);
  return std::get<EditResult>(std::move(result));
}

EditRequest wrap_request(std::optional<std::vector<std::string>> options = std::nullopt,
                         std::vector<std::string> servers = {}) {
  return EditRequest{.mode = Mode::kWrap,
                     .wrap = {.ctxguard = std::string(kCtxguard), .options = std::move(options)},
                     .servers = std::move(servers)};
}

const EditRequest kUnwrap{.mode = Mode::kUnwrap, .wrap = {}, .servers = {}};

Action action_of(const EditResult& result, std::string_view name) {
  for (const ServerOutcome& server : result.servers) {
    if (server.name == name) return server.action;
  }
  FAIL("no outcome for " << name);
  return Action::kNoCommand;
}

}  // namespace

TEST_CASE("config edit: JSON servers are wrapped, every other key and server kept") {
  const EditResult wrapped = edit(kDesktopFile, kDesktop,
                                  wrap_request(std::vector<std::string>{"--token-budget", "8000"}));
  REQUIRE(wrapped.changed);
  const json::value after = json::parse(wrapped.text);
  const json::value before = json::parse(kDesktopFile, {}, {.allow_comments = true});
  const json::object& servers = after.at("mcpServers").as_object();
  CHECK(servers.at("filesystem").at("command") == kCtxguard);
  CHECK(servers.at("filesystem").at("args") ==
        json::parse(R"(["--token-budget", "8000", "--", "npx", "-y",
                        "@modelcontextprotocol/server-filesystem", "C:\\Users\\ana\\Documents"])"));
  CHECK(servers.at("filesystem").at("env") == before.at("mcpServers").at("filesystem").at("env"));
  CHECK(servers.at("git").at("cwd") == "D:\\src");
  CHECK(servers.at("plain").at("args") ==
        json::parse(R"(["--token-budget", "8000", "--", "/opt/mcp/plain-server"])"));
  CHECK(servers.at("remote") == before.at("mcpServers").at("remote"));
  CHECK(servers.at("off").at("disabled") == true);
  CHECK(servers.at("off").at("x-note") == before.at("mcpServers").at("off").at("x-note"));
  CHECK(after.at("globalShortcut") == "Ctrl+Space");
  CHECK(action_of(wrapped, "remote") == Action::kRemote);
  CHECK(action_of(wrapped, "off") == Action::kWrapped);
  // Member order is the file's, and the text is indented as the file was.
  CHECK(wrapped.text.find("\"globalShortcut\"") < wrapped.text.find("\"mcpServers\""));
  CHECK(wrapped.text.rfind("{\n  \"globalShortcut\"", 0) == 0);
}

TEST_CASE("config edit: wrapping twice changes nothing; new options update only the options") {
  const EditResult once = edit(kDesktopFile, kDesktop, wrap_request());
  const EditResult twice = edit(once.text, kDesktop, wrap_request());
  CHECK_FALSE(twice.changed);
  CHECK(twice.text == once.text);
  CHECK(action_of(twice, "filesystem") == Action::kAlreadyWrapped);
  const EditResult budget =
      edit(once.text, kDesktop, wrap_request(std::vector<std::string>{"--token-budget", "8000"}));
  CHECK(budget.changed);
  CHECK(action_of(budget, "git") == Action::kUpdated);
  CHECK(
      json::parse(budget.text).at("mcpServers").at("git").at("args") ==
      json::parse(
          R"(["--token-budget", "8000", "--", "C:\\Program Files\\uv\\uvx.exe", "mcp-server-git"])"));
}

TEST_CASE(
    "config edit: unwrap restores the file: byte for byte from the backup, JSON-equal without") {
  const EditResult wrapped = edit(kDesktopFile, kDesktop,
                                  wrap_request(std::vector<std::string>{"--tool-list", "compact"}));
  const EditResult exact = edit(wrapped.text, kDesktop, kUnwrap, kDesktopFile);
  CHECK(exact.changed);
  CHECK(exact.text == kDesktopFile);
  CHECK(action_of(exact, "filesystem") == Action::kUnwrapped);
  CHECK(action_of(exact, "remote") == Action::kRemote);
  // Without the backup: the same servers, an `args` that was not there left out again.
  const EditResult rebuilt = edit(wrapped.text, kDesktop, kUnwrap);
  json::value expected = json::parse(kDesktopFile);
  expected.at("mcpServers").as_object().at("empty-args").as_object().erase("args");
  CHECK(json::parse(rebuilt.text) == expected);
  // After another change to the file, the backup no longer matches: unwrapped in place, and the
  // backup still tells that `empty-args` had an `args`.
  json::value edited = json::parse(wrapped.text);
  edited.as_object()["globalShortcut"] = "Alt+Space";
  const EditResult in_place = edit(json::serialize(edited), kDesktop, kUnwrap, kDesktopFile);
  json::value expected_in_place = json::parse(kDesktopFile);
  expected_in_place.as_object()["globalShortcut"] = "Alt+Space";
  CHECK(json::parse(in_place.text) == expected_in_place);
  // Unwrapping a file with nothing wrapped changes nothing.
  const EditResult nothing = edit(kDesktopFile, kDesktop, kUnwrap);
  CHECK_FALSE(nothing.changed);
  CHECK(action_of(nothing, "plain") == Action::kNotWrapped);
}

TEST_CASE("config edit: --server picks servers; a name the file lacks is refused") {
  const EditResult one = edit(kDesktopFile, kDesktop, wrap_request(std::nullopt, {"git"}));
  REQUIRE(one.servers.size() == 1);
  const json::value after = json::parse(one.text);
  CHECK(after.at("mcpServers").at("git").at("command") == kCtxguard);
  CHECK(after.at("mcpServers").at("filesystem").at("command") == "npx");
  const auto missing =
      edit_config(kDesktopFile, kDesktop, wrap_request(std::nullopt, {"gti"}), std::nullopt);
  REQUIRE(std::holds_alternative<std::string>(missing));
  CHECK(
      std::get<std::string>(missing) ==
      "there is no server \"gti\" (the file has: filesystem, git, plain, empty-args, remote, off)");
}

TEST_CASE(
    "config edit: VS Code's servers key and comments; files that cannot be used are refused") {
  const std::string vscode = R"({
    // MCP servers of this workspace
    "servers": {
        "fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-filesystem", "${workspaceFolder}"],},
        "web": {"type": "http", "url": "http://localhost:3000/mcp"}
    },
    "inputs": []
})";
  const EditResult wrapped =
      edit(vscode, ConfigLayout{.format = ConfigFormat::kJson, .servers_key = {}}, wrap_request());
  CHECK(wrapped.servers_key == "servers");
  const json::value after = json::parse(wrapped.text);
  CHECK(after.at("servers").at("fs").at("type") == "stdio");
  CHECK(after.at("servers").at("fs").at("args").as_array().back() == "${workspaceFolder}");
  CHECK(action_of(wrapped, "web") == Action::kRemote);
  CHECK(wrapped.text.rfind("{\n    \"servers\"", 0) == 0);  // its 4-space indentation
  CHECK(wrapped.comments_lost);
  CHECK_FALSE(edit(kDesktopFile, kDesktop, wrap_request()).comments_lost);

  const auto broken = edit_config("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",,}\n}",
                                  kDesktop, wrap_request(), std::nullopt);
  REQUIRE(std::holds_alternative<std::string>(broken));
  CHECK(std::get<std::string>(broken).rfind("not valid JSON at line 3, column ", 0) == 0);
  const auto not_servers =
      edit_config(R"({"mcpServers": []})", kDesktop, wrap_request(), std::nullopt);
  CHECK(std::get<std::string>(not_servers) == "\"mcpServers\" is not an object of servers");
  const auto array = edit_config("[]", kDesktop, wrap_request(), std::nullopt);
  CHECK(std::get<std::string>(array) == "the file is not a JSON object");
  // No servers at all: nothing to do, and no error.
  const EditResult none = edit(R"({"theme": "dark"})", kDesktop, wrap_request());
  CHECK_FALSE(none.changed);
  CHECK(none.servers.empty());
}

namespace {

const std::string kCodexFile = R"(# Codex configuration
model = "o4-mini"

[mcp_servers.filesystem]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/ana/notes"]
env = { "LOG_LEVEL" = "warn" }
startup_timeout_sec = 20

[mcp_servers.docs]
url = "https://docs.example.com/mcp"

[mcp_servers.paused]
command = "uvx"
args = ["mcp-server-fetch"]
enabled = false

[profiles.fast]
model = "gpt-4.1-mini"
)";

}  // namespace

TEST_CASE("config edit: Codex's TOML tables are wrapped, values and other tables kept") {
  const EditResult wrapped =
      edit(kCodexFile, kCodex, wrap_request(std::vector<std::string>{"--token-budget", "8000"}));
  REQUIRE(wrapped.changed);
  const toml::table after = toml::parse(wrapped.text);
  const toml::table before = toml::parse(kCodexFile);
  CHECK(after["mcp_servers"]["filesystem"]["command"].value<std::string>() == kCtxguard);
  const toml::array& args = *after["mcp_servers"]["filesystem"]["args"].as_array();
  CHECK(args.size() == 7);
  CHECK(args[2].value<std::string>() == "--");
  CHECK(args[3].value<std::string>() == "npx");
  CHECK(after["mcp_servers"]["filesystem"]["env"] == before["mcp_servers"]["filesystem"]["env"]);
  CHECK(after["mcp_servers"]["filesystem"]["startup_timeout_sec"].value<int>() == 20);
  CHECK(after["mcp_servers"]["paused"]["enabled"].value<bool>() == false);
  CHECK(*after["mcp_servers"]["docs"].as_table() == *before["mcp_servers"]["docs"].as_table());
  CHECK(*after["profiles"].as_table() == *before["profiles"].as_table());
  CHECK(after["model"].value<std::string>() == "o4-mini");
  CHECK(action_of(wrapped, "docs") == Action::kRemote);
  CHECK(wrapped.comments_lost);  // "# Codex configuration"
  // Idempotent.
  CHECK_FALSE(edit(wrapped.text, kCodex, wrap_request()).changed);
}

TEST_CASE("config edit: Codex unwrap: the original text from the backup, equal tables without it") {
  const EditResult wrapped = edit(kCodexFile, kCodex, wrap_request());
  const EditResult exact = edit(wrapped.text, kCodex, kUnwrap, kCodexFile);
  CHECK(exact.text == kCodexFile);  // its comments too
  const EditResult rebuilt = edit(wrapped.text, kCodex, kUnwrap);
  CHECK(toml::parse(rebuilt.text) == toml::parse(kCodexFile));
  const auto broken = edit_config("[mcp_servers.x]\ncommand = \"a\nargs = []\n", kCodex,
                                  wrap_request(), std::nullopt);
  REQUIRE(std::holds_alternative<std::string>(broken));
  CHECK(std::get<std::string>(broken).rfind("not valid TOML at line 2, column ", 0) == 0);
  const auto not_tables = edit_config("mcp_servers = 3\n", kCodex, wrap_request(), std::nullopt);
  CHECK(std::get<std::string>(not_tables) == "\"mcp_servers\" is not a table of servers");
}
