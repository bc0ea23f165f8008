// The resolved configuration: precedence of the sources, per-tool rules, derived defaults, the
// effective-configuration dump and the change log a reload prints.
#include <catch2/catch.hpp>

#include <string>
#include <variant>
#include <vector>

#include "config/config_file.hpp"
#include "config/profile.hpp"
#include "config/setting_table.hpp"
#include "profile_from.hpp"

using namespace ctxguard::config;

namespace {

ConfigFile file_of(std::string_view yaml) {
  auto parsed = parse_config(yaml);
  if (!parsed) FAIL(parsed.error().messages.front());
  return *std::move(parsed);
}

SettingValue value(std::string_view key, std::string text) {
  const SettingSpec* spec = find_setting(key);
  REQUIRE(spec != nullptr);
  auto read = read_setting_value(*spec, text, key);
  REQUIRE(read.has_value());
  return *std::move(read);
}

ProfilePtr built(const ConfigSources& sources, const Profile* running = nullptr) {
  auto result = Profile::build(sources, running);
  if (!result) FAIL(result.error().messages.front());
  return *std::move(result);
}

std::vector<std::string> problems(const ConfigSources& sources) {
  auto result = Profile::build(sources);
  REQUIRE_FALSE(result.has_value());
  return result.error().messages;
}

ProfilePtr from_yaml(std::string_view yaml) { return testing::profile_from(yaml); }

}  // namespace

TEST_CASE("profile: defaults < file < environment < command line, each value with its source") {
  ConfigSources sources;
  sources.file_path.emplace("ctxguard.yaml");
  sources.file = file_of("tokenBudget: 8000\npageSize: 20\nmaxPageSize: 150\ntables: true\n");
  sources.environment = {value("pageSize", "30"), value("maxPageSize", "120")};
  sources.command_line = {value("maxPageSize", "100")};
  const ProfilePtr profile = built(sources);
  const BudgetSettings& global = profile->global();
  CHECK(global.token_budget == 8000);  // file
  CHECK(global.page_size == 30);       // environment over file
  CHECK(global.max_page_size == 100);  // flag over environment over file
  CHECK(global.summary.tables);        // file
  CHECK(global.hard_cap == 12000);     // default

  const std::string dump = profile->describe();
  CHECK_THAT(dump, Catch::Contains("tokenBudget: 8000") && Catch::Contains("# file"));
  CHECK_THAT(dump, Catch::Contains("pageSize: 30") && Catch::Contains("# environment"));
  CHECK_THAT(dump, Catch::Contains("maxPageSize: 100") && Catch::Contains("# command line"));
  CHECK_THAT(dump, Catch::Contains("(file ctxguard.yaml)"));
}

TEST_CASE("profile: derived defaults follow the budget only when no source set them") {
  ConfigSources sources;
  sources.command_line = {value("tokenBudget", "20000")};
  CHECK(built(sources)->global().hard_cap == 60000);
  sources.command_line = {value("tokenBudget", "1000")};
  CHECK(built(sources)->global().summary.chunk_tokens == 500);
  CHECK_THAT(built(sources)->describe(),
             Catch::Contains("chunkSize: 500") && Catch::Contains("# derived"));
  // Set anywhere, a value is taken as given and checked.
  sources.file = file_of("hardCap: 15000\n");
  sources.command_line = {value("tokenBudget", "20000")};
  const auto errors = problems(sources);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0] ==
        "hardCap: 15000 is below tokenBudget 20000 (hardCap: from the file; tokenBudget: from "
        "--token-budget).");
}

