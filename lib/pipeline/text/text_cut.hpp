#pragma once
// Cutting text so a piece of it fits a number of tokens: the hard cap's last resort, and the
// ranges `ctxguard_fetch` serves after it. It cuts at a line break when it can, and never inside a
// UTF-8 sequence (chunking at semantic boundaries is text_chunk's).

#include <cstddef>
#include <string_view>

namespace ctxguard::pipeline {

// The end of the piece of `text` that starts at `begin` and costs at most `tokens`: after the last
// line break in the second half of the longest such prefix when there is one, otherwise at a
// UTF-8 character boundary. Always takes at least one character (progress is guaranteed);
// returns text.size() when the rest fits.
std::size_t cut_text(std::string_view text, std::size_t begin, std::size_t tokens);

}  // namespace ctxguard::pipeline
