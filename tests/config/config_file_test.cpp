// The settings table and the YAML file: every source parses values the same way, and every
// problem is named with its key path, its value and what is allowed.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <variant>

#include "config/config_file.hpp"
#include "config/setting_table.hpp"

using namespace ctxguard::config;

namespace {

TunedSettings with(std::string_view key, std::string_view text) {
  TunedSettings tuned;
  const SettingSpec* spec = find_setting(key);
  REQUIRE(spec != nullptr);
  REQUIRE(parse_setting(*spec, text, key, tuned).has_value());
  return tuned;
}

std::string problem(std::string_view key, std::string_view text) {
  TunedSettings budget;
  const SettingSpec* spec = find_setting(key);
  REQUIRE(spec != nullptr);
  auto parsed = parse_setting(*spec, text, key, budget);
  REQUIRE_FALSE(parsed.has_value());
  return parsed.error().message;
}

std::vector<std::string> errors_of(std::string_view yaml) {
  auto parsed = parse_config(yaml);
  REQUIRE_FALSE(parsed.has_value());
  return parsed.error().messages;
}

}  // namespace

TEST_CASE("setting table: every setting has unique names and its default inside its range") {
  const TunedSettings defaults;
  for (const SettingSpec& spec : setting_table()) {
    INFO(spec.key);
    CHECK(find_setting(spec.key) == &spec);
    CHECK(spec.env.starts_with("CTXGUARD_"));
    const std::uint64_t scale = spec.kind == SettingKind::kSeconds ? 1000 : 1;
    CHECK(spec.get(defaults) >= spec.min * scale);
    CHECK(spec.get(defaults) <= spec.max * scale);
    // What format_setting writes parses back to the same value.
    TunedSettings copy;
    REQUIRE(parse_setting(spec, format_setting(spec, defaults), spec.key, copy));
    CHECK(spec.get(copy) == spec.get(defaults));
  }
  CHECK(check_setting_rules(defaults.budget, "").empty());
}

TEST_CASE("setting values: numbers, sizes, seconds and switches") {
  CHECK(with("tokenBudget", "8000").budget.token_budget == 8000);
  CHECK(with("cacheSize", "512M").process.cache_bytes == std::size_t{512} << 20);
  CHECK(with("cacheSize", "2G").process.cache_bytes == std::size_t{2} << 30);
  CHECK(with("cursorTtl", "90").process.cursor_ttl == std::chrono::seconds(90));
  CHECK(with("cursorTtl", "1.5s").process.cursor_ttl ==
        std::chrono::seconds(2));  // whole seconds, up
  CHECK_FALSE(with("tables", "false").budget.summary.tables);
  CHECK(with("tables", "on").budget.summary.tables);
  CHECK(with("tables", "True").budget.summary.tables);  // YAML 1.1 spellings
  CHECK_FALSE(with("pagination", "FALSE").budget.pagination);
  CHECK_FALSE(with("projection", "no").budget.summary.project);
  CHECK(with("maxString", "0").budget.summary.max_string_chars == 0);
  CHECK(with("mode", "observe").budget.observe);
  CHECK_FALSE(with("mode", "enforce").budget.observe);
  CHECK_FALSE(with("pagination", "off").budget.pagination);
  CHECK(with("estimatorMargin", "20").budget.estimator_margin_percent == 20);
  CHECK(with("toolList", "lazy").process.tool_list == ctxguard::config::ToolListMode::kLazy);
  CHECK(with("toolList", "compact").process.tool_list == ctxguard::config::ToolListMode::kCompact);
  CHECK(with("toolList", "full").process.tool_list == ctxguard::config::ToolListMode::kFull);

  CHECK(problem("tokenBudget", "lots") ==
        "tokenBudget: lots is not allowed: it must be a whole number from 100 to 10000000.");
  CHECK(problem("tokenBudget", "-5").find("from 100") != std::string::npos);
  CHECK(problem("pageSize", "0").find("pageSize: 0 is not allowed") == 0);
  CHECK(problem("cacheSize", "12T").find("K, M or G") != std::string::npos);
  CHECK(problem("tables", "maybe") == "tables: maybe is not allowed: it must be true or false.");
  CHECK(problem("maxDepth", "65").find("from 0 to 64") != std::string::npos);
  CHECK(problem("cursorTtl", "").find("an empty value") != std::string::npos);
  CHECK(problem("mode", "Observe") ==
        "mode: Observe is not allowed: it must be enforce or observe.");
  CHECK(problem("toolList", "small") ==
        "toolList: small is not allowed: it must be full, compact or lazy.");
  CHECK(problem("estimatorMargin", "60").find("from 0 to 50") != std::string::npos);
}

TEST_CASE("setting rules: settings that contradict each other are named") {
  BudgetSettings budget;
  budget.page_size = 500;
  CHECK(check_setting_rules(budget, "tools[1]").at(0).message ==
        "tools[1].pageSize: 500 is above maxPageSize 200");
  budget = BudgetSettings{};
  budget.hard_cap = 1000;
  CHECK(check_setting_rules(budget, "")
            .at(0)
            .message.find("hardCap: 1000 is below tokenBudget 4000") == 0);
  budget = BudgetSettings{};
  budget.summary.chunk_tokens = 5000;
  CHECK(
      check_setting_rules(budget, "").at(0).message.find("chunkSize: 5000 is above tokenBudget") ==
      0);
}