TEST_CASE("profile: per-tool rules, first match wins, over any global source") {
  ConfigSources sources;
  sources.file = file_of(R"(
pageSize: 40
tools:
  - match: "list_*"
    pageSize: 100
    maxPageSize: 300
    fields: [id, status, guest.name]
  - match: list_bookings
    pageSize: 5
  - match: get_analytics
    summarization: false
    tokenBudget: 20000
  - match: "beta_?"
    mode: observe
)");
  sources.command_line = {value("pageSize", "25")};
  const ProfilePtr profile = built(sources);
  CHECK(profile->for_tool("list_bookings").page_size == 100);  // the first rule matches first
  CHECK(profile->for_tool("list_bookings").max_page_size == 300);
  CHECK(profile->for_tool("read_file").page_size == 25);  // no rule: the flag
  const auto& projections = profile->for_tool("list_users").summary.projections;
  REQUIRE(projections.size() == 1);
  CHECK(projections[0].tool_glob == "list_*");
  CHECK(projections[0].fields == std::vector<std::string>{"id", "status", "guest.name"});
  CHECK(profile->for_tool("read_file").summary.projections.empty());
  // A rule's budget brings its own derived cap (no source set hardCap).
  CHECK_FALSE(profile->for_tool("get_analytics").summarization);
  CHECK(profile->for_tool("get_analytics").hard_cap == 60000);
  CHECK(profile->for_tool("get_analytics").page_size == 25);  // not overridden: the global
  CHECK(profile->observes("beta_x"));
  CHECK_FALSE(profile->observes("beta_xy"));
  CHECK(profile->enforces_any());
  CHECK(profile->largest_max_page_size() == 300);
  // A --project flag outranks the file's fields for the same tool.
  sources.base.budget.summary.projections = {ProjectionRule{"list_bookings", {"id"}}};
  const ProfilePtr flagged = built(sources);
  const auto& ranked = flagged->for_tool("list_bookings").summary.projections;
  REQUIRE(ranked.size() == 2);
  CHECK(ranked[0].fields == std::vector<std::string>{"id"});
}

TEST_CASE("profile: the estimator margin lowers the budget the pipeline plans with") {
  const ProfilePtr profile =
      from_yaml("estimatorMargin: 20\ntools:\n  - match: x\n    estimatorMargin: 0\n");
  CHECK(profile->global().token_budget == 4000);  // as configured
  CHECK(profile->for_tool("any").token_budget == 3333);
  CHECK(profile->for_tool("any").hard_cap == 10000);
  CHECK(profile->for_tool("x").token_budget == 4000);
}

TEST_CASE("profile: conflicts inside rules are named with the rule") {
  ConfigSources sources;
  sources.file = file_of("tools:\n  - match: x\n    pageSize: 201\n    hardCap: 200\n");
  const std::vector<std::string> expected{"tools[0].pageSize: 201 is above maxPageSize 200.",
                                          "tools[0].hardCap: 200 is below tokenBudget 4000."};
  CHECK(problems(sources) == expected);
}

TEST_CASE("profile: the effective configuration reads back as the same configuration") {
  const ProfilePtr profile = from_yaml(R"(
mode: observe
tokenBudget: 6000
cacheSize: 64M
cursorTtl: 90
tools:
  - match: "read_*"
    chunkSize: 2500
    mode: enforce
  - match: "say \"hi\""
    fields: [id, "guest.name"]
)");
  const ProfilePtr again = from_yaml(profile->describe());
  CHECK(again->changes_from(*profile).empty());
  CHECK(profile->changes_from(*again).empty());
  CHECK(again->observes("other"));
  CHECK_FALSE(again->observes("read_me"));
  CHECK(again->for_tool("say \"hi\"").summary.projections.at(0).fields ==
        std::vector<std::string>{"id", "guest.name"});
}

TEST_CASE("profile: a rule's derived values are in the effective configuration, so it reads back") {
  // Found by tests/fuzz/config_fuzz: a rule that lowers tokenBudget gets half of it as its chunk
  // size (derived); the output listed only the rule's own keys, and read back the global
  // `chunkSize: 2000` (now set) applied to the rule, above its budget: the file was refused.
  const ProfilePtr profile = from_yaml(R"(
tools:
  - match: small
    tokenBudget: 300
  - match: large
    tokenBudget: 20000
)");
  REQUIRE(profile->for_tool("small").summary.chunk_tokens == 150);
  REQUIRE(profile->for_tool("large").hard_cap == 60000);
  const std::string described = profile->describe();
  CHECK_THAT(described, Catch::Contains("    chunkSize: 150  # derived") &&
                            Catch::Contains("    hardCap: 60000  # derived"));
  const ProfilePtr again = from_yaml(described);
  CHECK(again->changes_from(*profile).empty());
  CHECK(profile->changes_from(*again).empty());
  for (const char* tool : {"small", "large", "other"}) {
    INFO(tool);
    CHECK(again->for_tool(tool).summary.chunk_tokens ==
          profile->for_tool(tool).summary.chunk_tokens);
    CHECK(again->for_tool(tool).hard_cap == profile->for_tool(tool).hard_cap);
  }
}

TEST_CASE("profile: a reload's changes, one line each with old and new values") {
  const ProfilePtr before = from_yaml(R"(
tokenBudget: 4000
tools:
  - match: "read_*"
    chunkSize: 1000
  - match: gone
    pageSize: 10
)");
  const ProfilePtr after = from_yaml(R"(
tokenBudget: 8000
tools:
  - match: "read_*"
    chunkSize: 1500
  - match: fresh
    search: false
)");
  const std::vector<std::string> expected{
      "tokenBudget: 4000 -> 8000",
      "tools \"read_*\".chunkSize: 1000 -> 1500",
      "tools \"fresh\": added",
      "tools \"gone\": removed",
  };
  CHECK(after->changes_from(*before) == expected);
  CHECK(before->changes_from(*before).empty());
}

