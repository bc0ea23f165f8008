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
  if (!result) FAIL(result.error().message);
  return *std::move(result);
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
  REQUIRE_FALSE(missing.has_value());
  CHECK(
      missing.error().message ==
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
  const json::value after =
      json::parse(wrapped.text, {}, {.allow_comments = true, .allow_trailing_commas = true});
  CHECK(after.at("servers").at("fs").at("type") == "stdio");
  CHECK(after.at("servers").at("fs").at("args").as_array().back() == "${workspaceFolder}");
  CHECK(action_of(wrapped, "web") == Action::kRemote);
  // Edited in place: its comment, its trailing comma and its one-line server stay.
  CHECK(wrapped.text.rfind("{\n    // MCP servers of this workspace\n    \"servers\"", 0) == 0);
  CHECK(
      wrapped.text.find(
          R"("fs": {"type": "stdio", "command": "/usr/bin/ctxguard", "args": ["--", "npx", "-y", "server-filesystem", "${workspaceFolder}"],},)") !=
      std::string::npos);
  CHECK_FALSE(wrapped.comments_lost);

  const auto broken = edit_config("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",,}\n}",
                                  kDesktop, wrap_request(), std::nullopt);
  REQUIRE_FALSE(broken.has_value());
  CHECK(broken.error().message.rfind("not valid JSON at line 3, column ", 0) == 0);
  const auto not_servers =
      edit_config(R"({"mcpServers": []})", kDesktop, wrap_request(), std::nullopt);
  CHECK(not_servers.error().message == "\"mcpServers\" is not an object of servers");
  const auto array = edit_config("[]", kDesktop, wrap_request(), std::nullopt);
  CHECK(array.error().message == "the file is not a JSON object");
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
  CHECK(wrapped.text.rfind("# Codex configuration\nmodel = \"o4-mini\"\n", 0) == 0);
  CHECK_FALSE(wrapped.comments_lost);
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
  REQUIRE_FALSE(broken.has_value());
  CHECK(broken.error().message.rfind("not valid TOML at line 2, column ", 0) == 0);
  const auto not_tables = edit_config("mcp_servers = 3\n", kCodex, wrap_request(), std::nullopt);
  CHECK(not_tables.error().message == "\"mcp_servers\" is not a table of servers");
}

// ---- In place: each client's own format, commented, kept byte for byte but for the servers'
// launches (docs/configuration.md, "Wrapping a client's servers").

namespace {

// A client's file as its documentation writes it, a server to wrap, and the file once that
// server is wrapped with `--token-budget 8000`: only its `command` and `args` differ.
struct ClientFile {
  const char* client;
  ConfigLayout layout;
  std::string text;
  std::string server;
  std::string wrapped;
};

std::vector<ClientFile> client_files() {
  const ConfigLayout json_servers{.format = ConfigFormat::kJson, .servers_key = {}};
  return {
      {"claude-desktop", json_servers,
       R"({
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/username/Desktop",
        "/Users/username/Downloads"
      ]
    },
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"]
    }
  }
}
)",
       "filesystem",
       R"({
  "mcpServers": {
    "filesystem": {
      "command": "/usr/bin/ctxguard",
      "args": [
        "--token-budget",
        "8000",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/username/Desktop",
        "/Users/username/Downloads"
      ]
    },
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"]
    }
  }
}
)"},
      {"claude-code", json_servers,
       R"({
  "mcpServers": {
    "shared-server": {
      "type": "stdio",
      "command": "/path/to/server",
      "args": [],
      "env": {}
    },
    "airtable": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "airtable-mcp-server"],
      "env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY}"}
    }
  }
})",
       "shared-server",
       R"({
  "mcpServers": {
    "shared-server": {
      "type": "stdio",
      "command": "/usr/bin/ctxguard",
      "args": ["--token-budget", "8000", "--", "/path/to/server"],
      "env": {}
    },
    "airtable": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "airtable-mcp-server"],
      "env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY}"}
    }
  }
})"},
      {"cursor", json_servers,
       R"({
  "mcpServers": {
    "server-name": {
      "command": "python",
      "args": ["mcp-server.py"],
      "env": {
        "API_KEY": "value"
      }
    },
    "local": {"command": "C:\\Tools\\mcp\\server.exe"}
  }
}
)",
       "local",
       R"({
  "mcpServers": {
    "server-name": {
      "command": "python",
      "args": ["mcp-server.py"],
      "env": {
        "API_KEY": "value"
      }
    },
    "local": {"command": "/usr/bin/ctxguard", "args": ["--token-budget", "8000", "--", "C:\\Tools\\mcp\\server.exe"]}
  }
}
)"},
      {"vscode", json_servers,
       "{\n"
       "\t// Inputs are prompted on first server start, then stored securely by VS Code.\n"
       "\t\"inputs\": [\n"
       "\t\t{\"type\": \"promptString\", \"id\": \"key\", \"description\": \"API Key\", "
       "\"password\": true}\n"
       "\t],\n"
       "\t\"servers\": {\n"
       "\t\t/* the workspace's files */\n"
       "\t\t\"fs\": {\n"
       "\t\t\t\"type\": \"stdio\",\n"
       "\t\t\t\"command\": \"npx\", // from npm\n"
       "\t\t\t\"env\": {\"KEY\": \"${input:key}\"},\n"
       "\t\t},\n"
       "\t\t\"fetch\": {\"type\": \"stdio\", \"command\": \"uvx\", \"args\": "
       "[\"mcp-server-fetch\"]}, // one line\n"
       "\t}\n"
       "}\n",
       "fs",
       "{\n"
       "\t// Inputs are prompted on first server start, then stored securely by VS Code.\n"
       "\t\"inputs\": [\n"
       "\t\t{\"type\": \"promptString\", \"id\": \"key\", \"description\": \"API Key\", "
       "\"password\": true}\n"
       "\t],\n"
       "\t\"servers\": {\n"
       "\t\t/* the workspace's files */\n"
       "\t\t\"fs\": {\n"
       "\t\t\t\"type\": \"stdio\",\n"
       "\t\t\t\"command\": \"/usr/bin/ctxguard\",\n"
       "\t\t\t\"args\": [\"--token-budget\", \"8000\", \"--\", \"npx\"], // from npm\n"
       "\t\t\t\"env\": {\"KEY\": \"${input:key}\"},\n"
       "\t\t},\n"
       "\t\t\"fetch\": {\"type\": \"stdio\", \"command\": \"uvx\", \"args\": "
       "[\"mcp-server-fetch\"]}, // one line\n"
       "\t}\n"
       "}\n"},
      {"codex", kCodex,
       R"(# ~/.codex/config.toml
model = "gpt-5-codex"

# MCP servers
[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
# Optional: environment variables
env = { "MY_ENV_VAR" = "MY_ENV_VALUE" }

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"

[mcp_servers.notes]
command = 'C:\Tools\notes-mcp.exe'   # a literal string: no escapes
startup_timeout_sec = 20

[mcp_servers]
fetch = { command = "uvx", args = ['mcp-server-fetch', "--ignore-robots-txt"] }
)",
       "notes",
       R"(# ~/.codex/config.toml
model = "gpt-5-codex"

# MCP servers
[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
# Optional: environment variables
env = { "MY_ENV_VAR" = "MY_ENV_VALUE" }

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"

[mcp_servers.notes]
command = '/usr/bin/ctxguard'   # a literal string: no escapes
args = ['--token-budget', '8000', '--', 'C:\Tools\notes-mcp.exe']
startup_timeout_sec = 20

[mcp_servers]
fetch = { command = "uvx", args = ['mcp-server-fetch', "--ignore-robots-txt"] }
)"},
  };
}

