#include "mcp/tool_lookup.hpp"

#include "support/text_scan.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/json/array.hpp>

#include "budget/token_estimator.hpp"
#include "mcp/tool_compaction.hpp"
#include "mcp/tool_result.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::mcp {

namespace json = boost::json;
using Tool = ToolCatalog::Tool;

namespace {

// Names offered when a tool is not found.
constexpr std::size_t kSuggestions = 5;

budget::AnswerSize measure(std::string_view text) {
  budget::TextMeasure measure;
  measure.add_item(text);
  budget::AnswerSize size = measure.size();
  size.tokens = budget::estimate_tokens(text);
  return size;
}

void add_to(budget::AnswerSize& total, const budget::AnswerSize& part) {
  total.tokens += part.tokens;
  total.chars += part.chars;
  total.bytes += part.bytes;
}

// What a search shows of a tool: the definition without outputSchema, or without a query its
// name and compacted description.
json::object shown_tool(const Tool& tool, bool in_full) {
  if (in_full) {
    json::object definition = tool.definition;
    definition.erase("outputSchema");
    return definition;
  }
  json::object entry{{"name", tool.name}};
  if (const json::value* description = tool.definition.if_contains("description");
      description != nullptr && description->is_string()) {
    entry["description"] = compact_description(description->get_string(), {}).text;
  }
  return entry;
}

struct SearchPage {
  std::string_view query;
  std::vector<const Tool*> found;  // best first
  bool definitions = false;        // show definitions (a query), else names and descriptions
};

std::string compose(const SearchPage& page, std::size_t in_full, std::size_t named) {
  json::object answer;
  if (!page.query.empty()) answer["query"] = page.query;
  answer["found"] = page.found.size();
  json::array tools;
  for (std::size_t i = 0; i < in_full; ++i) {
    tools.emplace_back(shown_tool(*page.found[i], page.definitions));
  }
  answer["tools"] = std::move(tools);
  json::array also;
  for (std::size_t i = in_full; i < in_full + named; ++i) also.emplace_back(page.found[i]->name);
  if (!also.empty()) answer["alsoFound"] = std::move(also);
  if (in_full + named < page.found.size()) answer["unlisted"] = page.found.size() - in_full - named;
  return to_json(answer);
}

// The most tools shown in full, then the most names, that fit `budget`: estimated piece by
// piece, then checked whole (fewer until the whole fits).
std::string fitted(const SearchPage& page, const budget::FitBudget& budget, ToolLookup& lookup) {
  budget::AnswerSize total = measure(compose(page, 0, 0));
  std::size_t in_full = 0;
  while (in_full < page.found.size()) {
    budget::AnswerSize next = total;
    add_to(next, measure(to_json(shown_tool(*page.found[in_full], page.definitions))));
    if (!budget::fits(next, budget)) break;
    total = next;
    ++in_full;
  }
  std::size_t named = 0;
  while (in_full + named < page.found.size()) {
    budget::AnswerSize next = total;
    add_to(next, measure(fmt::format("\"{}\",", page.found[in_full + named]->name)));
    if (!budget::fits(next, budget)) break;
    total = next;
    ++named;
  }
  std::string text = compose(page, in_full, named);
  while (!budget::fits(measure(text), budget) && in_full + named > 0) {
    if (named > 0) {
      --named;
    } else {
      --in_full;
    }
    text = compose(page, in_full, named);
  }
  lookup.found = page.found.size();
  lookup.shown = in_full;
  return text;
}

ToolLookup refusal(std::string text) {
  return ToolLookup{text_tool_result(std::move(text), ToolResult::kError), 0, 0, true};
}

// "Did you mean" for `name`: the names the search finds for it, or nothing.
std::string closest_names(const ToolCatalog& catalog, std::string_view name) {
  const std::vector<const Tool*> found = catalog.search(name);
  std::string names;
  for (std::size_t i = 0; i < found.size() && i < kSuggestions; ++i) {
    names += (i == 0 ? "" : ", ") + found[i]->name;
  }
  return names.empty() ? std::string() : fmt::format(" Closest: {}.", names);
}

std::string search_hint(std::string_view search_tool) {
  return search_tool.empty() ? std::string()
                             : fmt::format(" {} finds tools by words.", search_tool);
}

}  // namespace

ToolLookup search_tools(const ToolCatalog& catalog, const json::value& arguments,
                        const budget::FitBudget& budget) {
  const json::object* args = arguments.if_object();
  if (!arguments.is_null() && args == nullptr) {
    return refusal("The arguments must be an object: {\"query\": \"words\"}.");
  }
  std::string_view query;
  if (const json::value* given = args != nullptr ? args->if_contains("query") : nullptr) {
    if (!given->is_string()) return refusal("`query` must be a string of words.");
    query = given->get_string();
  }
  SearchPage page{query, {}, !text::words_of(query).empty()};
  if (page.definitions) {
    page.found = catalog.search(query);
  } else {
    for (const Tool& tool : catalog.tools()) page.found.push_back(&tool);
  }
  ToolLookup lookup;
  lookup.result = text_tool_result(fitted(page, budget, lookup), ToolResult::kAnswer);
  return lookup;
}

ToolLookup describe_tool(const ToolCatalog& catalog, std::string_view name,
                         std::string_view search_tool) {
  const Tool* tool = catalog.find(name);
  if (tool == nullptr) return unknown_tool(catalog, name, search_tool);
  return ToolLookup{text_tool_result(to_json(tool->definition), ToolResult::kAnswer), 1, 1, false};
}

ToolLookup unknown_tool(const ToolCatalog& catalog, std::string_view name,
                        std::string_view search_tool) {
  return refusal(fmt::format("This server lists no tool named \"{}\".{}{}", name,
                             closest_names(catalog, name), search_hint(search_tool)));
}

}  // namespace ctxguard::mcp