TEST_CASE("profile: a reload keeps start-up settings and says so") {
  const ProfilePtr running = from_yaml("cursorTtl: 600\ncacheSize: 256M\n");
  ConfigSources sources;
  sources.file = file_of("cursorTtl: 60\ncacheSize: 64M\n");
  const ProfilePtr next = built(sources, running.get());
  CHECK(next->process().cursor_ttl == std::chrono::seconds(600));
  CHECK(next->process().cache_bytes == std::size_t{64} << 20);  // the cache is resized instead
  REQUIRE(next->notes().size() == 1);
  CHECK(next->notes()[0] ==
        "cursorTtl: 600s -> 60s takes effect at the next start; 600s stays in force");
}

TEST_CASE("config file: read from disk, with the path in every problem") {
  auto missing = read_config_file("/nonexistent/ctxguard.yaml");
  REQUIRE_FALSE(missing.has_value());
  CHECK_THAT(missing.error().messages.at(0),
             Catch::StartsWith("/nonexistent/ctxguard.yaml: cannot read it"));

  ConfigSources sources;
  sources.file_path = CTXGUARD_SOURCE_DIR "/config/ctxguard.yaml";
  auto loaded = load_profile(sources);
  REQUIRE(loaded.has_value());
  CHECK((*loaded)->global().token_budget == 4000);
}

TEST_CASE("profile: a file settles what variables and flags alone would contradict") {
  ConfigSources sources;
  sources.environment = {value("pageSize", "500")};
  CHECK_FALSE(problems(sources).empty());  // with the default maxPageSize 200
  sources.file = file_of("maxPageSize: 1000\n");
  CHECK(built(sources)->global().page_size == 500);
}

TEST_CASE("profile: a rule reports its own conflicts, never the globals' again") {
  ConfigSources sources;
  sources.file = file_of(R"(
pageSize: 500
tools:
  - match: a
    tables: true
  - match: b
    tokenBudget: 1000
    chunkSize: 1500
)");
  const std::vector<std::string> expected{
      "pageSize: 500 is above maxPageSize 200 (pageSize: from the file; maxPageSize: the "
      "default).",
      "tools[1].chunkSize: 1500 is above tokenBudget 1000: a chunk must fit in one answer."};
  CHECK(problems(sources) == expected);
}

TEST_CASE("profile: a rule derives from the sources' values, not from the globals' derived ones") {
  const ProfilePtr profile = from_yaml(R"(
tokenBudget: 3000
tools:
  - match: big
    tokenBudget: 8000
  - match: small
    tokenBudget: 200
)");
  CHECK(profile->global().summary.chunk_tokens == 1500);         // half of 3000
  CHECK(profile->for_tool("big").summary.chunk_tokens == 2000);  // the default fits 8000
  CHECK(profile->for_tool("big").hard_cap == 12000);
  CHECK(profile->for_tool("small").summary.chunk_tokens == 100);
  // Rules match tool names; resources/read gets the global settings.
  const ProfilePtr everything = from_yaml("tools:\n  - match: \"*\"\n    chunking: false\n");
  CHECK_FALSE(everything->for_tool("read_file").chunking);
  CHECK(everything->for_resources().chunking);
}

TEST_CASE("profile: a client's preset tightens its limits, an unknown client gets the globals") {
  ConfigSources sources;
  const ProfilePtr profile = built(sources);
  // VS Code (and its Insiders build) and Cline: characters; Copilot CLI: bytes.
  REQUIRE(profile->for_call("Visual Studio Code", "read").max_chars == 8000);
  REQUIRE(profile->for_call("Visual Studio Code - Insiders", "read").max_chars == 8000);
  REQUIRE(profile->for_call("Cline", "read").max_chars == 8000);
  REQUIRE(profile->for_call("github-copilot-developer", "read").max_bytes == 10000);
  REQUIRE(profile->for_call("codex-mcp-client", "read").max_json_bytes == 12000);
  // Claude Code: characters of the text, and structuredContent as JSON when it shows that.
  REQUIRE(profile->for_call("claude-code", "read").max_chars == 50000);
  REQUIRE(profile->for_call("claude-code", "read").max_json_bytes == 50000);
  // A client no preset names, and a client that gave no name, get the global settings.
  for (const std::string_view client : {"some-new-client", ""}) {
    const BudgetSettings& budget = profile->for_call(client, "read");
    REQUIRE(budget.max_chars == 0);
    REQUIRE(budget.max_bytes == 0);
    REQUIRE(budget.token_budget == 4000);
  }
}

