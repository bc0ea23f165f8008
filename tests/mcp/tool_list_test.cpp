#include <catch2/catch.hpp>

#include <boost/json.hpp>

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
  ctxguard::config::BudgetSettings budget;
  ToolListEditor editor(budget);
  json::object result{{"tools", json::array{tool("read"), tool("list")}}};
  const auto edit = editor.edit(result);
  REQUIRE(edit.changed);
  REQUIRE(edit.output_schemas_removed == 2);
  const auto& tools = result.at("tools").as_array();
  REQUIRE(tools.size() == 3);
  for (const json::value& each : tools) REQUIRE_FALSE(each.as_object().contains("outputSchema"));
  const auto& fetch = tools.back().as_object();
  REQUIRE(fetch.at("name").as_string() == "ctxguard_fetch");
  REQUIRE(fetch.at("inputSchema").at("required").as_array() == json::array{"cursor"});
  REQUIRE(fetch.at("inputSchema").at("properties").at("limit").at("maximum").as_uint64() == 200);
  REQUIRE(fetch.at("description").as_string().find("nextCursor") != json::string::npos);
}

TEST_CASE("tool list: with pages, ctxguard_fetch comes only on the last page") {
  ctxguard::config::BudgetSettings budget;
  ToolListEditor editor(budget);
  json::object first{{"tools", json::array{tool("a")}}, {"nextCursor", "page2"}};
  editor.edit(first);
  REQUIRE(first.at("tools").as_array().size() == 1);
  json::object last{{"tools", json::array{tool("b")}}};
  editor.edit(last);
  REQUIRE(last.at("tools").as_array().back().at("name").as_string() == "ctxguard_fetch");
}

TEST_CASE("tool list: a server tool named ctxguard_fetch makes ours take the prefix") {
  ctxguard::config::BudgetSettings budget;
  ToolListEditor editor(budget);
  json::object first{{"tools", json::array{tool("ctxguard_fetch")}}, {"nextCursor", "2"}};
  editor.edit(first);
  json::object last{{"tools", json::array{tool("other")}}};
  const auto edit = editor.edit(last);
  REQUIRE(edit.name_collision);
  REQUIRE(editor.fetch_tool_name() == "proxy_ctxguard_fetch");
  REQUIRE(last.at("tools").as_array().back().at("name").as_string() == "proxy_ctxguard_fetch");
  // A later listing without the clash gives the plain name back.
  json::object again{{"tools", json::array{tool("other")}}};
  editor.edit(again);
  REQUIRE(editor.fetch_tool_name() == "ctxguard_fetch");
}

TEST_CASE("tool list: a result without a tools array is left alone") {
  ctxguard::config::BudgetSettings budget;
  ToolListEditor editor(budget);
  json::object odd{{"tools", "none"}};
  REQUIRE_FALSE(editor.edit(odd).changed);
}
