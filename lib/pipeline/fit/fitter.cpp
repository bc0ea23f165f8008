#include "pipeline/fit/fitter.hpp"

#include <algorithm>

#include "pipeline/fit/fit_run.hpp"
#include "support/most_that_fit.hpp"

namespace ctxguard::pipeline {

namespace {

constexpr FitLevel kFitLevels[] = {FitLevel::kPages,  FitLevel::kSummarize, FitLevel::kBreadth,
                                   FitLevel::kFewer,  FitLevel::kProject,   FitLevel::kShrink,
                                   FitLevel::kTighten};

// The most JSON bytes per byte of text an answer is planned with: a quote or a line break is
// two; the text items' `{"type":"text"...}` and structuredContent beside short text are not
// the text's escapes.
constexpr double kMostJsonGrowth = 2.0;

// Field costs are estimated apart from the records around them: projection aims a little past
// what is left to save.
constexpr double kProjectionFactor = 1.1;
constexpr double kProjectionMargin = 16;

// The planning allowance for `_ctxguard` itself.
constexpr Cost kMetadataCost{.tokens = kMetadataTokens + kWayOnTokens,
                             .chars = kMetadataChars + kWayOnChars,
                             .bytes = kMetadataChars + kWayOnChars};

// Plans `level`'s cuts on a planner holding the values; true when they remove `excess`.
bool plan_level(CutPlanner& planner, FitLevel level, const Cost& excess) {
  if (planner.cut_to_pages(excess)) return true;
  switch (level) {
    case FitLevel::kPages:
    case FitLevel::kSummarize:
    case FitLevel::kBreadth:
      return false;
    case FitLevel::kFewer:
    case FitLevel::kProject:
      return planner.shrink_shown(planner.excess_left(), kMinItemsShown);
    case FitLevel::kShrink:
    case FitLevel::kTighten:
      return planner.shrink_shown(planner.excess_left(), 1);
  }
  return false;
}

}  // namespace

namespace detail {

FitResult Fitter::run() {
  for (const FitLevel level : kFitLevels) {
    if (!enter(level)) continue;
    Outcome outcome = plan_rounds(level);
    // Tighter again, until it fits or nothing is left to tighten.
    while (level == FitLevel::kTighten && outcome == Outcome::kOver && tighten(result_.plan.view)) {
      ++view_version_;
      outcome = plan_rounds(level);
    }
    if (outcome == Outcome::kFitted || outcome == Outcome::kStopped) break;
  }
  give_back();
  return std::move(result_);
}

bool Fitter::enter(FitLevel level) {
  ValueView& view = result_.plan.view;
  switch (level) {
    case FitLevel::kPages:
    case FitLevel::kFewer:
    case FitLevel::kShrink:
      return true;
    case FitLevel::kSummarize: {
      if (!options_.summarize) return false;
      const bool reached = limits_reach_values();
      view.max_string_chars = options_.max_string_chars;
      view.max_depth = options_.max_depth;
      // Limits no value reaches would price and plan the values as the level before did:
      // nothing to add (the view keeps them, for the levels after).
      if (!reached) return false;
      ++view_version_;
      return view.summarizes();
    }
    case FitLevel::kBreadth:
      // A depth limit of 0 says nothing is ever collapsed.
      return options_.summarize && options_.max_depth != 0 && choose_array_nesting();
    case FitLevel::kProject:
      ++view_version_;
      return options_.summarize && options_.project && project();
    case FitLevel::kTighten:
      ++view_version_;
      return options_.summarize && tighten(view);
  }
  return false;
}

bool Fitter::limits_reach_values() const {
  if (!pristine_ || result_.plan.view.tables) return true;
  return (options_.max_string_chars != 0 &&
          pristine_->longest_string() > options_.max_string_chars) ||
         (options_.max_depth != 0 && pristine_->deepest_container() > options_.max_depth);
}

bool Fitter::choose_array_nesting() {
  const std::size_t deepest = planner()->deepest_array_nesting();
  if (deepest == 0) return false;
  // Showing fewer levels never shows more; one level is shown when none fits.
  set_array_nesting(
      most_that_fit(1, deepest, [&](std::size_t levels) { return pages_fit(levels); }));
  return true;
}

bool Fitter::pages_fit(std::size_t levels) {
  set_array_nesting(levels);
  const std::unique_ptr<CutPlanner> cuts = planner();
  return cuts->cut_to_pages(excess_over(subject_.cost(*cuts) + kMetadataCost, options_.budget));
}

void Fitter::set_array_nesting(std::size_t levels) {
  if (result_.plan.view.max_array_nesting == levels) return;
  result_.plan.view.max_array_nesting = levels;
  ++view_version_;
}

bool Fitter::project() {
  FitPlan& plan = result_.plan;
  const std::vector<RecordGroup> groups = subject_.record_groups(last_map_, plan.view);
  // Projection prices fields in tokens: what is left over in another unit is taken at the
  // answer's own characters (or bytes) per token.
  plan.projections = plan_projections(groups, tokens_left() * kProjectionFactor + kProjectionMargin,
                                      options_.projection_rule, kMinProjectedFields, plan.view);
  return !plan.projections.empty();
}

std::unique_ptr<CutPlanner> Fitter::planner() {
  if (!pristine_ || pristine_version_ != view_version_) {
    // The priced planner saw whole values: it serves only a view that shows them whole.
    if (priced_ && !result_.plan.view.summarizes()) {
      pristine_ = std::move(priced_);
    } else {
      pristine_ =
          std::make_unique<CutPlanner>(options_.page_size, options_.min_cut_items, kCursorCost);
      pristine_->set_view(result_.plan.view);
      pristine_->count_chars(options_.budget.chars != 0);
      subject_.add_values(*pristine_);
    }
    priced_.reset();
    pristine_version_ = view_version_;
  }
  return std::make_unique<CutPlanner>(*pristine_);
}

Fitter::Outcome Fitter::plan_rounds(FitLevel level) {
  const FitBudget& budget = options_.budget;
  const int rounds = level == FitLevel::kTighten ? kTightenRounds : kPlanningRounds;
  // A tightening step starts from what the steps before it learned of how far written answers
  // come out over their plans: with two rounds each, starting from nothing every time could
  // end over the budget showing several items.
  Cost overshoot = level == FitLevel::kTighten ? tighten_overshoot_ : Cost{};
  for (int round = 0; round < rounds; ++round) {
    const std::unique_ptr<CutPlanner> cuts = planner();
    const Cost cost = subject_.cost(*cuts);
    const bool reached =
        plan_level(*cuts, level, excess_over(cost + kMetadataCost, planning_budget()) + overshoot);
    last_map_ = cuts->cut_map();
    last_excess_ = cuts->excess_left();
    last_cost_ = cost;
    if (!reached && level < FitLevel::kShrink) return Outcome::kStronger;
    result_.plan.level = level;
    result_.plan.cuts = cuts->visible_cuts();
    result_.plan.map = last_map_;
    const std::optional<AnswerSize> size = subject_.render(result_.plan);
    if (!size) {
      result_.stopped = true;
      return Outcome::kStopped;
    }
    result_.rendered = true;
    result_.size = *size;
    result_.fitted = fits(*size, budget);
    if (result_.fitted) return Outcome::kFitted;
    learn_json_growth(*size);
    overshoot = overshoot_after(overshoot, *size, budget);
    if (level == FitLevel::kTighten) tighten_overshoot_ = overshoot;
  }
  return Outcome::kOver;
}

void Fitter::learn_json_growth(const AnswerSize& size) {
  if (options_.budget.json_bytes == 0 || size.bytes == 0) return;
  const double growth = static_cast<double>(size.json_bytes) / static_cast<double>(size.bytes);
  json_growth_ = std::clamp(growth, json_growth_, kMostJsonGrowth);
}

FitBudget Fitter::planning_budget() const {
  FitBudget budget = options_.budget;
  if (budget.json_bytes != 0) {
    budget.bytes =
        std::min(budget.bytes,
                 static_cast<std::size_t>(static_cast<double>(budget.json_bytes) / json_growth_));
  }
  return budget;
}

double Fitter::tokens_left() const {
  double tokens = std::max(last_excess_.tokens, 0.0);
  if (last_cost_.chars > 0 && last_excess_.chars > 0) {
    tokens = std::max(tokens, last_excess_.chars * last_cost_.tokens / last_cost_.chars);
  }
  if (last_cost_.bytes > 0 && last_excess_.bytes > 0) {
    tokens = std::max(tokens, last_excess_.bytes * last_cost_.tokens / last_cost_.bytes);
  }
  return tokens;
}

}  // namespace detail

FitResult fit(FitSubject& subject, const FitOptions& options, ValueView view,
              std::unique_ptr<CutPlanner> priced) {
  return detail::Fitter(subject, options, std::move(view), std::move(priced)).run();
}

}  // namespace ctxguard::pipeline
