#include <catch2/catch.hpp>

#include <string>

#include <boost/json.hpp>

#include "mcp/tool_lookup.hpp"

namespace json = boost::json;
using ctxguard::budget::FitBudget;
using ctxguard::mcp::describe_tool;
using ctxguard::mcp::search_tools;
using ctxguard::mcp::ToolCatalog;
using ctxguard::mcp::unknown_tool;

namespace {

// 40 tools, each with a schema of some size and an outputSchema.
ToolCatalog catalog_of_40() {
  json::array tools;
  for (int i = 0; i < 40; ++i) {
    json::object properties;
    for (int p = 0; p < 8; ++p) {
      properties["field" + std::to_string(p)] =
          json::object{{"type", "string"}, {"description", "A field of the record, described."}};
    }
    tools.push_back(
        json::object{{"name", "records_tool_" + std::to_string(i)},
                     {"description", "Works on records. Then says more about it, at some length."},
                     {"inputSchema", json::object{{"type", "object"}, {"properties", properties}}},
                     {"outputSchema", json::object{{"type", "object"}}}});
  }
  ToolCatalog catalog;
  catalog.add_page(tools, true, true);
  return catalog;
}

json::object answer_of(const json::object& result) {
  return json::parse(result.at("content").at(0).at("text").as_string()).as_object();
}

}  // namespace

TEST_CASE("search: full definitions as fit the budget, then names, then a count") {
  const ToolCatalog catalog = catalog_of_40();
  const auto lookup = search_tools(catalog, json::object{{"query", "records"}}, FitBudget{1000});
  REQUIRE_FALSE(lookup.refused);
  CHECK(lookup.found == 40);
  CHECK(lookup.shown > 0);
  CHECK(lookup.shown < 40);
  const json::object answer = answer_of(lookup.result);
  CHECK(answer.at("found") == 40);
  CHECK(answer.at("tools").as_array().size() == lookup.shown);
  const auto& first = answer.at("tools").at(0).as_object();
  CHECK(first.at("name") == "records_tool_0");
  CHECK(first.contains("inputSchema"));
  CHECK_FALSE(first.contains("outputSchema"));
  const std::size_t named =
      answer.contains("alsoFound") ? answer.at("alsoFound").as_array().size() : 0;
  const std::size_t unlisted =
      answer.contains("unlisted") ? answer.at("unlisted").to_number<std::size_t>() : 0;
  CHECK(lookup.shown + named + unlisted == 40);
}

TEST_CASE("search: within characters and bytes as well as tokens") {
  const ToolCatalog catalog = catalog_of_40();
  const FitBudget budget{.tokens = 100000, .chars = 2500, .bytes = 2500, .lines = 0};
  const auto lookup = search_tools(catalog, json::object{{"query", "records"}}, budget);
  const std::string text(lookup.result.at("content").at(0).at("text").as_string());
  CHECK(text.size() <= 2500);
  CHECK(lookup.shown >= 1);
}

TEST_CASE("search: without a query, every tool by name with a short description") {
  const ToolCatalog catalog = catalog_of_40();
  const auto lookup = search_tools(catalog, json::value(), FitBudget{100000});
  const json::object answer = answer_of(lookup.result);
  CHECK(answer.at("tools").as_array().size() == 40);
  CHECK(
      answer.at("tools").at(0).as_object() ==
      json::object{{"name", "records_tool_0"},
                   {"description", "Works on records. Then says more about it, at some length."}});
}

TEST_CASE("search: bad arguments are refused with what to pass") {
  const ToolCatalog catalog = catalog_of_40();
  CHECK(search_tools(catalog, json::value(3), FitBudget{4000}).refused);
  const auto not_text = search_tools(catalog, json::object{{"query", 5}}, FitBudget{4000});
  CHECK(not_text.refused);
  CHECK(not_text.result.at("isError") == true);
}

TEST_CASE("describe: a definition as the server sent it; an unknown name gets the closest") {
  const ToolCatalog catalog = catalog_of_40();
  const auto known = describe_tool(catalog, "records_tool_3", "");
  CHECK(json::parse(known.result.at("content").at(0).at("text").as_string()) ==
        catalog.find("records_tool_3")->definition);
  const auto unknown = unknown_tool(catalog, "records_tool", "ctxguard_search_tools");
  CHECK(unknown.refused);
  const std::string text(unknown.result.at("content").at(0).at("text").as_string());
  CHECK(text.find("no tool named \"records_tool\"") != std::string::npos);
  CHECK(text.find("Closest: records_tool_0") != std::string::npos);
  CHECK(text.find("ctxguard_search_tools finds tools") != std::string::npos);
}
