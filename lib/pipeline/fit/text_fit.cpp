#include "pipeline/fit/text_fit.hpp"

#include <algorithm>

#include "pipeline/fit/fitter.hpp"

namespace ctxguard::pipeline {

TextReserve TextReserve::for_trailers(const FitBudget& budget, std::size_t tokens,
                                      std::size_t chars, std::size_t items) {
  // Each trailing item is joined with '\n': one character and byte more, and a line of its own;
  // so is the way on before the text (kWayOn*), once. Never more than half a limit.
  const auto share = [items](std::size_t limit, std::size_t each, std::size_t once) {
    return static_cast<double>(std::min(limit / 2, each * items + once));
  };
  // Measured as JSON (json_bytes, planned as bytes), a trailer's quotes are escaped (about a
  // quarter more) and every item is wrapped as {"type":"text","text":...}, the text's own too.
  const std::size_t json_each = chars + chars / 4 + budget::kJsonTextItemBytes + 1;
  const std::size_t json_once = kWayOnChars + 2 * budget::kJsonTextItemBytes + 3;
  const double bytes = budget.json_bytes == 0 ? share(budget.bytes, chars + 1, kWayOnChars + 1)
                                              : share(budget.bytes, json_each, json_once);
  return TextReserve{.cost = Cost{.tokens = share(budget.tokens, tokens, kWayOnTokens),
                                  .chars = share(budget.chars, chars + 1, kWayOnChars + 1),
                                  .bytes = bytes},
                     .lines = static_cast<std::size_t>(share(budget.lines, 1, 1))};
}

void TextReserve::correct(const AnswerSize& measured, const FitBudget& budget) {
  cost = overshoot_after(cost, measured, budget);
  if (budget.lines != 0 && measured.lines > budget.lines) lines += measured.lines - budget.lines;
}

FitBudget text_room(const FitBudget& budget, const TextReserve& reserve) {
  const auto room = [](std::size_t limit, double reserved, std::size_t smallest) -> std::size_t {
    if (limit == 0) return 0;
    const double floor = static_cast<double>(std::min(limit / 2, smallest));
    return static_cast<std::size_t>(std::max(static_cast<double>(limit) - reserved, floor));
  };
  return FitBudget{
      .tokens = room(budget.tokens, reserve.cost.tokens, kSmallestTextTokens),
      .chars = room(budget.chars, reserve.cost.chars, kSmallestTextChars),
      .bytes = room(budget.bytes, reserve.cost.bytes, kSmallestTextChars),
      .lines = room(budget.lines, static_cast<double>(reserve.lines), kSmallestTextLines),
      .json_bytes = room(budget.json_bytes, reserve.cost.bytes, kSmallestTextChars)};
}

TextFitResult fit_text(const FitBudget& budget, TextReserve reserve, const TextRender& render) {
  TextFitResult result{.size = render(reserve), .fitted = false, .rounds = 1};
  result.fitted = fits(result.size, budget);
  while (!result.fitted && result.rounds < kPlanningRounds) {
    reserve.correct(result.size, budget);
    const AnswerSize size = render(reserve);
    ++result.rounds;
    if (size == result.size) break;  // at its smallest: it stands
    result.size = size;
    result.fitted = fits(size, budget);
  }
  return result;
}

}  // namespace ctxguard::pipeline
