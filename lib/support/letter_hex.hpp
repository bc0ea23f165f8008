#pragma once
// Letter hex: each byte as two letters of a-q, its high nibble first, and never the same letter
// twice in a row. What cursors travel as (docs/protocol.md section 6): URL- and JSON-safe like
// base64url, and made of one character class without repeats, so the token estimate of a cursor
// depends on its length alone and never on its random bytes (an answer's shape must not change
// from one session to the next; the estimator prices a letter after itself apart, as runs of a
// letter cost the tokenizer more, budget/token_model.hpp).
//
// A nibble v after the letter of index p (a = 0 .. q = 16) is the letter (p + 1 + v) mod 17: the
// 16 letters other than the one before it. The first letter comes after a virtual q, so it is
// a-p, the nibble itself ("\x00\x1f" is "abdc"). Claude's tokenizer spends about 7% more tokens on
// it than on base64url of the same bytes.

#include <optional>
#include <string>
#include <string_view>

namespace ctxguard {

// 2 * n characters for n bytes.
std::string letter_hex_encode(std::string_view bytes);

// The bytes `text` encodes, or nullopt for an odd length, a character outside a-q or a letter
// after itself, so each byte string has exactly one accepted spelling. Never throws except
// std::bad_alloc.
std::optional<std::string> letter_hex_decode(std::string_view text);

}  // namespace ctxguard
