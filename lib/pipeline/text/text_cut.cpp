#include "pipeline/text/text_cut.hpp"

#include <algorithm>

#include "budget/token_estimator.hpp"
#include "support/most_that_fit.hpp"
#include "support/text_scan.hpp"

namespace ctxguard::pipeline {

using text::is_continuation;
using text::kMaxContinuation;

std::size_t cut_text(std::string_view text, std::size_t begin, const budget::FitBudget& limits) {
  begin = std::min(begin, text.size());
  const std::size_t tokens = limits.tokens;
  // Characters, bytes and lines are exact: the piece never passes the first of them.
  const std::size_t within = budget::prefix_within(text, begin, limits);
  const std::string_view rest = text.substr(begin, within - begin);
  const bool rest_fits = budget::estimate_tokens(rest) <= tokens;
  if (within == text.size() && rest_fits) return text.size();
  // The longest prefix that fits (estimates grow with length).
  std::size_t length = rest.size();
  if (!rest_fits) {
    length = most_that_fit(0, std::min(rest.size(), std::max<std::size_t>(tokens, 1) * 16),
                           [&](std::size_t bytes) {
                             return budget::estimate_tokens(rest.substr(0, bytes)) <= tokens;
                           });
  }
  const std::size_t newline = rest.substr(0, length).rfind('\n');
  if (newline != std::string_view::npos && newline + 1 >= length / 2) {
    length = newline + 1;
  } else {
    for (std::size_t back = 0; back < kMaxContinuation && length > 0 && length < rest.size() &&
                               is_continuation(rest[length]);
         ++back) {
      --length;
    }
  }
  if (length == 0) {  // not even one character fits: take one anyway
    const std::string_view after = text.substr(begin);
    length = after.empty() ? 0 : 1;
    for (std::size_t step = 0;
         step < kMaxContinuation && length < after.size() && is_continuation(after[length]);
         ++step) {
      ++length;
    }
  }
  return begin + length;
}

}  // namespace ctxguard::pipeline
