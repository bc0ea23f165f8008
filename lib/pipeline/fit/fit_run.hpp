// One call of fit() (fitter.hpp): the levels in order, then what they shortened given back while
// it fits. fitter.cpp defines the levels and give_back.cpp the giving back; nothing else
// includes this header.
#pragma once

#include <memory>
#include <vector>

#include "pipeline/fit/fitter.hpp"

namespace ctxguard::pipeline::detail {

// Planning rounds per tightening step and per trial of the giving back (each step already
// removes a lot).
constexpr int kTightenRounds = 2;

class Fitter {
 public:
  Fitter(FitSubject& subject, const FitOptions& options, ValueView view,
         std::unique_ptr<CutPlanner> priced)
      : subject_(subject), options_(options), priced_(std::move(priced)) {
    result_.plan.view = std::move(view);
  }

  FitResult run();

 private:
  enum class Outcome {
    kFitted,    // an answer within the budget is written
    kStopped,   // the subject ended the fit
    kStronger,  // this level's cuts cannot reach the budget: the next level is needed
    kOver,      // every round wrote an answer over the budget
  };

  // A value the answer shows shortened, and what showing it whole adds to the answer.
  struct Gain {
    const boost::json::value* value = nullptr;
    Cost cost;
  };

  // The levels (fitter.cpp).

  // Prepares the view for `level`; false when the level has nothing to add.
  bool enter(FitLevel level);

  // Whether the summary limits cut a string or collapse a value that the values as last priced
  // hold (unknown: yes). Tables are priced apart from the walk's strings: always yes with them.
  bool limits_reach_values() const;

  // Breadth before depth: sets the view's array nesting to the most levels of nested arrays
  // shown (arrays of objects or arrays inside more are collapsed) with which the answer fits
  // once long arrays are cut to pages, or to 1 when none does: the levels after then shorten a
  // tree shown one level deep. False when no array of containers stands inside another.
  bool choose_array_nesting();

  // Whether cutting arrays to pages brings the answer within the budget when arrays inside
  // `levels` arrays are collapsed.
  bool pages_fit(std::size_t levels);

  void set_array_nesting(std::size_t levels);

  // Chooses the projections (into the view) that should save what the cuts so far could not.
  bool project();

  // A planner holding the values as the view shows them, before any cut. Walking the values
  // costs as much as estimating them all; a round or a level that shows them as the last one
  // did starts from a copy of that walk instead.
  std::unique_ptr<CutPlanner> planner();

  Outcome plan_rounds(FitLevel level);

  // JSON bytes are planned as bytes (budget/answer_size.hpp); what the escapes add is learned
  // from the answers written: a plan is held to json_bytes / growth bytes, so that one
  // correction takes it there, whatever room the metadata allowance left unused.
  void learn_json_growth(const AnswerSize& size);

  FitBudget planning_budget() const;

  // What the last plan left to save, in tokens: the most of the units still over, the others
  // converted at the answer's own rate.
  double tokens_left() const;

  // What the levels shortened, given back while it fits (give_back.cpp).

  // After the levels, whose limits apply to every value alike: gives back the values they
  // shortened, largest gain first, each one that still fits the room the answer leaves. What a
  // value given back holds is judged by the limits again, so each round reaches one level deeper
  // into what the round before gave back. A round whose answer comes out over is taken back.
  //
  // Before them, in the reverse of the order the levels took them: items of the arrays shown
  // shortened up to kMinItemsShown, the fields projection left out, then the items up to a page.
  //
  // Last, the collapsed arrays too long to give back whole: as pages (give_back_as_pages).
  void give_back();

  // Gives back the collapsed arrays whose whole does not fit the room left, the largest first,
  // each as a page: its first items, as many as fit, and a cursor to the rest. A tree whose
  // folders the breadth level collapsed so shows the first folder's entries in the room its
  // placeholders left, instead of leaving that room unused.
  void give_back_as_pages();

  // Shows the collapsed `array` with its first item, cut, then grows it (and any other array
  // shown shortened) while the answer stays within the budget; true when its first item fit.
  bool give_back_page(const boost::json::value& array);

  // Shows more items of the arrays shown shortened (up to `max_keep` each, and their page),
  // while the answer stays within the budget.
  void grow_pages(std::size_t max_keep);

  // One round of grow_pages(): the items that fit the room left, priced on the plan's planner,
  // then written and measured; an answer that comes out over is planned again with the room it
  // overshot less. True when items were added.
  bool grow_round(std::size_t max_keep);

  // Gives back the fields projection left out, group by group in the order it projected them,
  // each group's in rank order: every one with which the answer stays within the budget. The
  // levels shorten arrays to kMinItemsShown items before they project, so the fields are tried
  // on arrays of at most that many items (grow_pages shows more after); when none fits, the
  // arrays stay as they were. A rule's projection keeps what the rule says.
  void give_back_fields();

  // The plan with at most `most` items of each array it shows shortened (not written).
  void cap_pages(std::size_t most);

  // Gives back field `index` of what `projection` left out, if the answer stays within the
  // budget with it; true when it did.
  bool give_back_field(Projection& projection, std::size_t index);

  // The view shows `projection`'s group with its fields (all of them once none is left out).
  void set_fields(const Projection& projection);

  // Writes the answer as the plan shows it again, after a trial that came out over.
  void restore();

  // Gives back what of `gains` fits, in their order; true when something was. An answer that
  // comes out over is taken back and the round planned again with the room it overshot less.
  bool give_back_round(const std::vector<Gain>& gains);

  // What the answer may still take in each unit (unlimited units never run out).
  Cost room_left() const;

  // The gains of showing each of `shortened` whole, largest first; ties in the order the answer
  // shows them (the same in every process).
  std::vector<Gain> gains_of(const std::vector<Shortened>& shortened, const FitPlan& plan);

  FitSubject& subject_;
  const FitOptions& options_;
  double json_growth_ = 1.0;
  std::unique_ptr<CutPlanner> priced_;
  FitResult result_;
  std::unique_ptr<CutPlanner> pristine_;  // the values priced, uncut
  int view_version_ = 0;                  // bumped whenever the view may have changed
  int pristine_version_ = -1;             // the view pristine_ priced
  CutMap last_map_;         // the last plan's cuts, rendered or not (projection reads them)
  Cost tighten_overshoot_;  // what the tightening steps so far learned (plan_rounds)
  Cost last_excess_;
  Cost last_cost_;  // the answer's cost before that plan's cuts
};

}  // namespace ctxguard::pipeline::detail
