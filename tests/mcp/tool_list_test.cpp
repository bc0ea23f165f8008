#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "../config/profile_from.hpp"
#include "documented.hpp"
#include "mcp/tool_list.hpp"

namespace json = boost::json;
using ctxguard::mcp::ToolListEditor;

namespace {

json::object tool(const char* name) {
  return json::object{{"name", name},
                      {"inputSchema", json::object{{"type", "object"}}},
                      {"outputSchema", json::object{{"type", "object"}}}};
}

}  // namespace

TEST_CASE("tool list: outputSchema is removed and ctxguard_fetch appended last") {
  const auto profile = ctxguard::config::Profile::of({});
  ToolListEditor editor;
  json::object result{{"tools", json::array{tool("read"), tool("list")}}};
  const auto edit = editor.edit(result, *profile);
  REQUIRE(edit.changed);
  REQUIRE(edit.output_schemas_removed == 2);
  const auto& tools = result.at("tools").as_array();
  REQUIRE(tools.size() == 3);
  for (const json::value& each : tools) REQUIRE_FALSE(each.as_object().contains("outputSchema"));
  const auto& fetch = tools.back().as_object();
  REQUIRE(fetch.at("name").as_string() == "ctxguard_fetch");
  REQUIRE(fetch.at("inputSchema").at("required").as_array() == json::array{"cursor"});
  REQUIRE(fetch.at("inputSchema").at("properties").at("limit").at("maximum").as_uint64() == 200);
  // The answers' hints say how to call it: the definition points there.
  REQUIRE(fetch.at("description").as_string().find("_ctxguard.hint") != json::string::npos);
  REQUIRE(fetch.at("annotations").at("readOnlyHint").as_bool());
}

TEST_CASE("tool list: with pages, ctxguard_fetch comes only on the last page") {
  const auto profile = ctxguard::config::Profile::of({});
  ToolListEditor editor;
  json::object first{{"tools", json::array{tool("a")}}, {"nextCursor", "page2"}};
  editor.edit(first, *profile);
  REQUIRE(first.at("tools").as_array().size() == 1);
  json::object last{{"tools", json::array{tool("b")}}};
  editor.edit(last, *profile);
  REQUIRE(last.at("tools").as_array().back().at("name").as_string() == "ctxguard_fetch");
}

TEST_CASE("tool list: a server tool named ctxguard_fetch makes ours take the prefix") {
  const auto profile = ctxguard::config::Profile::of({});
  ToolListEditor editor;
  json::object first{{"tools", json::array{tool("ctxguard_fetch")}}, {"nextCursor", "2"}};
  editor.edit(first, *profile);
  json::object last{{"tools", json::array{tool("other")}}};
  const auto edit = editor.edit(last, *profile);
  REQUIRE(edit.name_collision);
  REQUIRE(editor.fetch_tool_name() == "proxy_ctxguard_fetch");
  REQUIRE(last.at("tools").as_array().back().at("name").as_string() == "proxy_ctxguard_fetch");
  // A later listing without the clash gives the plain name back.
  json::object again{{"tools", json::array{tool("other")}}};
  editor.edit(again, *profile);
  REQUIRE(editor.fetch_tool_name() == "ctxguard_fetch");
}

TEST_CASE("tool list: a result without a tools array is left alone") {
  const auto profile = ctxguard::config::Profile::of({});
  ToolListEditor editor;
  json::object odd{{"tools", "none"}};
  REQUIRE_FALSE(editor.edit(odd, *profile).changed);
}

using ctxguard::config::testing::profile_from;

TEST_CASE("tool list: observed tools keep their outputSchema; all observed, nothing changes") {
  ToolListEditor editor;
  const auto some = profile_from("tools:\n  - match: \"beta_*\"\n    mode: observe\n");
  json::object result{{"tools", json::array{tool("beta_search"), tool("list")}}};
  const auto edit = editor.edit(result, *some);
  CHECK(edit.output_schemas_removed == 1);
  const auto& tools = result.at("tools").as_array();
  REQUIRE(tools.size() == 3);
  CHECK(tools[0].as_object().contains("outputSchema"));
  CHECK_FALSE(tools[1].as_object().contains("outputSchema"));

  const auto all = profile_from("mode: observe\n");
  json::object untouched{{"tools", json::array{tool("beta_search"), tool("list")}}};
  const json::object before = untouched;
  CHECK_FALSE(editor.edit(untouched, *all).changed);
  CHECK(untouched == before);

  // A rule that enforces one tool under a global observe brings ctxguard_fetch back, with the
  // largest maxPageSize any tool allows.
  const auto one = profile_from(
      "mode: observe\ntools:\n  - match: list\n    mode: enforce\n    maxPageSize: 500\n");
  json::object listed{{"tools", json::array{tool("beta_search"), tool("list")}}};
  CHECK(editor.edit(listed, *one).fetch_tool_added);
  CHECK(listed.at("tools")
            .as_array()
            .back()
            .at("inputSchema")
            .at("properties")
            .at("limit")
            .at("maximum") == 500);
}