TEST_CASE("profile: the stricter of a preset and the user's limit wins; a clients rule decides") {
  ConfigSources sources;
  // The documented default file spells out maxChars: 0, which must not switch presets off.
  sources.file = file_of(
      "maxChars: 0\n"
      "maxBytes: 9000\n"
      "tokenBudget: 3000\n"
      "clients:\n"
      "  - match: Cline\n"
      "    maxChars: 20000\n"
      "  - match: my-agent*\n"
      "    maxLines: 400\n"
      "tools:\n"
      "  - match: big_*\n"
      "    tokenBudget: 6000\n");
  sources.command_line.push_back(value("pageSize", "20"));
  const ProfilePtr profile = built(sources);
  // VS Code: its preset's 8,000 characters; the file's 9,000 bytes; the flag's page size.
  const BudgetSettings& vscode = profile->for_call("Visual Studio Code", "read");
  REQUIRE(vscode.max_chars == 8000);
  REQUIRE(vscode.max_bytes == 9000);
  REQUIRE(vscode.page_size == 20);
  REQUIRE(vscode.token_budget == 3000);
  // Copilot CLI: its 10,000 bytes are looser than the file's 9,000: the file's stand.
  REQUIRE(profile->for_call("github-copilot-developer", "read").max_bytes == 9000);
  // A clients rule overrides the preset, either way.
  REQUIRE(profile->for_call("Cline", "read").max_chars == 20000);
  REQUIRE(profile->for_call("my-agent-2", "read").max_lines == 400);
  // A tool rule applies within the client's settings.
  const BudgetSettings& big = profile->for_call("Visual Studio Code", "big_dump");
  REQUIRE(big.token_budget == 6000);
  REQUIRE(big.max_chars == 8000);
  // The global settings are the same as before any client.
  REQUIRE(profile->for_tool("read").max_chars == 0);
  // The dump shows the rules and the presets, and reads back.
  const std::string dump = profile->describe();
  REQUIRE(dump.find("clients:") != std::string::npos);
  REQUIRE(dump.find("  - match: \"Cline\"\n    maxChars: 20000\n") != std::string::npos);
  REQUIRE(dump.find("\"Visual Studio Code*\" (VS Code): maxChars: 8000") != std::string::npos);
  REQUIRE(parse_config(dump).has_value());
}

TEST_CASE("profile: client rules are checked like tool rules, and their changes are logged") {
  ConfigSources sources;
  sources.file = file_of("clients:\n  - match: Cline\n    maxChars: 500\n");
  const std::vector<std::string> found = problems(sources);
  REQUIRE(found.size() == 1);
  REQUIRE(found.front().find("clients[0].maxChars: 500 is too small") != std::string::npos);

  auto parsed = parse_config("clients:\n  - maxChars: 9000\n  - match: x\n    fields: [id]\n");
  REQUIRE_FALSE(parsed.has_value());
  const std::vector<std::string> errors = parsed.error().messages;
  REQUIRE(errors.at(0) == "clients[0]: `match` is missing: which clients does this rule apply to?");
  REQUIRE(errors.at(1).rfind("clients[1].fields: unknown setting.", 0) == 0);

  ConfigSources before;
  before.file = file_of("clients:\n  - match: Cline\n    maxChars: 9000\n");
  ConfigSources after;
  after.file = file_of("clients:\n  - match: Cline\n    maxChars: 12000\n");
  const std::vector<std::string> changes = built(after)->changes_from(*built(before));
  REQUIRE(changes == std::vector<std::string>{
                         "clients: [\"Cline\" maxChars=9000] -> [\"Cline\" maxChars=12000]"});
}

TEST_CASE("profile: a clients rule may enforce where the global settings observe") {
  ConfigSources sources;
  sources.file = file_of("mode: observe\nclients:\n  - match: Cline\n    mode: enforce\n");
  const ProfilePtr profile = built(sources);
  CHECK(profile->for_call("some-client", "read").observe);
  CHECK_FALSE(profile->for_call("Cline", "read").observe);
  // So ctxguard_fetch and the instructions are offered.
  CHECK(profile->enforces_any());
  sources.file = file_of("mode: observe\n");
  CHECK_FALSE(built(sources)->enforces_any());
}
