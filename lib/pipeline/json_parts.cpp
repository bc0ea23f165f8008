#include "pipeline/json_parts.hpp"

#include <memory>
#include <optional>

#include "budget/token_estimator.hpp"
#include "pipeline/json_arena.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

const json::array* content_of(const json::object& result) {
  const json::value* content = result.if_contains("content");
  return content != nullptr ? content->if_array() : nullptr;
}

bool looks_like_json_container(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

// The value a paginated JSON answer shows, its `_ctxguard` moved out to `meta`: the page of a
// top-level array ({"_ctxguard": ..., "items": [...]}, `wrapped` in its `_ctxguard`) shows its
// items.
json::value take_answer_meta(json::value answer, json::value& meta) {
  json::object* object = answer.if_object();
  if (object == nullptr) return answer;
  const auto found = object->find("_ctxguard");
  if (found == object->end()) return answer;
  meta = std::move(found->value());
  object->erase(found);
  const json::object* fields = meta.if_object();
  json::value* items = object->if_contains("items");
  if (fields != nullptr && fields->contains("wrapped") && items != nullptr && object->size() == 1) {
    return std::move(*items);
  }
  return answer;
}

}  // namespace

const json::string* text_of(const json::value& item) {
  const json::object* object = item.if_object();
  if (object == nullptr) return nullptr;
  const json::value* type = object->if_contains("type");
  if (type == nullptr || !type->is_string() || type->get_string() != "text") return nullptr;
  const json::value* text = object->if_contains("text");
  return text != nullptr ? text->if_string() : nullptr;
}

std::optional<ResultTokens> result_tokens(const json::object& result) {
  const json::array* content = content_of(result);
  if (content == nullptr) return std::nullopt;
  ResultTokens tokens;
  tokens.items.resize(content->size());
  for (std::size_t i = 0; i < content->size(); ++i) {
    if (const json::string* text = text_of((*content)[i])) {
      tokens.items[i] = budget::estimate_tokens(*text);
      tokens.total += tokens.items[i];
    }
  }
  if (const json::value* structured = result.if_contains("structuredContent")) {
    tokens.structured = budget::estimate_json_tokens(*structured);
    tokens.total += tokens.structured;
  }
  return tokens;
}

std::optional<ParsedText> parse_text_json(std::string_view text, std::size_t max_bytes) {
  if (!looks_like_json_container(text)) return std::nullopt;
  auto arena = std::make_shared<JsonArena>(max_bytes);
  auto value = parse_json(text, arena->storage(), max_bytes);
  if (!value || !(value->is_object() || value->is_array())) return std::nullopt;
  // Move-constructed, never assigned: assignment would copy out of the arena.
  return ParsedText{std::move(arena), std::move(*value)};
}

budget::AnswerSize result_size(const json::object& result, std::size_t tokens) {
  budget::TextMeasure measure;
  if (const json::array* content = content_of(result)) {
    for (const json::value& item : *content) {
      if (const json::string* text = text_of(item)) measure.add_item(*text);
    }
  }
  budget::AnswerSize size = measure.size();
  size.tokens = tokens;
  measure_structured_json(size, result.if_contains("structuredContent"));
  return size;
}

void measure_structured_json(budget::AnswerSize& size, const json::value* structured) {
  if (structured != nullptr && !structured->is_null()) size.json_bytes = json_size(*structured);
}

ResultParts split_result(const json::object& result, const ResultTokens& tokens, bool parse_texts,
                         std::size_t max_parse_bytes) {
  ResultParts split;
  if (const json::array* content = content_of(result)) {
    for (std::size_t i = 0; i < content->size(); ++i) {
      const json::string* text = text_of((*content)[i]);
      if (text == nullptr) continue;
      const std::string_view text_view(text->data(), text->size());
      std::optional<ParsedText> parsed;
      if (parse_texts) parsed = parse_text_json(text_view, max_parse_bytes);
      const bool is_json = parsed.has_value();
      split.parts.push_back(ResultPart{.content_index = i,
                                       .text = text_view,
                                       .is_json = is_json,
                                       .arena = is_json ? std::move(parsed->arena) : nullptr,
                                       .json = is_json ? std::move(parsed->json) : json::value(),
                                       .original_tokens = tokens.items[i]});
    }
  }

  const json::value* structured = result.if_contains("structuredContent");
  if (structured == nullptr) return split;
  split.structured_tokens = tokens.structured;
  for (std::size_t k = 0; k < split.parts.size(); ++k) {
    const ResultPart& part = split.parts[k];
    if (part.is_json && part.json == *structured) {
      split.relation = StructuredRelation::kMirror;
      split.related_part = k;
      return split;
    }
  }
  if (const json::object* object = structured->if_object()) {
    for (std::size_t k = 0; k < split.parts.size(); ++k) {
      for (const json::key_value_pair& member : *object) {
        const json::string* text = member.value().if_string();
        if (text != nullptr && std::string_view(*text) == split.parts[k].text) {
          split.relation = StructuredRelation::kWrapper;
          split.related_part = k;
          return split;
        }
      }
    }
  }
  split.relation = StructuredRelation::kIndependent;
  split.related_part = split.parts.size();
  ResultPart part;
  part.original_tokens = split.structured_tokens;
  if (parse_texts && (structured->is_object() || structured->is_array())) {
    part.is_json = true;
    part.arena = std::make_shared<JsonArena>();
    std::destroy_at(&part.json);
    std::construct_at(&part.json, *structured, part.arena->storage());
  }
  split.parts.push_back(std::move(part));
  return split;
}

std::optional<json::value> rewrite_structured(const json::value& original, const ResultParts& split,
                                              TextChange change, std::string_view new_text,
                                              const json::value* cut_meta) {
  if (split.relation != StructuredRelation::kWrapper) {
    switch (change) {
      case TextChange::kCompacted:
        return std::nullopt;  // JSON-equal already
      case TextChange::kPaginated: {
        auto parsed = parse_json(new_text);
        if (parsed) return std::move(*parsed);
        return std::nullopt;
      }
      case TextChange::kCut:
        return json::value(json::object{
            {"_ctxguard", cut_meta != nullptr ? *cut_meta : json::value(json::object{})},
            {"text", new_text}});
    }
  }
  // A wrapper: the members that repeated the part's text now hold what replaced it, after the
  // answer's `_ctxguard` (first, as in every answer: docs/protocol.md 3.1).
  json::value meta;
  json::value replacement = json::string(new_text);
  if (change == TextChange::kCut) {
    meta = cut_meta != nullptr ? *cut_meta : json::value(json::object{});
  } else if (split.parts[split.related_part].is_json) {
    // Rewritten JSON goes in as a value, not as JSON text escaped in a string: Claude Code and
    // Codex show the model structuredContent (docs/protocol.md 4).
    if (auto parsed = parse_json(new_text)) {
      replacement = change == TextChange::kPaginated ? take_answer_meta(std::move(*parsed), meta)
                                                     : std::move(*parsed);
    }
  }
  json::object wrapper;
  if (!meta.is_null()) wrapper["_ctxguard"] = std::move(meta);
  const std::string_view old_text = split.parts[split.related_part].text;
  for (const json::key_value_pair& member : original.as_object()) {
    const json::string* text = member.value().if_string();
    if (text != nullptr && std::string_view(*text) == old_text) {
      wrapper[member.key()] = replacement;
    } else {
      wrapper[member.key()] = member.value();
    }
  }
  return json::value(std::move(wrapper));
}

}  // namespace ctxguard::pipeline