const std::vector<std::string> kBudget{"--token-budget", "8000"};

}  // namespace

TEST_CASE("config edit in place: one server wrapped changes only its launch, in the file's style") {
  for (const ClientFile& file : client_files()) {
    INFO(file.client);
    const EditResult wrapped = edit(file.text, file.layout, wrap_request(kBudget, {file.server}));
    CHECK(wrapped.text == file.wrapped);
    CHECK_FALSE(wrapped.comments_lost);
    // Unwrapped: the exact text again; without the backup too, but where an empty `args`
    // (Claude Code's "shared-server") is left out, as nothing says it was there.
    CHECK(edit(wrapped.text, file.layout, kUnwrap, file.text).text == file.text);
    if (file.server != "shared-server") {
      CHECK(edit(wrapped.text, file.layout, kUnwrap).text == file.text);
    }
  }
}

TEST_CASE("config edit in place: every server wrapped, rewrapped and unwrapped comes back exact") {
  for (const ClientFile& file : client_files()) {
    INFO(file.client);
    const EditResult all = edit(file.text, file.layout, wrap_request(kBudget));
    REQUIRE(all.changed);
    const EditResult updated =
        edit(all.text, file.layout, wrap_request(std::vector<std::string>{"--tool-list", "lazy"}));
    CHECK(updated.changed);
    CHECK(edit(updated.text, file.layout, wrap_request()).text == updated.text);
    CHECK(edit(updated.text, file.layout, kUnwrap, file.text).text == file.text);
  }
}

TEST_CASE("config edit in place: Codex's servers of each form take args where they stand") {
  const ClientFile codex = client_files().back();
  const EditResult wrapped = edit(codex.text, kCodex, wrap_request({}, {"fetch", "context7"}));
  CHECK(wrapped.text.find("\n[mcp_servers.context7]\ncommand = \"/usr/bin/ctxguard\"\n"
                          "args = [\"--\", \"npx\", \"-y\", \"@upstash/context7-mcp\"]\n"
                          "# Optional: environment variables\n") != std::string::npos);
  CHECK(wrapped.text.find("\nfetch = { command = \"/usr/bin/ctxguard\", args = [\"--\", \"uvx\", "
                          "'mcp-server-fetch', \"--ignore-robots-txt\"] }\n") != std::string::npos);
  CHECK(edit(wrapped.text, kCodex, kUnwrap).text == codex.text);

  // An inline table without args, a dotted key, a file without a final line break.
  const std::string forms =
      "[mcp_servers]\none = { command = \"a\" }\ntwo.command = \"b\" # dotted\n"
      "[mcp_servers.three]\ncommand = \"c\"";
  const EditResult each = edit(forms, kCodex, wrap_request());
  CHECK(each.text ==
        "[mcp_servers]\none = { command = \"/usr/bin/ctxguard\", args = [\"--\", \"a\"] }\n"
        "two.command = \"/usr/bin/ctxguard\" # dotted\ntwo.args = [\"--\", \"b\"]\n"
        "[mcp_servers.three]\ncommand = \"/usr/bin/ctxguard\"\nargs = [\"--\", \"c\"]");
  CHECK(edit(each.text, kCodex, kUnwrap).text == forms);
}

