#include "mcp/tool_list.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "support/json_pointer.hpp"

namespace ctxguard::mcp {

namespace json = boost::json;

json::object fetch_tool_definition(std::string_view name, std::size_t page_size,
                                   std::size_t max_page_size) {
  json::object limit{{"type", "integer"},
                     {"minimum", 1},
                     {"maximum", max_page_size},
                     {"description", fmt::format("Items per page (default {}, at most {}).",
                                                 page_size, max_page_size)}};
  json::object schema{
      {"type", "object"},
      {"properties",
       json::object{
           {"cursor",
            json::object{{"type", "string"},
                         {"description",
                          "A cursor from `_ctxguard`: nextCursor (the next page or chunk), "
                          "resultCursor (any value of the result, with `path`), or one from "
                          "otherCuts."}}},
           {"limit", std::move(limit)},
           {"fields", json::object{{"type", "array"},
                                   {"items", json::object{{"type", "string"}}},
                                   {"description",
                                    "Keep only these fields of each record (dotted for nested "
                                    "ones, e.g. \"guest.name\")."}}},
           {"path", json::object{{"type", "string"},
                                 {"description",
                                  "A JSON Pointer from a shortened value (\"…[+N chars: PATH]\", "
                                  "\"[object of N keys: PATH]\"): returns that value in full."}}},
           {"startLine", json::object{{"type", "integer"},
                                      {"minimum", 1},
                                      {"description", "Text results: the first line to return."}}},
           {"endLine", json::object{{"type", "integer"},
                                    {"minimum", 1},
                                    {"description", "Text results: the last line to return."}}},
           {"query",
            json::object{{"type", "string"},
                         {"description",
                          "Search the cached result: items of an array (words, field=value, "
                          "field~text, field!=value; all terms must match) or lines of a "
                          "text."}}}}},
      {"required", json::array{"cursor"}},
      {"additionalProperties", false}};
  return json::object{
      {"name", name},
      {"title", "Fetch more of a shortened result"},
      {"description",
       "Continues a tool result that ctxguard shortened to fit the context budget, from "
       "ctxguard's cache (the tool is not run again): the next page or chunk "
       "({cursor: _ctxguard.nextCursor}), a shortened value in full ({cursor: "
       "_ctxguard.resultCursor, path}), exact lines of a text ({cursor, startLine, endLine}), "
       "or a search ({cursor, query}). `limit` and `fields` narrow pages. If the cursor has "
       "expired, call the original tool again."},
      {"inputSchema", std::move(schema)},
      {"annotations",
       json::object{{"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}}}};
}

namespace {

// The most characters per estimated token in the estimator corpus is 4.96 (a pretty-printed JSON
// file; docs/clients.md); 6 leaves a margin.
constexpr std::size_t kCharsPerTokenCeiling = 6;
constexpr std::size_t kClaudeCodeDefaultChars = 50'000;
constexpr std::size_t kClaudeCodeMostChars = 500'000;

// Sets the tool's size hint to `chars`, keeping the rest of its `_meta` and a larger hint the
// server gave.
void set_size_hint(json::object& tool, std::size_t chars) {
  json::value& meta = tool["_meta"];
  if (!meta.is_object()) meta = json::object{};
  json::value& hint = meta.as_object()[kMaxResultSizeKey];
  if (const auto given = hint.if_uint64(); given != nullptr && *given >= chars) return;
  if (const auto given = hint.if_int64();
      given != nullptr && *given >= 0 && static_cast<std::uint64_t>(*given) >= chars) {
    return;
  }
  hint = chars;
}

}  // namespace

std::size_t max_result_chars(std::size_t hard_cap) {
  const std::size_t chars = hard_cap > kClaudeCodeMostChars / kCharsPerTokenCeiling
                                ? kClaudeCodeMostChars
                                : hard_cap * kCharsPerTokenCeiling;
  return std::clamp(chars, kClaudeCodeDefaultChars, kClaudeCodeMostChars);
}

ToolListEdit ToolListEditor::edit(json::object& result, const config::Profile& profile,
                                  std::string_view client) {
  ToolListEdit edit;
  const bool size_hints = lists_size_hints(client);
  json::array* tools = nullptr;
  if (json::value* found = result.if_contains("tools")) tools = found->if_array();
  if (tools == nullptr) return edit;

  for (json::value& tool : *tools) {
    json::object* object = tool.if_object();
    if (object == nullptr) continue;
    // Copied: erasing or adding a member moves the object's members, and the name with them.
    std::optional<std::string> name;
    if (const auto given = string_member(*object, "name")) name.emplace(*given);
    const bool observed = name && profile.for_call(client, *name).observe;
    if (!observed && object->erase("outputSchema") != 0) ++edit.output_schemas_removed;
    // An observed tool's answers pass as they came: Claude Code's own limit stays for them.
    if (size_hints && !observed && name) {
      set_size_hint(*object, max_result_chars(profile.for_call(client, *name).hard_cap));
      ++edit.size_hints;
    }
    if (name == kFetchToolName) server_has_fetch_tool_ = true;
  }
  const json::value* next = result.if_contains("nextCursor");
  edit.last_page = next == nullptr || next->is_null();
  if (edit.last_page && !profile.enforces_any()) {
    server_has_fetch_tool_ = false;
    edit.fetch_tool_name = fetch_tool_name_;
  } else if (edit.last_page) {
    edit.name_collision = server_has_fetch_tool_;
    fetch_tool_name_ = server_has_fetch_tool_
                           ? profile.global().fetch_tool_prefix + std::string(kFetchToolName)
                           : std::string(kFetchToolName);
    edit.fetch_tool_name = fetch_tool_name_;
    tools->push_back(fetch_tool_definition(fetch_tool_name_, profile.global().page_size,
                                           profile.largest_max_page_size()));
    if (size_hints) {
      set_size_hint(tools->back().as_object(), max_result_chars(profile.largest_hard_cap()));
      ++edit.size_hints;
    }
    edit.fetch_tool_added = true;
    server_has_fetch_tool_ = false;  // the next listing starts afresh
  }
  edit.changed = edit.output_schemas_removed > 0 || edit.fetch_tool_added || edit.size_hints > 0;
  return edit;
}

}  // namespace ctxguard::mcp
