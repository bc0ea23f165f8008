#pragma once
// A tools/call result seen as the parts a model reads: the text items of `content`, and
// `structuredContent`. Text that holds a JSON object or array is parsed so it can be compacted
// and paginated; structuredContent is related to the text it usually repeats, so both can be
// rewritten consistently (Claude Code shows the model only structuredContent, Claude Desktop only
// content).

#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "budget/answer_size.hpp"
#include "pipeline/json_arena.hpp"

namespace ctxguard::pipeline {

inline constexpr std::size_t kNotContent = std::numeric_limits<std::size_t>::max();

struct ResultPart {
  std::size_t content_index = kNotContent;  // content[i]; kNotContent for structuredContent
  std::string_view text;                    // text items: the text the server sent
  bool is_json = false;
  std::shared_ptr<JsonArena> arena;  // owns the memory of `json` (declared first: outlives it)
  boost::json::value json;           // is_json: the parsed text (or a copy of structuredContent)
  std::size_t original_tokens = 0;
};

enum class StructuredRelation {
  kAbsent,
  kMirror,       // structuredContent is JSON-equal to the JSON of part `related_part`
  kWrapper,      // a top-level string member of it equals the text of part `related_part`
  kIndependent,  // anything else: it is a part of its own, `related_part`
};

struct ResultParts {
  std::vector<ResultPart> parts;
  StructuredRelation relation = StructuredRelation::kAbsent;
  std::size_t related_part = 0;
  std::size_t structured_tokens = 0;
};

// Tokens a model sees for a result: every text item's text plus structuredContent serialized.
struct ResultTokens {
  std::size_t total = 0;
  std::vector<std::size_t> items;  // per content item (0 for items that are not text)
  std::size_t structured = 0;
};

// The text of a `{"type": "text", "text": ...}` content item, or nullptr.
const boost::json::string* text_of(const boost::json::value& item);

// nullopt when `result` is not a CallToolResult (no `content` array).
std::optional<ResultTokens> result_tokens(const boost::json::object& result);

// The size of `result` as a client reads it: `tokens` (its estimate, result_tokens' total) and
// the characters, bytes and lines of its text items joined (budget/answer_size.hpp).
budget::AnswerSize result_size(const boost::json::object& result, std::size_t tokens);

// A result with a `structuredContent` (not null) is measured in JSON bytes on that alone, as
// Codex measures it: sets `size.json_bytes` to its minified size.
void measure_structured_json(budget::AnswerSize& size, const boost::json::value* structured);

// A text item's JSON object or array, parsed into an arena of its own.
struct ParsedText {
  std::shared_ptr<JsonArena> arena;  // declared first: outlives `json`
  boost::json::value json;
};

// `text` parsed, or nullopt when it is not a JSON object or array, or when its parsed form would
// need more than `max_bytes` of arena (or of parser scratch): such a value could not be kept in a
// cache of that size, and parsing it whole could take 25 times its text (an array of small
// numbers). The text is then handled as text (chunked, or cut), with memory bounded.
std::optional<ParsedText> parse_text_json(std::string_view text, std::size_t max_bytes);

// Splits `result` (whose tokens are `tokens`) into parts. With `parse_texts`, text items holding
// a JSON object or array are parsed (each into its own arena, see parse_text_json with
// `max_parse_bytes`) and an independent structuredContent is copied into one.
ResultParts split_result(const boost::json::object& result, const ResultTokens& tokens,
                         bool parse_texts, std::size_t max_parse_bytes);

// How the text item that structuredContent relates to was rewritten.
enum class TextChange { kCompacted, kPaginated, kCut };

// The structuredContent to send once part `split.related_part` reads `new_text` (for a cut, with
// `cut_meta`, the `_ctxguard` object of its trailing item), or nullopt to keep `original`. A
// mirror becomes the new JSON (or `{"_ctxguard", "text"}` for a cut); a wrapper's members that
// repeated the old text hold the new one, as a value when it is JSON (a page of a top-level
// array: its items), after the answer's `_ctxguard`; an independent value was a part of its own.
std::optional<boost::json::value> rewrite_structured(const boost::json::value& original,
                                                     const ResultParts& split, TextChange change,
                                                     std::string_view new_text,
                                                     const boost::json::value* cut_meta = nullptr);

}  // namespace ctxguard::pipeline
