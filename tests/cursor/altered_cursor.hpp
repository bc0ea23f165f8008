#pragma once
// A cursor with one letter changed and still well-formed letter hex (a-q, never a letter twice
// in a row: support/letter_hex.hpp), so ctxguard decodes it and finds the tag wrong. The e2e
// tests have the same helper, alterCursor in tests/e2e/lib/harness.mjs.

#include <string>
#include <string_view>

namespace ctxguard::testing {

inline std::string altered_cursor(std::string cursor, std::size_t at) {
  for (const char letter : std::string_view("abcd")) {
    if (letter != cursor[at] && (at == 0 || letter != cursor[at - 1]) &&
        (at + 1 == cursor.size() || letter != cursor[at + 1])) {
      cursor[at] = letter;
      break;
    }
  }
  return cursor;
}

}  // namespace ctxguard::testing
