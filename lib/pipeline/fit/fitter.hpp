#pragma once
// The fit engine: brings the JSON of one answer within its budget, level by level
// (docs/protocol.md sections 2.2-2.3). First answers (RewriteJob: every JSON part of a result)
// and ctxguard_fetch (a page of one array, or the value at a path) both call fit() with what
// differs between them, a FitSubject: the values, what the answer around them costs, and how the
// answer is written. The levels, the planning rounds and the corrections applied when a written
// answer comes out larger than planned live here and nowhere else.
//
// The plan prices values with the token estimator (CutPlanner); the written answer is measured
// as an AnswerSize and held to a FitBudget, so that a budget in another unit is added in those
// two types and the planner's pricing, not in the callers.

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "config/settings.hpp"
#include "pipeline/fit/paginate.hpp"
#include "pipeline/fit/projection.hpp"
#include "pipeline/fit/summarize.hpp"

namespace ctxguard::pipeline {

// Planning allowances for what `_ctxguard` adds to an answer (its fields, each cursor); answers
// are measured after they are written, and re-planned up to kPlanningRounds times when one comes
// out larger than planned.
inline constexpr std::size_t kMetadataTokens = 160;
inline constexpr std::size_t kTokensPerCursor = 70;
inline constexpr int kPlanningRounds = 6;

// How far fitting a value goes, in order: each level is tried only when the one before cannot
// bring the answer within its budget.
enum class FitLevel {
  kPages,      // arrays longer than a page cut to one page
  kSummarize,  // + long strings cut, deep values collapsed (the view's limits)
  kFewer,      // + shown arrays shortened, to no fewer than kMinItemsShown items
  kProject,    // + records keep their essential fields (at least kMinProjectedFields)
  kShrink,     // + shown arrays shortened down to one item
  kTighten,    // + the view tightened step by step (summarize.hpp's tighten), planned as kShrink
};

// Projection is preferred to showing fewer items than this: a page of ten projected records
// says more than three whole ones.
inline constexpr std::size_t kMinItemsShown = 10;
inline constexpr std::size_t kMinProjectedFields = 3;

// What an answer may take.
struct FitBudget {
  std::size_t tokens = 0;
};

// What a written answer takes, measured.
struct AnswerSize {
  std::size_t tokens = 0;
};

inline bool fits(AnswerSize size, FitBudget budget) { return size.tokens <= budget.tokens; }

// What fitting may do, from the tool's settings.
struct FitOptions {
  FitBudget budget;
  std::size_t page_size = 0;
  std::size_t min_cut_items = 0;  // arrays this long or shorter are never cut
  bool summarize = true;          // false: values are never altered, only split into pages
  bool project = true;
  std::size_t max_string_chars = 0;  // the summarize level's view
  std::size_t max_depth = 0;
  const FieldList* projection_rule = nullptr;  // the tool's configured fields, if any

  // The settings of `tool`: its budget, page size, switches, summary limits and projection rule.
  static FitOptions of(const config::BudgetSettings& settings, std::string_view tool);
};

// How the answer is to be shown: what render() writes.
struct FitPlan {
  FitLevel level = FitLevel::kPages;    // the level that planned it
  ValueView view;                       // strings cut, values collapsed, records projected
  std::vector<Projection> projections;  // what the projection level did
  std::vector<ArrayCut> cuts;           // arrays shown shortened, largest first (a page first)
  CutMap map;                           // the same, for the writers
};

// What fit() did. `plan` is the plan of the last answer rendered.
struct FitResult {
  FitPlan plan;
  AnswerSize size;        // of the last answer rendered
  bool rendered = false;  // an answer was written at all
  bool fitted = false;    // and the last one is within the budget
  bool stopped = false;   // the subject ended the fit (render returned nullopt)
};

// What is fitted: one answer's values, priced on planners the fitter makes, and written.
class FitSubject {
 public:
  virtual ~FitSubject() = default;
  // Registers the values on a fresh `planner` (which prices them as its view shows them).
  virtual void add_values(CutPlanner& planner) = 0;
  // The answer's cost before any cut, in tokens, with the values as last added to `planner`
  // (which the subject may weigh: a part repeated in structuredContent counts twice).
  virtual double cost(CutPlanner& planner) = 0;
  // The records projection may trim, as shown with `cuts` and `view`.
  virtual std::vector<RecordGroup> record_groups(const CutMap& cuts, const ValueView& view) = 0;
  // Writes the answer as `plan` shows it and measures it; nullopt ends the fit (nothing can be
  // shown, or what is written could not be reached).
  virtual std::optional<AnswerSize> render(const FitPlan& plan) = 0;
};

// Fits `subject` starting from `view` (the caller's own projection, --tables), level by level,
// until an answer it renders is within the budget or no level is left. `priced`: a planner that
// already holds the subject's values as whole values (a first answer prices them once to decide
// on compaction), used for the first planning round instead of pricing them again when `view`
// shows values whole (with --tables it does not: that round prices them as tables).
FitResult fit(FitSubject& subject, const FitOptions& options, ValueView view,
              std::unique_ptr<CutPlanner> priced = nullptr);

// The planning correction after a written answer came out at `measured` against `budget`: the
// next round plans to remove this much more than the estimates say.
double overshoot_after(double overshoot, AnswerSize measured, FitBudget budget);

// What a piece of text may take in an answer of `budget` after its `_ctxguard` item (up to half
// the budget, `reserve` at most).
std::size_t text_allowance(FitBudget budget, std::size_t reserve);
// The allowance for the next round when a piece written with `allowance` measured `measured`;
// nullopt when it is too small to shrink further (the piece stands).
std::optional<std::size_t> reduced_allowance(std::size_t allowance, AnswerSize measured,
                                             FitBudget budget);

}  // namespace ctxguard::pipeline
