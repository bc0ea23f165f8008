// Fuzz target: a tools/list result as a server may send it, edited in each toolList mode
// (mcp::ToolListEditor, mcp/tool_compaction), kept in the catalog and searched
// (mcp::search_tools).
//
// Input: one knob byte (low bits: the mode, full / compact / lazy), then the result's JSON.
// Invariants:
//   - nothing throws, whatever the JSON holds;
//   - compact keeps every tool: the same count and order of names, and for each tool its
//     `required`, its `annotations` and the names of its input properties, exactly;
//   - compacting a compacted input schema removes nothing more;
//   - lazy lists none of the server's tools, and the catalog holds each named object tool once;
//   - a search answers within its budget, showing only tools of the catalog.

#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "budget/answer_size.hpp"
#include "budget/token_estimator.hpp"
#include "config/profile.hpp"
#include "fuzz_support.hpp"
#include "mcp/tool_compaction.hpp"
#include "mcp/tool_list.hpp"
#include "mcp/tool_lookup.hpp"
#include "support/json_reader.hpp"

namespace {

namespace json = boost::json;
using ctxguard::fuzz::require;

std::string name_of(const json::value& tool) {
  const json::object* object = tool.if_object();
  const json::value* name = object != nullptr ? object->if_contains("name") : nullptr;
  return name != nullptr && name->is_string() ? std::string(name->get_string()) : std::string();
}

const json::value* member(const json::value& value, std::string_view key) {
  const json::object* object = value.if_object();
  return object != nullptr ? object->if_contains(key) : nullptr;
}

std::set<std::string> property_names(const json::value& tool) {
  std::set<std::string> names;
  const json::value* schema = member(tool, "inputSchema");
  const json::value* properties = schema != nullptr ? member(*schema, "properties") : nullptr;
  if (properties != nullptr && properties->is_object()) {
    for (const auto& entry : properties->get_object()) names.emplace(entry.key());
  }
  return names;
}

bool same_member(const json::value& a, const json::value& b, std::string_view key) {
  const json::value* in_a = member(a, key);
  const json::value* in_b = member(b, key);
  return (in_a == nullptr) == (in_b == nullptr) && (in_a == nullptr || *in_a == *in_b);
}

void check_compact(const json::array& before, const json::array& after) {
  require(after.size() == before.size() + 1, "compact keeps every tool and adds ctxguard_fetch");
  for (std::size_t i = 0; i < before.size(); ++i) {
    require(name_of(after[i]) == name_of(before[i]), "compact keeps the order of the tools");
    require(property_names(after[i]) == property_names(before[i]), "compact keeps the properties",
            [&] { return name_of(before[i]); });
    const json::value* schema = member(before[i], "inputSchema");
    const json::value* compact = member(after[i], "inputSchema");
    if (schema != nullptr && compact != nullptr) {
      require(same_member(*schema, *compact, "required"), "compact keeps `required`");
      json::value again = *compact;
      if (again.is_object()) {
        const auto second =
            ctxguard::mcp::compact_input_schema(again.get_object(), name_of(before[i]));
        require(second.keywords_removed == 0 && second.definitions_removed == 0,
                "compacting twice removes nothing more");
      }
    }
    require(same_member(before[i], after[i], "annotations"), "compact keeps the annotations");
  }
}

void check_search(const ctxguard::mcp::ToolCatalog& catalog) {
  const ctxguard::budget::FitBudget budget{.tokens = 600, .chars = 3000, .bytes = 0, .lines = 0};
  for (const json::value& arguments :
       {json::value(json::object{{"query", "list a b"}}), json::value()}) {
    const auto lookup = ctxguard::mcp::search_tools(catalog, arguments, budget);
    const std::string_view text = lookup.result.at("content").at(0).at("text").as_string();
    ctxguard::budget::TextMeasure measure;
    measure.add_item(text);
    auto size = measure.size();
    size.tokens = ctxguard::budget::estimate_tokens(text);
    require(ctxguard::budget::fits(size, budget), "a search answers within its budget");
    // Read as ctxguard reads JSON: a server's bytes that are not UTF-8 pass as they came.
    const auto answer = ctxguard::parse_json(text);
    require(answer.has_value(), "a search answers with JSON");
    for (const json::value& tool : answer->at("tools").as_array()) {
      require(catalog.find(name_of(tool)) != nullptr, "a search shows only listed tools");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ctxguard::fuzz::FuzzInput input(data, size);
  const unsigned mode = input.byte() % 3;
  auto parsed = ctxguard::parse_json(input.rest());
  if (!parsed || !parsed->is_object()) return 0;
  json::object result = parsed->get_object();
  const json::value* tools = result.if_contains("tools");
  if (tools == nullptr || !tools->is_array()) return 0;
  const json::array before = tools->get_array();

  ctxguard::config::ProcessSettings process;
  process.tool_list = static_cast<ctxguard::config::ToolListMode>(mode);
  const auto profile = ctxguard::config::Profile::of({}, process);
  ctxguard::mcp::ToolListEditor editor;
  result.erase("nextCursor");
  editor.edit(result, *profile, "fuzz");
  const json::array& after = result.at("tools").as_array();
  if (mode == 1) check_compact(before, after);
  if (mode == 2) {
    require(after.size() == 3, "lazy lists ctxguard's three tools only");
  }
  std::set<std::string> named;
  for (const json::value& tool : before) {
    if (!name_of(tool).empty()) named.insert(name_of(tool));
  }
  require(editor.catalog().size() == named.size(), "the catalog holds each named tool once");
  check_search(editor.catalog());
  return 0;
}
