// What fitting may do and how far an answer is over its budget: the settings of a tool as the
// fit engine takes them, and the arithmetic its planning rounds share (fitter.hpp).
#include <algorithm>
#include <limits>

#include "pipeline/fit/fitter.hpp"  // declares what this file defines
#include "support/glob.hpp"

namespace ctxguard::pipeline {
namespace {

// A written answer over its budget by `over` tokens: the next round plans to remove that much
// more, and a quarter and a little on top, since what a cut saves is estimated item by item
// apart from the text around the items. Characters and bytes are exact but `_ctxguard` is an
// allowance: the same correction, with a margin of about as many characters.
constexpr double kOvershootFactor = 1.25;
constexpr double kOvershootMargin = 32;
constexpr double kOvershootCharsMargin = 128;

constexpr double kNoLimit = -std::numeric_limits<double>::infinity();

}  // namespace

FitOptions FitOptions::of(const config::BudgetSettings& settings, std::string_view tool) {
  FitOptions options{.budget = FitBudget::of(settings),
                     .page_size = settings.page_size,
                     .min_cut_items = settings.min_cut_items,
                     .summarize = settings.summarization,
                     .project = settings.summary.project,
                     .max_string_chars = settings.summary.max_string_chars,
                     .max_depth = settings.summary.max_depth,
                     .projection_rule = nullptr};
  for (const config::ProjectionRule& rule : settings.summary.projections) {
    if (glob_matches(rule.tool_glob, tool)) {
      options.projection_rule = &rule.fields;
      break;
    }
  }
  return options;
}

Cost excess_over(const Cost& cost, const FitBudget& budget) {
  const auto over = [](double value, std::size_t limit) {
    return limit == 0 ? kNoLimit : value - static_cast<double>(limit);
  };
  return Cost{.tokens = cost.tokens - static_cast<double>(budget.tokens),
              .chars = over(cost.chars, budget.chars),
              .bytes = over(cost.bytes, budget.bytes)};
}

Cost overshoot_after(const Cost& overshoot, const AnswerSize& measured, const FitBudget& budget) {
  // Nothing for a unit within its limit (or not limited).
  const auto more = [](std::size_t size, std::size_t limit, double margin) {
    if (limit == 0 || size <= limit) return 0.0;
    return static_cast<double>(size - limit) * kOvershootFactor + margin;
  };
  Cost next = overshoot;
  next.tokens += more(measured.tokens, budget.tokens, kOvershootMargin);
  next.chars += more(measured.chars, budget.chars, kOvershootCharsMargin);
  // JSON bytes are planned as bytes (budget/answer_size.hpp): whichever is further over.
  next.bytes += std::max(more(measured.bytes, budget.bytes, kOvershootCharsMargin),
                         more(measured.json_bytes, budget.json_bytes, kOvershootCharsMargin));
  return next;
}

}  // namespace ctxguard::pipeline
