#pragma once
// RFC 4648 section 5 base64url without padding: what cursors travel as (URL- and JSON-safe).

#include <optional>
#include <string>
#include <string_view>

namespace ctxguard {

// Alphabet A-Z a-z 0-9 - _, no `=` padding: ceil(4 * n / 3) characters for n bytes.
std::string base64url_encode(std::string_view bytes);

// The bytes `text` encodes, or nullopt for any character outside the alphabet, for `=` padding,
// for a length that no encoding produces (length % 4 == 1) and for non-zero trailing bits, so
// each byte string has exactly one accepted encoding. Never throws except std::bad_alloc.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace ctxguard
