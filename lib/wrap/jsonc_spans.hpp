#pragma once
// Where each value of a JSON text with comments and trailing commas (VS Code's mcp.json) sits:
// the byte spans an in-place edit needs. Boost.JSON reads the values; this only locates them, in
// a text Boost.JSON has already accepted.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wrap/text_edit.hpp"

namespace ctxguard::wrap {

struct JsonSpans {
  struct Member;
  TextSpan span;                    // the value, from its first byte to one past its last
  std::vector<Member> members;      // an object's, in the text's order
  std::vector<JsonSpans> elements;  // an array's
  bool is_object = false;
  bool is_array = false;

  // The member named `key` (the last, when the text repeats it, as Boost.JSON reads it), or null.
  const Member* member(std::string_view key) const;
};

struct JsonSpans::Member {
  std::string key;  // decoded
  TextSpan key_span;
  JsonSpans value;
};

// The spans of `text`, or nullopt when it is not one JSON value (comments and trailing commas
// allowed), or nests deeper than 1,024 levels.
std::optional<JsonSpans> scan_json_spans(std::string_view text);

}  // namespace ctxguard::wrap
