#pragma once
// The fit engine: brings the JSON of one answer within its budget, level by level
// (docs/protocol.md sections 2.2-2.3). First answers (RewriteJob: every JSON part of a result)
// and ctxguard_fetch (a page of one array, or the value at a path) both call fit() with what
// differs between them, a FitSubject: the values, what the answer around them costs, and how the
// answer is written. The levels, the planning rounds and the corrections applied when a written
// answer comes out larger than planned live here and nowhere else.
//
// The plan prices values in estimated tokens, characters and bytes in one walk (CutPlanner's
// Cost); the written answer is measured as a budget::AnswerSize in every unit a client may limit
// and held to a budget::FitBudget: within every limit set, or re-planned.

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "budget/answer_size.hpp"
#include "config/settings.hpp"
#include "pipeline/fit/paginate.hpp"
#include "pipeline/fit/projection.hpp"
#include "pipeline/fit/summarize.hpp"

namespace ctxguard::pipeline {

using budget::AnswerSize;
using budget::FitBudget;

// Planning allowances for what `_ctxguard` adds to an answer (its fields, each cursor); answers
// are measured after they are written, and re-planned up to kPlanningRounds times when one comes
// out larger than planned. In characters and bytes, for clients that limit those: a cursor is
// letter hex, fewer characters per token than JSON.
inline constexpr std::size_t kMetadataTokens = 160;
inline constexpr std::size_t kTokensPerCursor = 70;
inline constexpr std::size_t kMetadataChars = 700;
inline constexpr std::size_t kCharsPerCursor = 220;
// The way on an answer with a cursor starts with (metadata.hpp, way_on_text): the hint's first
// sentences and that cursor again, an item of its own.
inline constexpr std::size_t kWayOnTokens = 140;
inline constexpr std::size_t kWayOnChars = 500;
inline constexpr int kPlanningRounds = 6;
inline constexpr int kGiveBackRounds = 4;

// The planning allowance for one listed cut (its path and cursor in `_ctxguard`).
inline constexpr Cost kCursorCost{
    .tokens = kTokensPerCursor, .chars = kCharsPerCursor, .bytes = kCharsPerCursor};

// How far fitting a value goes, in order: each level is tried only when the one before cannot
// bring the answer within its budget.
enum class FitLevel {
  kPages,      // arrays longer than a page cut to one page
  kSummarize,  // + long strings cut, deep values collapsed (the view's limits)
  kBreadth,    // + nested arrays collapsed below the most array levels that fit (a tree: its
               //   first levels across all branches before any branch goes deeper)
  kFewer,      // + shown arrays shortened, to no fewer than kMinItemsShown items
  kProject,    // + records keep their essential fields (at least kMinProjectedFields)
  kShrink,     // + shown arrays shortened down to one item
  kTighten,    // + the view tightened step by step (summarize.hpp's tighten), planned as kShrink
};

// Projection is preferred to showing fewer items than this: a page of ten projected records
// says more than three whole ones.
inline constexpr std::size_t kMinItemsShown = 10;
inline constexpr std::size_t kMinProjectedFields = 3;

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
  // The answer's cost before any cut, with the values as last added to `planner` (which the
  // subject may weigh: a part repeated in structuredContent counts twice).
  virtual Cost cost(CutPlanner& planner) = 0;
  // The records projection may trim, as shown with `cuts` and `view`.
  virtual std::vector<RecordGroup> record_groups(const CutMap& cuts, const ValueView& view) = 0;
  // Writes the answer as `plan` shows it and measures it; nullopt ends the fit (nothing can be
  // shown, or what is written could not be reached).
  virtual std::optional<AnswerSize> render(const FitPlan& plan) = 0;
  // The values the last answer rendered showed shortened (collapsed or cut), each with the
  // weight of its part, for giving back what fits; none by default.
  virtual std::vector<Shortened> shortened() { return {}; }
};

// Fits `subject` starting from `view` (the caller's own projection, --tables), level by level,
// until an answer it renders is within the budget or no level is left. Then gives back what
// fits, in the reverse of the order the levels took it, as long as the answer stays within the
// budget: items of the arrays shown shortened up to kMinItemsShown, the fields projection left
// out (tried on arrays of at most kMinItemsShown items), items up to the page, then the values
// the levels' limits shortened, largest gain first (kGiveBackRounds rounds, each a level deeper
// into what it gave back), and last the collapsed arrays too long for that, as pages. More
// budget so never shows less (docs/protocol.md 2.3). `priced`:
// a planner that already holds the subject's values as whole values (a first answer prices them
// once to decide on compaction), used for the first planning round instead of pricing them again
// when `view` shows values whole (with --tables it does not: that round prices them as tables).
// A written answer that comes out over (the levels plan with estimates of each part) is planned
// again with the overshoot set aside, so the last levels show fewer items until an answer fits
// or one item is left: `fitted` false then says that one item alone is over.
FitResult fit(FitSubject& subject, const FitOptions& options, ValueView view,
              std::unique_ptr<CutPlanner> priced = nullptr);

// The excess of an answer costing `cost` over `budget`: what a plan must remove, each unit
// that `budget` does not limit never over.
Cost excess_over(const Cost& cost, const FitBudget& budget);

// The planning correction after a written answer came out at `measured` against `budget`: the
// next round plans to remove this much more than the estimates say, in each unit it was over.
Cost overshoot_after(const Cost& overshoot, const AnswerSize& measured, const FitBudget& budget);

}  // namespace ctxguard::pipeline