TEST_CASE("config edit in place: escapes, other scripts and CRLF line breaks are kept") {
  const std::string text =
      "{\r\n  \"mcpServers\": {\r\n    \"notes\": {\r\n      \"command\": \"C:\\\\Program "
      "Files\\\\notes\\\\n\\u00f6tes.exe\",\r\n      \"env\": {\"LANG\": \"日本語\"}\r\n    }\r\n  "
      "}\r\n}\r\n";
  const EditResult wrapped = edit(text, kDesktop, wrap_request());
  CHECK(
      wrapped.text ==
      "{\r\n  \"mcpServers\": {\r\n    \"notes\": {\r\n      \"command\": \"/usr/bin/ctxguard\","
      "\r\n      \"args\": [\"--\", \"C:\\\\Program Files\\\\notes\\\\n\\u00f6tes.exe\"],\r\n      "
      "\"env\": {\"LANG\": \"日本語\"}\r\n    }\r\n  }\r\n}\r\n");
  CHECK(edit(wrapped.text, kDesktop, kUnwrap).text == text);
}

TEST_CASE("config edit in place: comments in args arrays stay, but in the part that goes") {
  const std::string text = R"([mcp_servers.docs]
command = "uvx"
args = [
  "mcp-server-fetch", # the fetch server
  "--ignore-robots-txt",
]
# kept: outside the array
)";
  const EditResult wrapped = edit(text, kCodex, wrap_request(kBudget));
  CHECK_FALSE(wrapped.comments_lost);
  const std::string expected = R"([mcp_servers.docs]
command = "/usr/bin/ctxguard"
args = [
  "--token-budget",
  "8000",
  "--",
  "uvx",
  "mcp-server-fetch", # the fetch server
  "--ignore-robots-txt",
]
# kept: outside the array
)";
  CHECK(wrapped.text == expected);
  // A comment the user put among ctxguard's options goes with them, and the note says so.
  std::string commented = expected;
  commented.replace(commented.find("\"8000\","), 7, "\"8000\", # my budget");
  const EditResult unwrapped = edit(commented, kCodex, kUnwrap);
  CHECK(unwrapped.comments_lost);
  CHECK(unwrapped.text == text);
}

TEST_CASE("config edit in place: a file an older ctxguard rewrote gets its backup back") {
  // Before editing in place, wrap wrote the JSON again without its comments.
  const std::string backup = "{\n  // mine\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}}\n}\n";
  const std::string rewritten =
      "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"/usr/bin/ctxguard\",\n      "
      "\"args\": [\n        \"--\",\n        \"x\"\n      ]\n    }\n  }\n}\n";
  CHECK(edit(rewritten, kDesktop, kUnwrap, backup).text == backup);
  // A comment written since: unwrapped in place, the comment kept.
  const std::string commented = "// since\n" + rewritten;
  const EditResult in_place = edit(commented, kDesktop, kUnwrap, backup);
  CHECK(
      in_place.text ==
      "// since\n{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"x\"\n    }\n  }\n}\n");
}

TEST_CASE("config edit in place: an empty array's own layout comes back from the backup") {
  // Found by config_edit_fuzz: nothing in `[\n\n]` tells how to write it empty again.
  const std::string text = "# mine\n[mcp_servers.a]\ncommand = \"x\"\nargs = [\n\n]\n";
  const EditResult wrapped = edit(text, kCodex, wrap_request());
  CHECK(wrapped.text ==
        "# mine\n[mcp_servers.a]\ncommand = \"/usr/bin/ctxguard\"\n"
        "args = [\"--\", \"x\"]\n");
  CHECK(edit(wrapped.text, kCodex, kUnwrap, text).text == text);
  // Without the backup, an `args` that ends up empty is left out.
  CHECK(edit(wrapped.text, kCodex, kUnwrap).text == "# mine\n[mcp_servers.a]\ncommand = \"x\"\n");
}

TEST_CASE("config edit: a TOML error quoting a line break is still one line") {
  // Found by config_edit_fuzz: toml++ quotes what it saw ("saw 'i\n'").
  const auto broken =
      edit_config("[mcp_servers.a]\ncommand = i\n", kCodex, wrap_request(), std::nullopt);
  REQUIRE_FALSE(broken.has_value());
  const std::string& reason = broken.error().message;
  CHECK(reason.rfind("not valid TOML at line 2, column ", 0) == 0);
  CHECK(reason.find('\n') == std::string::npos);
  CHECK(reason.find("\\x0a") != std::string::npos);
}
