#pragma once
// "The most that fit": the largest count (of bytes, items, levels) an answer can show within its
// limits. Every stage that shortens something to fit searches the same way.

#include <cstddef>

namespace ctxguard {

// The largest n in [low, high] for which `fits(n)` holds, where `fits` holds up to some n and
// for none past it, and `low` is what the caller falls back to without asking (it is never
// passed to `fits`). Bisection: about log2(high - low) calls, each above every call that fit and
// below every call that did not, so a caller may build each try on the last one that fit.
template <class Fits>
std::size_t most_that_fit(std::size_t low, std::size_t high, Fits&& fits) {
  while (low < high) {
    const std::size_t middle = low + (high - low + 1) / 2;
    if (fits(middle)) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  return low;
}

}  // namespace ctxguard
