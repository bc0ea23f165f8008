#include "mcp/tool_list.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "support/json_pointer.hpp"

namespace ctxguard::mcp {

namespace json = boost::json;

namespace {

// ctxguard_fetch's input schema, every parameter described.
// Every argument with its type and range, and no descriptions: the answers' hints say how to call
// it (docs/protocol.md section 5), so the definition a model pays for on every request stays small.
json::object fetch_input_schema(std::size_t max_page_size) {
  const json::object text{{"type", "string"}};
  const json::object integer{{"type", "integer"}};
  return json::object{
      {"type", "object"},
      {"properties",
       json::object{
           {"cursor", text},
           {"limit", json::object{{"type", "integer"}, {"minimum", 1}, {"maximum", max_page_size}}},
           {"fields", json::object{{"type", "array"}, {"items", text}}},
           {"path", text},
           {"startLine", integer},
           {"endLine", integer},
           {"query", text},
           {"aggregate", json::object{{"type", "object"}}}}},
      {"required", json::array{"cursor"}},
      {"additionalProperties", false}};
}

}  // namespace

json::object fetch_tool_definition(std::string_view name, std::size_t max_page_size,
                                   FetchToolForm form) {
  json::object schema = fetch_input_schema(max_page_size);
  std::string description = "Reads more of a result ctxguard shortened, as its _ctxguard.hint says";
  if (form.gives_tools) {
    description += "; {tool}: a tool's definition";
    schema["properties"].as_object()["tool"] = json::object{{"type", "string"}};
    erase_member(schema, "required");
  }
  description += '.';
  return json::object{{"name", name},
                      {"description", std::move(description)},
                      {"inputSchema", std::move(schema)},
                      {"annotations", json::object{{"readOnlyHint", true}}}};
}

json::object search_tool_definition(const OwnToolNames& names) {
  return json::object{
      {"name", names.search},
      {"title", "Find this server's tools"},
      {"description",
       fmt::format("This server's tools are not listed, to save context: find them here. Give "
                   "words for what you want to do; returns the matching tools' full definitions "
                   "(name, description, inputSchema), best first. Without `query`, names every "
                   "tool with a short description. Run one with {}.",
                   names.call)},
      {"inputSchema",
       json::object{
           {"type", "object"},
           {"properties", json::object{{"query", json::object{{"type", "string"},
                                                              {"description",
                                                               "Words from the tools' names and "
                                                               "descriptions, e.g. \"create "
                                                               "invoice\"."}}}}},
           {"additionalProperties", false}}},
      {"annotations",
       json::object{{"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}}}};
}

json::object call_tool_definition(const OwnToolNames& names) {
  return json::object{
      {"name", names.call},
      {"title", "Run one of this server's tools"},
      {"description",
       fmt::format("Runs one of this server's tools, found with {}: `name` is its name and "
                   "`arguments` its arguments, as its inputSchema says. The answer is the "
                   "tool's own.",
                   names.search)},
      {"inputSchema",
       json::object{
           {"type", "object"},
           {"properties",
            json::object{
                {"name", json::object{{"type", "string"}, {"description", "The tool's name."}}},
                {"arguments",
                 json::object{{"type", "object"}, {"description", "The tool's arguments."}}}}},
           {"required", json::array{"name"}},
           {"additionalProperties", false}}}};
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

bool lists_tools_alike(const config::Profile& next, const config::Profile& running,
                       std::string_view client) {
  using Scoped = config::Profile::ScopedSettings;
  // Claude Code's tools/list holds each tool's hard cap (ToolListEditor).
  if (lists_size_hints(client)) {
    const auto hard_caps = [](const config::Profile& profile) {
      std::vector<std::pair<std::string_view, std::size_t>> list{{"", profile.global().hard_cap}};
      for (const Scoped& rule : profile.tool_rules()) {
        list.emplace_back(rule.glob, rule.configured->hard_cap);
      }
      // A client's own rules may give other caps.
      for (const Scoped& scoped : profile.client_scope_settings()) {
        list.emplace_back(scoped.glob, scoped.configured->hard_cap);
      }
      return list;
    };
    if (hard_caps(next) != hard_caps(running)) return false;
  }
  if (next.enforces_any() != running.enforces_any() ||
      next.global().observe != running.global().observe ||
      next.process().tool_list != running.process().tool_list ||
      next.global().page_size != running.global().page_size ||
      next.largest_max_page_size() != running.largest_max_page_size()) {
    return false;
  }
  // Which tools are observed: the global mode unless a rule sets another. Only when some rule
  // does can the rules (in order: the first match wins) make a difference.
  const auto modes = [](const config::Profile& profile) {
    std::vector<std::pair<std::string_view, bool>> list;
    bool exception = false;
    for (const Scoped& rule : profile.tool_rules()) {
      list.emplace_back(rule.glob, rule.configured->observe);
      exception = exception || rule.configured->observe != profile.global().observe;
    }
    if (!exception) list.clear();
    return list;
  };
  return modes(next) == modes(running);
}

std::size_t max_result_chars(std::size_t hard_cap) {
  const std::size_t chars = hard_cap > kClaudeCodeMostChars / kCharsPerTokenCeiling
                                ? kClaudeCodeMostChars
                                : hard_cap * kCharsPerTokenCeiling;
  return std::clamp(chars, kClaudeCodeDefaultChars, kClaudeCodeMostChars);
}

ToolListEdit ToolListEditor::edit(json::object& result, const config::Profile& profile,
                                  std::string_view client) {
  ToolListEdit edit;
  json::array* tools = nullptr;
  if (json::value* found = result.if_contains("tools")) tools = found->if_array();
  if (tools == nullptr) return edit;

  const json::value* next = result.if_contains("nextCursor");
  edit.last_page = next == nullptr || next->is_null();
  const bool first_page = !listing_open_;
  listing_open_ = !edit.last_page;
  if (first_page) server_names_.clear();
  catalog_.add_page(*tools, first_page, edit.last_page);
  edit_server_tools(*tools, profile, client, edit);
  if (edit.last_page) append_own_tools(*tools, profile, client, edit);
  edit.changed = edit.output_schemas_removed > 0 || edit.fetch_tool_added || edit.size_hints > 0 ||
                 edit.tools_hidden > 0 || edit.compaction.keywords_removed > 0 ||
                 edit.compaction.definitions_removed > 0 || edit.compaction.shared_removed > 0 ||
                 edit.compaction.parameters_removed > 0 || edit.compaction.description_shortened;
  return edit;
}

void ToolListEditor::edit_server_tools(json::array& tools, const config::Profile& profile,
                                       std::string_view client, ToolListEdit& edit) {
  const config::ToolListMode mode = profile.process().tool_list;
  const bool size_hints = lists_size_hints(client);
  // The guidance said once in the instructions leaves the descriptions only for a client that
  // shows the model the instructions.
  const bool shows_instructions = client_traits(client).shows_instructions;
  const std::span<const std::string> shared =
      shows_instructions ? std::span<const std::string>(shared_) : std::span<const std::string>();
  const std::span<const SharedParameter> parameters =
      shows_instructions ? std::span<const SharedParameter>(shared_parameters_)
                         : std::span<const SharedParameter>();
  for (json::value& tool : tools) {
    json::object* object = tool.if_object();
    if (object == nullptr) continue;
    // Copied: erasing or adding a member moves the object's members, and the name with them.
    std::optional<std::string> name;
    if (const auto given = string_member(*object, "name")) name.emplace(*given);
    if (name == kFetchToolName || name == kSearchToolName || name == kCallToolName) {
      server_names_.push_back(*name);
    }
    const bool observed = name && profile.for_call(client, *name).observe;
    if (!observed && erase_member(*object, "outputSchema") != 0) ++edit.output_schemas_removed;
    // An observed tool's answers pass as they came: Claude Code's own limit stays for them.
    if (size_hints && !observed && name && mode != config::ToolListMode::kLazy) {
      set_size_hint(*object, max_result_chars(profile.for_call(client, *name).hard_cap));
      ++edit.size_hints;
    }
    if (mode == config::ToolListMode::kCompact) {
      const Compaction compaction = compact_tool(*object, shared, parameters);
      edit.compaction.keywords_removed += compaction.keywords_removed;
      edit.compaction.definitions_removed += compaction.definitions_removed;
      edit.compaction.shared_removed += compaction.shared_removed;
      edit.compaction.parameters_removed += compaction.parameters_removed;
      edit.compaction.description_shortened =
          edit.compaction.description_shortened || compaction.description_shortened;
    }
  }
  if (mode == config::ToolListMode::kLazy) {
    edit.tools_hidden = tools.size();
    tools.clear();
  }
}

void ToolListEditor::append_own_tools(json::array& tools, const config::Profile& profile,
                                      std::string_view client, ToolListEdit& edit) {
  const config::ToolListMode mode = profile.process().tool_list;
  const auto own_name = [&](std::string_view name) {
    const bool taken =
        std::find(server_names_.begin(), server_names_.end(), name) != server_names_.end();
    edit.name_collision = edit.name_collision || taken;
    return taken ? profile.process().fetch_tool_prefix + std::string(name) : std::string(name);
  };
  names_ =
      OwnToolNames{own_name(kFetchToolName), own_name(kSearchToolName), own_name(kCallToolName)};
  edit.names = names_;
  lazy_listed_ = mode == config::ToolListMode::kLazy;
  server_names_.clear();  // the next listing starts afresh
  const bool size_hints = lists_size_hints(client);
  const auto add = [&](json::object definition) {
    if (size_hints) {
      set_size_hint(definition, max_result_chars(profile.largest_hard_cap()));
      ++edit.size_hints;
    }
    tools.emplace_back(std::move(definition));
  };
  if (mode == config::ToolListMode::kLazy) {
    add(search_tool_definition(names_));
    add(call_tool_definition(names_));
  }
  // compact: ctxguard_fetch gives the descriptions in full; lazy: it continues long answers.
  if (profile.enforces_any() || mode == config::ToolListMode::kCompact) {
    add(fetch_tool_definition(
        names_.fetch, profile.largest_max_page_size(),
        FetchToolForm{.gives_tools = mode == config::ToolListMode::kCompact}));
    edit.fetch_tool_added = true;
  }
}

}  // namespace ctxguard::mcp