TEST_CASE("tool list: for Claude Code every bounded tool says how large its results may be") {
  const auto profile = profile_from(
      "hardCap: 12000\ntools:\n  - match: big\n    hardCap: 30000\n  - match: watched\n"
      "    mode: observe\n");
  ToolListEditor editor;
  json::object annotated = tool("plain");
  annotated["_meta"] = json::object{{"vendor/x", 1}};
  json::object result{
      {"tools", json::array{annotated, tool("big"), tool("watched"), tool("generous")}}};
  result.at("tools").as_array()[3].as_object()["_meta"] =
      json::object{{"anthropic/maxResultSizeChars", 400000}};
  const auto edit = editor.edit(result, *profile, ctxguard::mcp::kClaudeCodeClient);
  REQUIRE(edit.changed);
  CHECK(edit.size_hints == 4);  // plain, big, generous and ctxguard_fetch
  const auto& tools = result.at("tools").as_array();
  const auto hint = [&](std::size_t index) {
    return tools[index].at("_meta").at("anthropic/maxResultSizeChars").to_number<std::int64_t>();
  };
  CHECK(hint(0) == 72000);                              // 12,000 tokens × 6
  CHECK(tools[0].at("_meta").at("vendor/x") == 1);      // the server's _meta is kept
  CHECK(hint(1) == 180000);                             // its own hard cap
  CHECK_FALSE(tools[2].as_object().contains("_meta"));  // observed: passes untouched
  CHECK(hint(3) == 400000);                             // a larger hint of the server's stays
  CHECK(tools[4].at("name").as_string() == "ctxguard_fetch");
  CHECK(hint(4) == 180000);                                  // the largest hard cap
  CHECK(ctxguard::mcp::max_result_chars(1000) == 50000);     // never below Claude Code's default
  CHECK(ctxguard::mcp::max_result_chars(200000) == 500000);  // nor above what it accepts
}

TEST_CASE("tool list: other clients, or none named, get no size hints") {
  const auto profile = ctxguard::config::Profile::of({});
  for (const std::string_view client : {"", "codex-mcp-client", "claude-ai", "Claude-Code"}) {
    ToolListEditor editor;
    json::object result{{"tools", json::array{tool("read")}}};
    const auto edit = editor.edit(result, *profile, client);
    CHECK(edit.size_hints == 0);
    for (const json::value& each : result.at("tools").as_array()) {
      CHECK_FALSE(each.as_object().contains("_meta"));
    }
  }
}

TEST_CASE("tool list: a tool whose name comes after its outputSchema is still recognised") {
  // Erasing outputSchema moves the members after it; the name must be read before.
  const auto profile = ctxguard::config::Profile::of({});
  ToolListEditor editor;
  json::object late{{"inputSchema", json::object{}},
                    {"outputSchema", json::object{}},
                    {"name", "ctxguard_fetch"}};
  json::object result{{"tools", json::array{late}}};
  const auto edit = editor.edit(result, *profile, ctxguard::mcp::kClaudeCodeClient);
  CHECK(edit.name_collision);
  CHECK(edit.size_hints == 2);
  CHECK(result.at("tools").as_array().back().at("name") == "proxy_ctxguard_fetch");
}

namespace {

// A tool with the noise compact mode removes and a long description.
json::object noisy_tool(const std::string& name) {
  return json::object{
      {"name", name},
      {"description",
       "Does " + name + " well. X" + std::string(190, 'x') + ". " + "Another sentence, cut."},
      {"inputSchema",
       json::object{
           {"$schema", "http://json-schema.org/draft-07/schema#"},
           {"type", "object"},
           {"properties", json::object{{"id", json::object{{"type", "string"}, {"title", "Id"}}}}},
           {"required", json::array{"id"}}}}};
}

}  // namespace

TEST_CASE("tool list compact: the tools written shorter, ctxguard_fetch offers `tool`") {
  ToolListEditor editor;
  const auto profile = profile_from("toolList: compact\n");
  json::object result{{"tools", json::array{noisy_tool("alpha"), noisy_tool("beta")}}};
  const auto edit = editor.edit(result, *profile);
  CHECK(edit.changed);
  CHECK(edit.compaction.keywords_removed == 4);
  CHECK(edit.compaction.description_shortened);
  const auto& tools = result.at("tools").as_array();
  REQUIRE(tools.size() == 3);
  const auto& alpha = tools.at(0).as_object();
  CHECK(
      alpha.at("inputSchema") ==
      json::parse(R"({"type":"object","properties":{"id":{"type":"string"}},"required":["id"]})"));
  CHECK(std::string(alpha.at("description").as_string()).ends_with(" …"));
  const auto& fetch = tools.back().as_object();
  CHECK(fetch.at("inputSchema").at("properties").as_object().contains("tool"));
  CHECK_FALSE(fetch.at("inputSchema").as_object().contains("required"));
  // The catalog keeps the definitions as the server sent them.
  REQUIRE(editor.catalog().find("alpha") != nullptr);
  CHECK(editor.catalog().find("alpha")->definition == noisy_tool("alpha"));
}

