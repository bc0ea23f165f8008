#pragma once
// Cutting text so a piece of it fits a budget: the hard cap's last resort, and the ranges
// `ctxguard_fetch` serves after it. It cuts at a line break when it can, and never inside a UTF-8
// sequence (chunking at semantic boundaries is text_chunk's).

#include <cstddef>
#include <string_view>

#include "budget/answer_size.hpp"

namespace ctxguard::pipeline {

// The end of the piece of `text` that starts at `begin` and is within `limits`: at most
// limits.tokens estimated tokens, and within its characters, bytes and lines when set. The cut
// falls after the last line break in the second half of the longest such prefix when there is
// one, otherwise at a UTF-8 character boundary. Always takes at least one character (progress is
// guaranteed); returns text.size() when the rest fits.
std::size_t cut_text(std::string_view text, std::size_t begin, const budget::FitBudget& limits);

}  // namespace ctxguard::pipeline
