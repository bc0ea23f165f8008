#include "pipeline/fetch/fetch_call.hpp"

// Which answer a call gets: the cached part's kind (text or JSON) against the cursor's kind and
// the arguments beside it (docs/protocol.md section 5).

#include <algorithm>

#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;
using cursor::CursorKind;

Refusable<> FetchCall::run() {
  if (request_.start_line || request_.end_line) {
    if (part_.is_json) return refusal(FetchError::kLinesOnJson);
    const std::size_t first = request_.start_line.value_or(1);
    const std::size_t last = request_.end_line.value_or(SIZE_MAX / 2);
    if (last < first) return refusal(FetchError::kEndBeforeStart);
    answer_lines(first, last);
    return {};
  }
  return part_.is_json ? answer_json_part() : answer_text_part();
}

Refusable<> FetchCall::answer_text_part() {
  if (request_.path) return refusal(FetchError::kPathOnText);
  if (request_.aggregate) return refusal(FetchError::kAggregateNotArray);
  if (request_.query.empty()) return answer_text_cursor();
  // The same search continues where its cursor points; a new one starts at the first line.
  const cursor::CursorPayload& payload = request_.payload;
  const std::size_t from = payload.kind == CursorKind::kTextLines && payload.query == request_.query
                               ? static_cast<std::size_t>(payload.offset)
                               : 1;
  return answer_line_query(std::max<std::size_t>(from, 1));
}

Refusable<> FetchCall::answer_text_cursor() {
  const auto offset = static_cast<std::size_t>(request_.payload.offset);
  switch (request_.payload.kind) {
    case CursorKind::kTextChunk:
      if (offset >= part_.chunks.size()) break;
      answer_chunk(offset);
      return {};
    case CursorKind::kTextLines:
      if (offset > part_.text.size()) break;
      answer_lines(0, request_.payload.limit, offset);
      return {};
    case CursorKind::kTextRange:
    case CursorKind::kValue:
      if (offset > part_.text.size()) break;
      answer_text(part_.text, offset, "", {});
      return {};
    case CursorKind::kArrayPage:
    case CursorKind::kAggregate:
      break;
  }
  return refusal(FetchError::kMismatch);
}

Refusable<> FetchCall::answer_json_part() {
  const std::string path = request_.path.value_or(request_.payload.path);
  const json::value* value = find_pointer(part_.json, path);
  if (value == nullptr) {
    return request_.path ? FetchRefusal{.error = FetchError::kNoValueAtPath, .detail = path}
                         : refusal(FetchError::kMismatch);
  }
  if (request_.aggregate) {
    const json::array* array = value->if_array();
    if (array == nullptr) return refusal(FetchError::kAggregateNotArray);
    return answer_aggregate(*array, path);
  }
  if (request_.payload.kind == CursorKind::kTextRange && !request_.path) {
    return answer_value_piece(*value, path);
  }
  if (const json::string* string = value->if_string()) {
    if (!request_.query.empty()) {
      return FetchRefusal{.error = FetchError::kQueryOnString, .detail = path};
    }
    answer_text(*string, 0, path, value_piece_fields(path, PieceOf::kString));
    return {};
  }
  if (const json::array* array = value->if_array()) return answer_array(*array, path);
  if (!request_.query.empty()) return refusal(FetchError::kQueryOnScalar);
  answer_value(*value, path);
  return {};
}

// A value served as text in pieces (a string, or a value too large for any layout): the piece
// from where the cursor points.
Refusable<> FetchCall::answer_value_piece(const json::value& value, const std::string& path) {
  if (!request_.query.empty()) return refusal(FetchError::kQueryOnPiece);
  const auto offset = static_cast<std::size_t>(request_.payload.offset);
  if (const json::string* string = value.if_string()) {
    if (offset > string->size()) return refusal(FetchError::kMismatch);
    answer_text(*string, offset, path, value_piece_fields(path, PieceOf::kString));
    return {};
  }
  const std::string subtree = to_json(value);
  if (offset > subtree.size()) return refusal(FetchError::kMismatch);
  answer_text(subtree, offset, path, value_piece_fields(path, PieceOf::kJsonText));
  return {};
}

Refusable<> FetchCall::answer_array(const json::array& array, const std::string& path) {
  // An array page's cursor continues at its offset; `path` starts at the array's first item.
  const bool continued = request_.payload.kind == CursorKind::kArrayPage && !request_.path;
  const std::size_t begin = continued ? static_cast<std::size_t>(request_.payload.offset) : 0;
  if (begin > array.size()) return refusal(FetchError::kMismatch);
  if (!request_.query.empty()) return answer_array_query(array, path, begin);
  answer_page(Page{.array = array, .path = path, .begin = begin});
  return {};
}

}  // namespace ctxguard::pipeline