TEST_CASE("config file: globals, mode and ordered per-tool rules") {
  auto parsed = parse_config(R"(
mode: observe
tokenBudget: 8000
cacheSize: 512M
tools:
  - match: "read_*"
    chunkSize: 4000
  - match: list_bookings
    pageSize: 100
    fields: [id, status, guest.name]
  - match: get_analytics
    maxString: 0
    projection: false
)");
  REQUIRE(parsed.has_value());
  const ConfigFile& file = (*parsed);
  REQUIRE(file.settings.size() == 3);
  CHECK(file.settings[0].spec->key == "mode");
  CHECK(file.settings[0].text == "observe");
  CHECK(file.settings[1].spec->key == "tokenBudget");
  CHECK(file.settings[1].text == "8000");
  REQUIRE(file.tools.size() == 3);
  CHECK(file.tools[0].glob == "read_*");
  CHECK(file.tools[0].overrides.at(0).spec->key == "chunkSize");
  CHECK(file.tools[1].fields == std::vector<std::string>{"id", "status", "guest.name"});
  CHECK(file.tools[2].overrides.size() == 2);

  // An empty file is the defaults.
  REQUIRE(parse_config("").has_value());
  CHECK((*parse_config("")).settings.empty());
}

TEST_CASE("config file: every problem is reported with its key path") {
  const auto errors = errors_of(R"(
tokenBudgte: 4000
pageSize: lots
mode: fast
tools:
  - match: "read_*"
    pageSize: [1, 2]
  - chunkSize: 3000
  - match: list
    fields: id
    colour: blue
  - match: big
    cacheSize: 1G
)");
  const std::vector<std::string> expected{
      "tokenBudgte: unknown setting. Did you mean tokenBudget?",
      "pageSize: lots is not allowed: it must be a whole number from 1 to 100000.",
      "mode: fast is not allowed: it must be enforce or observe.",
      "tools[0].pageSize: must be a single value, not a list or a map.",
      "tools[1]: `match` is missing: which tools does this rule apply to?",
      "tools[2].fields: must be a list of field names, e.g. [id, status].",
      "tools[2].colour: unknown setting. Known keys: mode, tokenBudget, hardCap, maxChars, "
      "maxBytes, maxLines, maxJsonBytes, estimatorMargin, pageSize, maxPageSize, chunkSize, "
      "maxString, maxDepth, pagination, "
      "summarization, projection, chunking, search, tables, fields, match.",
      "tools[3].cacheSize: applies to the whole process (one cache and one cursor lifetime for "
      "all tools), so it cannot be set per tool; set it at the top level.",
  };
  CHECK(errors == expected);

  const auto syntax = errors_of("tokenBudget: [1,\n");
  REQUIRE(syntax.size() == 1);
  CHECK(syntax[0].starts_with("line "));
  CHECK(errors_of("tokenBudget:\n") ==
        std::vector<std::string>{"tokenBudget: no value given: it must be a whole number from "
                                 "100 to 10000000."});
  REQUIRE(parse_config("tools:\n").has_value());
  CHECK(errors_of("tokenBudget: 4000\npageSize: 10\ntokenBudget: 8000\n") ==
        std::vector<std::string>{"tokenBudget: given twice (line 3): which one is meant?"});
  CHECK(
      errors_of("tools:\n  - match: a\n    pageSize: 1\n    pageSize: 2\n") ==
      std::vector<std::string>{"tools[0].pageSize: given twice in one rule: which one is meant?"});
  CHECK(errors_of("- just\n- a list\n") ==
        std::vector<std::string>{"the file must be a map of settings."});
}

TEST_CASE("config file: a key that is a list or a map is a problem and not an exception") {
  // Legal YAML (complex keys), found by tests/fuzz/config_fuzz: yaml-cpp throws when such a key
  // is read as a string, and the reload would have died on it.
  CHECK(errors_of("? [a, b]\n: 1\ntokenBudget: 4000\n") ==
        std::vector<std::string>{"line 1: a key must be a setting's name, not a list or a map."});
  CHECK(errors_of("{a: 1}: 2\n") ==
        std::vector<std::string>{"line 1: a key must be a setting's name, not a list or a map."});
  CHECK(errors_of("tools:\n  - match: x\n    ? [pageSize]\n    : 10\n") ==
        std::vector<std::string>{
            "tools[0]: line 3: a key must be a setting's name, not a list or a map."});
}

TEST_CASE("config/ctxguard.yaml: every setting, each at its built-in default") {
  std::ifstream in(CTXGUARD_SOURCE_DIR "/config/ctxguard.yaml");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = parse_config(text.str());
  REQUIRE(parsed.has_value());
  const ConfigFile& file = (*parsed);
  CHECK(file.tools.empty());
  const TunedSettings defaults;
  std::set<std::string_view> listed;
  for (const SettingValue& value : file.settings) {
    INFO(value.spec->key);
    TunedSettings parsed_value;
    REQUIRE(parse_setting(*value.spec, value.text, value.spec->key, parsed_value));
    CHECK(value.spec->get(parsed_value) == value.spec->get(defaults));
    listed.insert(value.spec->key);
  }
  CHECK(listed.size() == setting_table().size());
}
