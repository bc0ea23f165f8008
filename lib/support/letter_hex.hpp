#pragma once
// Letter hex: each byte as two letters of a-p, its high nibble first ("\x00\x1f" is "aabp"). What
// cursors travel as (docs/protocol.md section 6): URL- and JSON-safe like base64url, and made of
// one character class only, so the token estimate of a cursor depends on its length alone and
// never on its random bytes (an answer's shape must not change from one session to the next).
// Claude's tokenizer spends 7% more tokens on it than on base64url of the same bytes.

#include <optional>
#include <string>
#include <string_view>

namespace ctxguard {

// 2 * n characters for n bytes.
std::string letter_hex_encode(std::string_view bytes);

// The bytes `text` encodes, or nullopt for an odd length or any character outside a-p, so each
// byte string has exactly one accepted spelling. Never throws except std::bad_alloc.
std::optional<std::string> letter_hex_decode(std::string_view text);

}  // namespace ctxguard
