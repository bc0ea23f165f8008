#include "mcp/tool_compaction.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "support/json_pointer.hpp"
#include "support/text_scan.hpp"

namespace ctxguard::mcp {

namespace json = boost::json;

namespace {

using text::char_count;
using text::is_blank_byte;

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_blank_byte(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank_byte(text.back())) text.remove_suffix(1);
  return text;
}

// Where the sentence whose stop ('.', '!' or '?') is at text[at] ends with its blank space, or
// npos when it goes on: past the closing marks, the end of the text, or blank space before
// anything but a lowercase letter ("e.g. this" goes on).
std::size_t sentence_end(std::string_view text, std::size_t at) {
  const std::size_t next =
      text::past_closing_marks(text, at + 1, "\"')]}`*", std::string_view::npos);
  if (next == text.size()) return next;
  if (!is_blank_byte(text[next])) return std::string_view::npos;
  std::size_t after = next;
  while (after < text.size() && is_blank_byte(text[after])) ++after;
  if (after < text.size() && std::islower(static_cast<unsigned char>(text[after])) != 0) {
    return std::string_view::npos;
  }
  return after;
}

std::string normalized_name(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

// Whether a root `title` only names the tool's arguments ("create_issueArguments").
bool names_the_arguments(std::string_view title, std::string_view tool) {
  static constexpr std::array<std::string_view, 8> kSuffixes{
      "", "arguments", "args", "input", "params", "parameters", "request", "schema"};
  const std::string said = normalized_name(title);
  const std::string name = normalized_name(tool);
  if (name.empty() || !said.starts_with(name)) return false;
  const std::string_view rest = std::string_view(said).substr(name.size());
  return std::find(kSuffixes.begin(), kSuffixes.end(), rest) != kSuffixes.end();
}

// Keywords whose value is one schema, an array of schemas, or an object of named schemas.
constexpr std::array<std::string_view, 12> kOneSchema{"items",
                                                      "additionalProperties",
                                                      "additionalItems",
                                                      "contains",
                                                      "not",
                                                      "if",
                                                      "then",
                                                      "else",
                                                      "propertyNames",
                                                      "unevaluatedProperties",
                                                      "unevaluatedItems",
                                                      "contentSchema"};
constexpr std::array<std::string_view, 5> kSchemaArrays{"allOf", "anyOf", "oneOf", "prefixItems",
                                                        "items"};
constexpr std::array<std::string_view, 6> kNamedSchemas{
    "properties", "patternProperties", "definitions", "$defs", "dependentSchemas", "dependencies"};

template <std::size_t N>
bool is_one_of(const std::array<std::string_view, N>& list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// Calls visit(schema, name) for every schema under `schema` (not itself): `name` is the
// property's or definition's name it stands under, or empty.
template <typename Visit>
void for_each_subschema(json::object& schema, const Visit& visit) {
  for (auto& member : schema) {
    const std::string_view key = member.key();
    json::value& value = member.value();
    if (is_one_of(kOneSchema, key) && value.is_object()) visit(value.get_object(), "");
    if (is_one_of(kSchemaArrays, key) && value.is_array()) {
      for (json::value& element : value.get_array()) {
        if (element.is_object()) visit(element.get_object(), "");
      }
    }
    if (is_one_of(kNamedSchemas, key) && value.is_object()) {
      const bool named = key != "patternProperties";
      for (auto& entry : value.get_object()) {
        if (entry.value().is_object()) {
          visit(entry.value().get_object(), named ? std::string_view(entry.key()) : "");
        }
      }
    }
  }
}

// Removes $comment and a title that repeats `name` from `schema` and every schema under it.
void strip_annotations(json::object& schema, std::string_view name, Compaction& compaction) {
  compaction.keywords_removed += erase_member(schema, "$comment");
  const json::value* title = schema.if_contains("title");
  if (title != nullptr && title->is_string() && !name.empty() &&
      normalized_name(title->get_string()) == normalized_name(name)) {
    compaction.keywords_removed += erase_member(schema, "title");
  }
  for_each_subschema(schema, [&](json::object& inner, std::string_view inner_name) {
    strip_annotations(inner, inner_name, compaction);
  });
}

// Keywords beside a `$ref` that draft-07 ignores and 2020-12 applies, harmlessly: annotations.
constexpr std::array<std::string_view, 9> kAnnotations{"$ref",     "description", "title",
                                                       "default",  "examples",    "$comment",
                                                       "readOnly", "writeOnly",   "deprecated"};

// Whether `schema` or a schema under it uses a keyword that means something else in 2020-12
// than in the drafts before it.
bool uses_changed_keywords(json::object& schema) {
  static constexpr std::array<std::string_view, 5> kChanged{
      "additionalItems", "dependencies", "$recursiveRef", "$recursiveAnchor", "id"};
  for (const auto& member : schema) {
    if (is_one_of(kChanged, member.key())) return true;
  }
  const json::value* items = schema.if_contains("items");
  if (items != nullptr && items->is_array()) return true;
  for (const std::string_view bound : {"exclusiveMinimum", "exclusiveMaximum"}) {
    const json::value* value = schema.if_contains(bound);
    if (value != nullptr && value->is_bool()) return true;
  }
  if (schema.contains("$ref") && std::any_of(schema.begin(), schema.end(), [](const auto& member) {
        return !is_one_of(kAnnotations, member.key());
      })) {
    return true;
  }
  bool changed = false;
  for_each_subschema(schema, [&](json::object& inner, std::string_view) {
    changed = changed || uses_changed_keywords(inner);
  });
  return changed;
}

// Whether the root `$schema` can go: the schema means the same under 2020-12, MCP's default.
bool dialect_is_default(json::object& schema) {
  const json::value* dialect = schema.if_contains("$schema");
  if (dialect == nullptr || !dialect->is_string()) return false;
  const std::string_view uri = dialect->get_string();
  if (uri.find("json-schema.org/draft/2020-12/schema") != std::string_view::npos) return true;
  const bool older = uri.find("json-schema.org/draft-07/schema") != std::string_view::npos ||
                     uri.find("json-schema.org/draft-06/schema") != std::string_view::npos ||
                     uri.find("json-schema.org/draft-04/schema") != std::string_view::npos ||
                     uri.find("json-schema.org/draft/2019-09/schema") != std::string_view::npos;
  return older && !uses_changed_keywords(schema);
}

// Every `$ref` in `value`, anywhere; false when something may be a target other than a local
// pointer ($id, an anchor, a dynamic reference).
bool names_a_target(std::string_view key) {
  return key == "$id" || key == "$anchor" || key == "$dynamicAnchor" || key == "$dynamicRef" ||
         key == "$recursiveAnchor" || key == "$recursiveRef";
}

bool collect_refs(const json::value& value, std::vector<std::string_view>& refs) {
  if (const json::array* array = value.if_array()) {
    return std::all_of(array->begin(), array->end(),
                       [&refs](const json::value& element) { return collect_refs(element, refs); });
  }
  const json::object* object = value.if_object();
  if (object == nullptr) return true;
  for (const auto& member : *object) {
    const std::string_view key = member.key();
    if (names_a_target(key)) return false;
    if (key == "$ref" && member.value().is_string()) refs.push_back(member.value().get_string());
    if (!collect_refs(member.value(), refs)) return false;
  }
  return true;
}

// The definition a local reference names: {container, name}, or nothing when it is none.
std::optional<std::pair<std::string, std::string>> referenced_definition(std::string_view ref) {
  for (const std::string_view container : {"definitions", "$defs"}) {
    const std::string prefix = "#/" + std::string(container) + "/";
    if (!ref.starts_with(prefix)) continue;
    std::string_view token = ref.substr(prefix.size());
    token = token.substr(0, token.find('/'));
    if (token.find('%') != std::string_view::npos) return std::nullopt;
    std::string name;
    for (std::size_t i = 0; i < token.size(); ++i) {
      if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
        name += token[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        name += token[i];
      }
    }
    return std::pair{std::string(container), std::move(name)};
  }
  return std::nullopt;
}

// Removes the entries of the root `definitions` and `$defs` that no `$ref` reaches.
std::size_t remove_unreachable_definitions(json::object& schema) {
  using Key = std::pair<std::string, std::string>;
  const auto key_hash = [](const Key& key) {
    return std::hash<std::string>{}(key.first) ^ (std::hash<std::string>{}(key.second) << 1);
  };
  std::vector<std::string_view> root_refs;
  for (const auto& member : schema) {
    if (names_a_target(member.key())) return 0;
    if (member.key() == "definitions" || member.key() == "$defs") continue;
    if (member.key() == "$ref" && member.value().is_string()) {
      root_refs.push_back(member.value().get_string());
    }
    if (!collect_refs(member.value(), root_refs)) return 0;
  }
  std::unordered_map<Key, std::vector<std::string_view>, decltype(key_hash)> inner_refs(8,
                                                                                        key_hash);
  for (const std::string_view container : {"definitions", "$defs"}) {
    const json::value* found = schema.if_contains(container);
    if (found == nullptr || !found->is_object()) continue;
    for (const auto& entry : found->get_object()) {
      std::vector<std::string_view>& refs =
          inner_refs[Key{std::string(container), std::string(entry.key())}];
      if (!collect_refs(entry.value(), refs)) return 0;
    }
  }
  std::unordered_set<Key, decltype(key_hash)> reached(8, key_hash);
  std::vector<std::string_view> pending = root_refs;
  while (!pending.empty()) {
    const std::string_view ref = pending.back();
    pending.pop_back();
    auto target = referenced_definition(ref);
    if (!target) return 0;  // a reference to something else: keep everything
    if (!reached.insert(*target).second) continue;
    const auto inner = inner_refs.find(*target);
    if (inner != inner_refs.end())
      pending.insert(pending.end(), inner->second.begin(), inner->second.end());
  }
  std::size_t removed = 0;
  for (const std::string_view container : {"definitions", "$defs"}) {
    json::value* found = schema.if_contains(container);
    if (found == nullptr || !found->is_object()) continue;
    json::object& entries = found->get_object();
    std::vector<std::string> unreached;
    for (const auto& entry : entries) {
      if (!reached.contains(Key{std::string(container), std::string(entry.key())})) {
        unreached.emplace_back(entry.key());
      }
    }
    for (const std::string& name : unreached) removed += erase_member(entries, name);
    if (entries.empty()) erase_member(schema, container);
  }
  return removed;
}

// A first sentence longer than this is cut at a space.
constexpr std::size_t kLongestSentenceChars = 2 * kDescriptionChars;

// `sentence` cut at the last space within kDescriptionChars characters.
std::string_view cut_at_space(std::string_view sentence) {
  const std::string_view head = sentence.substr(0, text::prefix_bytes(sentence, kDescriptionChars));
  const std::size_t last_space = head.rfind(' ');
  return last_space != std::string_view::npos ? head.substr(0, last_space) : head;
}

}  // namespace

std::vector<std::string_view> split_sentences(std::string_view text) {
  std::vector<std::string_view> pieces;
  std::size_t begin = 0;
  for (std::size_t at = 0; at < text.size(); ++at) {
    std::size_t end = std::string_view::npos;
    if (text::sentence_stop_at(text, at).length == 1) {  // '.', '!' or '?'
      end = sentence_end(text, at);
    } else if (text[at] == '\n' && at + 1 < text.size() && text[at + 1] == '\n') {
      end = at;
      while (end < text.size() && is_blank_byte(text[end])) ++end;
    }
    if (end == std::string_view::npos) continue;
    pieces.push_back(text.substr(begin, end - begin));
    begin = end;
    at = end - 1;
  }
  if (begin < text.size()) pieces.push_back(text.substr(begin));
  return pieces;
}

std::vector<std::string> shared_sentences(const json::array& tools) {
  std::unordered_map<std::string_view, std::size_t> tools_saying;
  std::vector<std::string_view> in_order;
  for (const json::value& tool : tools) {
    const json::object* object = tool.if_object();
    const json::value* description =
        object != nullptr ? object->if_contains("description") : nullptr;
    if (description == nullptr || !description->is_string()) continue;
    std::unordered_set<std::string_view> said;
    for (const std::string_view piece : split_sentences(description->get_string())) {
      const std::string_view sentence = trimmed(piece);
      if (char_count(sentence) < kSharedSentenceChars || !said.insert(sentence).second) continue;
      if (tools_saying[sentence]++ == 0) in_order.push_back(sentence);
    }
  }
  std::vector<std::string> shared;
  for (const std::string_view sentence : in_order) {
    const std::size_t count = tools_saying[sentence];
    if (count >= kSharedSentenceTools && 2 * count >= tools.size()) shared.emplace_back(sentence);
  }
  return shared;
}

namespace {

// Calls visit(name, description) for every top-level input property of `tool` with a string
// description.
template <typename Visit>
void for_each_described_property(const json::object& tool, const Visit& visit) {
  const json::value* schema = tool.if_contains("inputSchema");
  const json::value* properties = schema != nullptr && schema->is_object()
                                      ? schema->get_object().if_contains("properties")
                                      : nullptr;
  if (properties == nullptr || !properties->is_object()) return;
  for (const auto& property : properties->get_object()) {
    const json::object* object = property.value().if_object();
    const json::value* description =
        object != nullptr ? object->if_contains("description") : nullptr;
    if (description != nullptr && description->is_string()) {
      visit(std::string_view(property.key()), std::string_view(description->get_string()));
    }
  }
}

// Leaves out the descriptions of `tool`'s input properties that `parameters` say once; how many.
std::size_t remove_shared_parameters(json::object& tool,
                                     std::span<const SharedParameter> parameters) {
  json::value* schema = tool.if_contains("inputSchema");
  json::value* properties = schema != nullptr && schema->is_object()
                                ? schema->get_object().if_contains("properties")
                                : nullptr;
  if (properties == nullptr || !properties->is_object()) return 0;
  std::size_t removed = 0;
  for (auto& property : properties->get_object()) {
    json::object* object = property.value().if_object();
    const json::value* description =
        object != nullptr ? object->if_contains("description") : nullptr;
    if (description == nullptr || !description->is_string()) continue;
    const SharedParameter said{.name = std::string(property.key()),
                               .description = std::string(description->get_string())};
    if (std::find(parameters.begin(), parameters.end(), said) != parameters.end()) {
      removed += erase_member(*object, "description");
    }
  }
  return removed;
}

}  // namespace

std::vector<SharedParameter> shared_parameters(const json::array& tools) {
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> tools_describing;
  std::map<std::string_view, std::size_t> descriptions_of;  // distinct, per name
  std::vector<std::pair<std::string_view, std::string_view>> in_order;
  for (const json::value& tool : tools) {
    const json::object* object = tool.if_object();
    if (object == nullptr) continue;
    for_each_described_property(*object, [&](std::string_view name, std::string_view text) {
      if (tools_describing[{name, text}]++ != 0) return;
      ++descriptions_of[name];
      in_order.emplace_back(name, text);
    });
  }
  std::vector<SharedParameter> shared;
  for (const auto& described : in_order) {
    // A name described in more than one way ("Only contacts in this status.", "Only invoices
    // ...") says which description is whose only where it stands.
    if (descriptions_of[described.first] == 1 &&
        char_count(described.second) >= kSharedParameterChars &&
        tools_describing[described] >= kSharedSentenceTools) {
      shared.push_back(SharedParameter{.name = std::string(described.first),
                                       .description = std::string(described.second)});
    }
  }
  return shared;
}

Compaction compact_input_schema(json::object& schema, std::string_view tool_name) {
  Compaction compaction;
  // Definitions first: what no $ref reaches must not keep $schema (compacting is idempotent).
  compaction.definitions_removed = remove_unreachable_definitions(schema);
  if (dialect_is_default(schema)) compaction.keywords_removed += erase_member(schema, "$schema");
  const json::value* title = schema.if_contains("title");
  if (title != nullptr && title->is_string() &&
      names_the_arguments(title->get_string(), tool_name)) {
    compaction.keywords_removed += erase_member(schema, "title");
  }
  strip_annotations(schema, "", compaction);
  return compaction;
}

CompactDescription compact_description(std::string_view description,
                                       std::span<const std::string> shared) {
  CompactDescription compact;
  for (std::string_view piece : split_sentences(description)) {
    const std::string_view sentence = trimmed(piece);
    if (std::find(shared.begin(), shared.end(), sentence) != shared.end()) {
      ++compact.shared_removed;
      continue;
    }
    if (sentence.empty()) continue;
    if (char_count(compact.text) >= kDescriptionChars) {
      compact.shortened = true;
      break;
    }
    if (compact.text.empty() && char_count(sentence) > kLongestSentenceChars) {
      compact.text = cut_at_space(sentence);
      compact.shortened = true;
      break;
    }
    if (compact.text.empty()) piece = piece.substr(piece.find(sentence));
    compact.text += piece;
  }
  while (!compact.text.empty() && is_blank_byte(compact.text.back())) compact.text.pop_back();
  if (compact.shortened) compact.text += kShortenedMark;
  return compact;
}

Compaction compact_tool(json::object& tool, std::span<const std::string> shared,
                        std::span<const SharedParameter> parameters) {
  Compaction compaction;
  const std::size_t parameters_removed = remove_shared_parameters(tool, parameters);
  std::optional<std::string> name;
  if (const json::value* given = tool.if_contains("name"); given != nullptr && given->is_string()) {
    name.emplace(given->get_string());
  }
  if (json::value* schema = tool.if_contains("inputSchema");
      schema != nullptr && schema->is_object()) {
    compaction = compact_input_schema(schema->get_object(), name.value_or(""));
  }
  compaction.parameters_removed = parameters_removed;
  if (json::value* description = tool.if_contains("description");
      description != nullptr && description->is_string()) {
    CompactDescription compact = compact_description(description->get_string(), shared);
    compaction.shared_removed = compact.shared_removed;
    compaction.description_shortened = compact.shortened;
    if (compact.shared_removed > 0 || compact.shortened) *description = compact.text;
  }
  return compaction;
}

}  // namespace ctxguard::mcp