TEST_CASE("tool list lazy: pages keep their cursor, ctxguard's tools come on the last") {
  ToolListEditor editor;
  const auto profile = profile_from("toolList: lazy\n");
  json::object first{{"tools", json::array{tool("a"), tool("b")}}, {"nextCursor", "2"}};
  const auto first_edit = editor.edit(first, *profile);
  CHECK(first_edit.tools_hidden == 2);
  CHECK(first.at("tools").as_array().empty());
  CHECK(first.at("nextCursor") == "2");
  json::object last{{"tools", json::array{tool("c")}}};
  editor.edit(last, *profile);
  std::vector<std::string> names;
  for (const auto& each : last.at("tools").as_array()) {
    names.emplace_back(each.at("name").as_string());
  }
  CHECK(names ==
        std::vector<std::string>{"ctxguard_search_tools", "ctxguard_call_tool", "ctxguard_fetch"});
  CHECK(editor.lazy_listed());
  CHECK(editor.catalog().size() == 3);

  // Every tool observed: nothing to fetch, but the tools are still reached.
  ToolListEditor observed_editor;
  const auto observed = profile_from("toolList: lazy\nmode: observe\n");
  json::object only{{"tools", json::array{tool("a")}}};
  observed_editor.edit(only, *observed);
  CHECK(only.at("tools").as_array().size() == 2);
}

TEST_CASE("tool list lazy: a server tool with one of ctxguard's names makes ours prefixed") {
  ToolListEditor editor;
  const auto profile = profile_from("toolList: lazy\n");
  json::object result{{"tools", json::array{tool("ctxguard_call_tool")}}};
  const auto edit = editor.edit(result, *profile);
  CHECK(edit.name_collision);
  CHECK(edit.names.call == "proxy_ctxguard_call_tool");
  CHECK(edit.names.search == "ctxguard_search_tools");
}

TEST_CASE("tool list compact: Claude Desktop, which shows no instructions, keeps the guidance") {
  const auto profile = profile_from("toolList: compact\n");
  const std::string guidance = "Every call is logged for audit, with its arguments.";
  const auto listing = [&] {
    return json::object{{"tools", json::array{json::object{
                                      {"name", "a"}, {"description", "Does a. " + guidance}}}}};
  };
  ToolListEditor editor;
  editor.set_shared_guidance({guidance});
  json::object desktop = listing();
  editor.edit(desktop, *profile, "claude-ai");
  CHECK(std::string(desktop.at("tools").at(0).at("description").as_string()) ==
        "Does a. " + guidance);
  json::object code = listing();
  editor.edit(code, *profile, "claude-code");
  CHECK(code.at("tools").at(0).at("description") == "Does a.");
}

TEST_CASE("tool list: ctxguard_fetch is listed as docs/protocol.md 5 shows it") {
  const std::string section = ctxguard::testing::section_of(
      ctxguard::testing::documented("protocol.md"), "## 5. `ctxguard_fetch`");
  const std::size_t start = section.find("```json\n");
  REQUIRE(start != std::string_view::npos);
  const std::size_t body = start + std::string_view("```json\n").size();
  const std::string shown = section.substr(body, section.find("```", body) - body);
  CHECK(json::parse(shown) ==
        json::value(ctxguard::mcp::fetch_tool_definition("ctxguard_fetch", 200)));
}

TEST_CASE("tool list: a new configuration changes the list when modes or fetch limits change") {
  using ctxguard::mcp::lists_tools_alike;
  const auto before =
      profile_from("tokenBudget: 4000\ntools:\n  - match: \"read_*\"\n    chunkSize: 1000\n");
  const auto after =
      profile_from("tokenBudget: 8000\ntools:\n  - match: \"read_*\"\n    chunkSize: 1500\n");
  CHECK(lists_tools_alike(*after, *before, "any-client"));
  CHECK_FALSE(lists_tools_alike(*profile_from("mode: observe\n"), *before, "any-client"));
  CHECK_FALSE(lists_tools_alike(*profile_from("maxPageSize: 300\n"), *before, "any-client"));
  CHECK_FALSE(lists_tools_alike(*profile_from("toolList: compact\n"), *before, "any-client"));
  // A hard cap shows in tools/list only for a client given size hints (Claude Code).
  const auto capped = profile_from("hardCap: 9000\n");
  CHECK(lists_tools_alike(*capped, *profile_from("hardCap: 8000\n"), "any-client"));
  CHECK_FALSE(lists_tools_alike(*capped, *profile_from("hardCap: 8000\n"), "claude-code"));
  CHECK(lists_tools_alike(*capped, *profile_from("hardCap: 9000\n"), "claude-code"));
  // An observed tool keeps its outputSchema: rules with their own mode matter, in order.
  const auto shadowed =
      profile_from("tools:\n  - match: a*\n    pageSize: 5\n  - match: ab\n    mode: observe\n");
  const auto unshadowed = profile_from("tools:\n  - match: ab\n    mode: observe\n");
  CHECK_FALSE(lists_tools_alike(*shadowed, *unshadowed, "any-client"));
  CHECK(lists_tools_alike(
      *unshadowed,
      *profile_from("pageSize: 50\ntools:\n  - match: ab\n    mode: observe\n    tables: true\n"),
      "any-client"));
}
