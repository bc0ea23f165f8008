#include "pipeline/fit/fitter.hpp"

#include <algorithm>
#include <iterator>
#include <limits>

#include "budget/token_estimator.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace {

constexpr FitLevel kFitLevels[] = {FitLevel::kPages,  FitLevel::kSummarize, FitLevel::kBreadth,
                                   FitLevel::kFewer,  FitLevel::kProject,   FitLevel::kShrink,
                                   FitLevel::kTighten};

// Planning rounds per tightening step (each step already removes a lot).
constexpr int kTightenRounds = 2;
// The most JSON bytes per byte of text an answer is planned with: a quote or a line break is
// two; the text items' `{"type":"text"...}` and structuredContent beside short text are not
// the text's escapes.
constexpr double kMostJsonGrowth = 2.0;

// Field costs are estimated apart from the records around them: projection aims a little past
// what is left to save.
constexpr double kProjectionFactor = 1.1;
constexpr double kProjectionMargin = 16;

constexpr double kUnlimitedRoom = std::numeric_limits<double>::infinity();

// A value given back is priced apart from the text around it: a token of slack each.
constexpr double kGiveBackSlackTokens = 1;

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

// One call of fit(): the levels in order, and the planning rounds of each.
class Fitter {
 public:
  Fitter(FitSubject& subject, const FitOptions& options, ValueView view,
         std::unique_ptr<CutPlanner> priced)
      : subject_(subject), options_(options), priced_(std::move(priced)) {
    result_.plan.view = std::move(view);
  }

  FitResult run() {
    for (const FitLevel level : kFitLevels) {
      if (!enter(level)) continue;
      Outcome outcome = plan_rounds(level);
      // Tighter again, until it fits or nothing is left to tighten.
      while (level == FitLevel::kTighten && outcome == Outcome::kOver &&
             tighten(result_.plan.view)) {
        ++view_version_;
        outcome = plan_rounds(level);
      }
      if (outcome == Outcome::kFitted || outcome == Outcome::kStopped) break;
    }
    give_back();
    return std::move(result_);
  }

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

  // After the levels, whose limits apply to every value alike: gives back the values they
  // shortened, largest gain first, each one that still fits the room the answer leaves. What a
  // value given back holds is judged by the limits again, so each round reaches one level deeper
  // into what the round before gave back. A round whose answer comes out over is taken back.
  //
  // Before them, in the reverse of the order the levels took them: items of the arrays shown
  // shortened up to kMinItemsShown, the fields projection left out, then the items up to a page.
  //
  // Last, the collapsed arrays too long to give back whole: as pages (give_back_as_pages).
  void give_back() {
    if (!result_.fitted) return;
    grow_pages(kMinItemsShown);
    give_back_fields();
    grow_pages(std::numeric_limits<std::size_t>::max());
    for (int round = 0; round < kGiveBackRounds && result_.fitted; ++round) {
      const std::vector<Gain> gains = gains_of(subject_.shortened(), result_.plan);
      if (!give_back_round(gains)) break;
    }
    give_back_as_pages();
  }

  // Gives back the collapsed arrays whose whole does not fit the room left, the largest first,
  // each as a page: its first items, as many as fit, and a cursor to the rest. A tree whose
  // folders the breadth level collapsed so shows the first folder's entries in the room its
  // placeholders left, instead of leaving that room unused.
  void give_back_as_pages() {
    for (int round = 0; round < kGiveBackRounds; ++round) {
      const std::vector<Gain> gains = gains_of(subject_.shortened(), result_.plan);
      const auto array = std::find_if(gains.begin(), gains.end(), [](const Gain& gain) {
        return gain.value->is_array() && !gain.value->get_array().empty();
      });
      if (array == gains.end() || !give_back_page(*array->value)) return;
    }
  }

  // Shows the collapsed `array` with its first item, cut, then grows it (and any other array
  // shown shortened) while the answer stays within the budget; true when its first item fit.
  bool give_back_page(const boost::json::value& array) {
    FitPlan& plan = result_.plan;
    const FitPlan before = plan;
    plan.view.whole.insert(&array);
    ++view_version_;
    plan.map[&array.get_array()] = ItemWindow{.begin = 0, .count = 1};
    const std::unique_ptr<CutPlanner> cuts = planner();
    subject_.cost(*cuts);  // the parts' weights
    cuts->apply(plan.map);
    plan.cuts = cuts->visible_cuts();
    plan.map = cuts->cut_map();
    const std::optional<AnswerSize> size = subject_.render(plan);
    if (size && fits(*size, options_.budget)) {
      result_.size = *size;
      grow_pages(std::numeric_limits<std::size_t>::max());
      return true;
    }
    plan = before;
    ++view_version_;
    restore();
    return false;
  }

  // Shows more items of the arrays shown shortened (up to `max_keep` each, and their page),
  // while the answer stays within the budget.
  void grow_pages(std::size_t max_keep) {
    for (int round = 0; round < kGiveBackRounds; ++round) {
      if (!grow_round(max_keep)) return;
    }
  }

  // One round of grow_pages(): the items that fit the room left, priced on the plan's planner,
  // then written and measured; an answer that comes out over is planned again with the room it
  // overshot less. True when items were added.
  bool grow_round(std::size_t max_keep) {
    FitPlan& plan = result_.plan;
    const std::vector<ArrayCut> cuts_before = plan.cuts;
    const CutMap map_before = plan.map;
    Cost overshoot;
    bool rendered = false;
    for (int attempt = 0; attempt < kTightenRounds; ++attempt) {
      const std::unique_ptr<CutPlanner> cuts = planner();
      subject_.cost(*cuts);  // the parts' weights
      cuts->apply(map_before);
      Cost room = room_left() - overshoot;
      if (cuts->grow_shown(room, max_keep) == 0) break;
      plan.cuts = cuts->visible_cuts();
      plan.map = cuts->cut_map();
      const std::optional<AnswerSize> size = subject_.render(plan);
      rendered = true;
      if (size && fits(*size, options_.budget)) {
        result_.size = *size;
        return true;
      }
      if (!size) break;
      overshoot = overshoot_after(overshoot, *size, options_.budget);
    }
    plan.cuts = cuts_before;
    plan.map = map_before;
    if (rendered) restore();
    return false;
  }

  // Gives back the fields projection left out, group by group in the order it projected them,
  // each group's in rank order: every one with which the answer stays within the budget. The
  // levels shorten arrays to kMinItemsShown items before they project, so the fields are tried
  // on arrays of at most that many items (grow_pages shows more after); when none fits, the
  // arrays stay as they were. A rule's projection keeps what the rule says.
  void give_back_fields() {
    FitPlan& plan = result_.plan;
    const auto open = [](const Projection& projection) {
      return !projection.by_rule && !projection.omitted.empty();
    };
    if (std::none_of(plan.projections.begin(), plan.projections.end(), open)) return;
    const std::vector<ArrayCut> cuts_before = plan.cuts;
    const CutMap map_before = plan.map;
    cap_pages(kMinItemsShown);
    bool given = false;
    for (Projection& projection : plan.projections) {
      if (projection.by_rule) continue;
      for (std::size_t i = 0; i < projection.omitted.size();) {
        if (give_back_field(projection, i)) {
          given = true;
        } else {
          ++i;
        }
      }
    }
    if (!given) {
      plan.cuts = cuts_before;
      plan.map = map_before;
      restore();
    }
    // A group with every field back is no longer projected, and `_ctxguard` no longer says so.
    if (std::erase_if(plan.projections, [](const Projection& projection) {
          return projection.omitted.empty();
        }) > 0) {
      restore();
    }
  }

  // The plan with at most `most` items of each array it shows shortened (not written).
  void cap_pages(std::size_t most) {
    const std::unique_ptr<CutPlanner> cuts = planner();
    cuts->apply(result_.plan.map);
    cuts->cap_shown(most);
    result_.plan.cuts = cuts->visible_cuts();
    result_.plan.map = cuts->cut_map();
  }

  // Gives back field `index` of what `projection` left out, if the answer stays within the
  // budget with it; true when it did.
  bool give_back_field(Projection& projection, std::size_t index) {
    const std::string field = projection.omitted[index];
    const FieldList kept = projection.kept;
    projection.kept.push_back(field);
    projection.omitted.erase(projection.omitted.begin() + static_cast<std::ptrdiff_t>(index));
    set_fields(projection);
    const std::optional<AnswerSize> size = subject_.render(result_.plan);
    if (size && fits(*size, options_.budget)) {
      result_.size = *size;
      return true;
    }
    projection.kept = kept;
    projection.omitted.insert(projection.omitted.begin() + static_cast<std::ptrdiff_t>(index),
                              field);
    set_fields(projection);
    restore();
    return false;
  }

  // The view shows `projection`'s group with its fields (all of them once none is left out).
  void set_fields(const Projection& projection) {
    ValueView& view = result_.plan.view;
    if (projection.array != nullptr) {
      if (projection.omitted.empty()) {
        view.item_fields.erase(projection.array);
      } else {
        view.item_fields[projection.array] = projection.kept;
      }
    } else if (projection.object != nullptr) {
      if (projection.omitted.empty()) {
        view.object_fields.erase(projection.object);
      } else {
        view.object_fields[projection.object] = projection.kept;
      }
    }
    ++view_version_;
  }

  // Writes the answer as the plan shows it again, after a trial that came out over.
  void restore() {
    if (const std::optional<AnswerSize> size = subject_.render(result_.plan)) result_.size = *size;
  }

  // Gives back what of `gains` fits, in their order; true when something was. An answer that
  // comes out over is taken back and the round planned again with the room it overshot less.
  bool give_back_round(const std::vector<Gain>& gains) {
    FitPlan& plan = result_.plan;
    Cost overshoot;
    bool rendered = false;
    for (int attempt = 0; attempt < kTightenRounds; ++attempt) {
      Cost room = room_left() - overshoot;
      std::vector<const boost::json::value*> given;
      for (const Gain& gain : gains) {
        if (gain.cost.tokens > room.tokens || gain.cost.chars > room.chars ||
            gain.cost.bytes > room.bytes) {
          continue;
        }
        room -= gain.cost;
        plan.view.whole.insert(gain.value);
        given.push_back(gain.value);
      }
      if (given.empty()) break;
      ++view_version_;
      const std::optional<AnswerSize> size = subject_.render(plan);
      rendered = true;
      if (size && fits(*size, options_.budget)) {
        result_.size = *size;
        return true;
      }
      for (const boost::json::value* value : given) plan.view.whole.erase(value);
      ++view_version_;
      if (!size) break;
      overshoot = overshoot_after(overshoot, *size, options_.budget);
    }
    // Nothing given back fitted: the answer as it was.
    if (rendered) restore();
    return false;
  }

  // What the answer may still take in each unit (unlimited units never run out).
  Cost room_left() const {
    const FitBudget& budget = options_.budget;
    const AnswerSize& size = result_.size;
    const auto left = [](std::size_t used, std::size_t limit) {
      return limit == 0 ? kUnlimitedRoom : static_cast<double>(limit) - static_cast<double>(used);
    };
    // JSON bytes are planned as bytes (budget/answer_size.hpp): the lesser room of the two.
    return Cost{.tokens = left(size.tokens, budget.tokens),
                .chars = left(size.chars, budget.chars),
                .bytes = std::min(left(size.bytes, budget.bytes),
                                  left(size.json_bytes, budget.json_bytes))};
  }

  // The gains of showing each of `shortened` whole, largest first; ties in the order the answer
  // shows them (the same in every process).
  std::vector<Gain> gains_of(const std::vector<Shortened>& shortened, const FitPlan& plan) {
    ValueView view = plan.view;
    std::vector<Gain> gains;
    gains.reserve(shortened.size());
    for (const Shortened& at : shortened) {
      view.whole.insert(at.value);
      const std::string whole = write_view_at(at, view, plan.map);
      view.whole.erase(at.value);
      std::string shown;
      write_json_string(shown, at.shown);
      budget::TokenCounter more(options_.budget.chars != 0);
      budget::TokenCounter less(options_.budget.chars != 0);
      more.add(whole);
      less.add(shown);
      const double weight = at.weight;
      const auto grown = [&](double after, double before) { return (after - before) * weight; };
      gains.push_back(Gain{
          .value = at.value,
          .cost = Cost{
              .tokens = grown(more.fractional_tokens(), less.fractional_tokens()) +
                        kGiveBackSlackTokens * weight,
              .chars = grown(static_cast<double>(more.chars()), static_cast<double>(less.chars())),
              .bytes =
                  grown(static_cast<double>(more.bytes()), static_cast<double>(less.bytes()))}});
    }
    std::stable_sort(gains.begin(), gains.end(),
                     [](const Gain& a, const Gain& b) { return a.cost.tokens > b.cost.tokens; });
    return gains;
  }

  // Prepares the view for `level`; false when the level has nothing to add.
  bool enter(FitLevel level) {
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

  // Whether the summary limits cut a string or collapse a value that the values as last priced
  // hold (unknown: yes). Tables are priced apart from the walk's strings: always yes with them.
  bool limits_reach_values() const {
    if (!pristine_ || result_.plan.view.tables) return true;
    return (options_.max_string_chars != 0 &&
            pristine_->longest_string() > options_.max_string_chars) ||
           (options_.max_depth != 0 && pristine_->deepest_container() > options_.max_depth);
  }

  // Breadth before depth: sets the view's array nesting to the most levels of nested arrays
  // shown (arrays of objects or arrays inside more are collapsed) with which the answer fits
  // once long arrays are cut to pages, or to 1 when none does: the levels after then shorten a
  // tree shown one level deep. False when no array of containers stands inside another.
  bool choose_array_nesting() {
    const std::size_t deepest = planner()->deepest_array_nesting();
    if (deepest == 0) return false;
    // Showing fewer levels never shows more: the most that fit is found by bisection.
    std::size_t fits = 0;
    std::size_t low = 1;
    std::size_t high = deepest;
    while (low <= high) {
      const std::size_t levels = low + (high - low) / 2;
      if (pages_fit(levels)) {
        fits = levels;
        low = levels + 1;
      } else {
        high = levels - 1;
      }
    }
    set_array_nesting(std::max<std::size_t>(fits, 1));
    return true;
  }

  // Whether cutting arrays to pages brings the answer within the budget when arrays inside
  // `levels` arrays are collapsed.
  bool pages_fit(std::size_t levels) {
    set_array_nesting(levels);
    const std::unique_ptr<CutPlanner> cuts = planner();
    return cuts->cut_to_pages(excess_over(subject_.cost(*cuts) + kMetadataCost, options_.budget));
  }

  void set_array_nesting(std::size_t levels) {
    if (result_.plan.view.max_array_nesting == levels) return;
    result_.plan.view.max_array_nesting = levels;
    ++view_version_;
  }

  // Chooses the projections (into the view) that should save what the cuts so far could not.
  bool project() {
    FitPlan& plan = result_.plan;
    const std::vector<RecordGroup> groups = subject_.record_groups(last_map_, plan.view);
    // Projection prices fields in tokens: what is left over in another unit is taken at the
    // answer's own characters (or bytes) per token.
    plan.projections =
        plan_projections(groups, tokens_left() * kProjectionFactor + kProjectionMargin,
                         options_.projection_rule, kMinProjectedFields, plan.view);
    return !plan.projections.empty();
  }

  // A planner holding the values as the view shows them, before any cut. Walking the values
  // costs as much as estimating them all; a round or a level that shows them as the last one
  // did starts from a copy of that walk instead.
  std::unique_ptr<CutPlanner> planner() {
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

  Outcome plan_rounds(FitLevel level) {
    const FitBudget& budget = options_.budget;
    const int rounds = level == FitLevel::kTighten ? kTightenRounds : kPlanningRounds;
    // A tightening step starts from what the steps before it learned of how far written answers
    // come out over their plans: with two rounds each, starting from nothing every time could
    // end over the budget showing several items.
    Cost overshoot = level == FitLevel::kTighten ? tighten_overshoot_ : Cost{};
    for (int round = 0; round < rounds; ++round) {
      const std::unique_ptr<CutPlanner> cuts = planner();
      const Cost cost = subject_.cost(*cuts);
      const bool reached = plan_level(
          *cuts, level, excess_over(cost + kMetadataCost, planning_budget()) + overshoot);
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

  // JSON bytes are planned as bytes (budget/answer_size.hpp); what the escapes add is learned
  // from the answers written: a plan is held to json_bytes / growth bytes, so that one
  // correction takes it there, whatever room the metadata allowance left unused.
  void learn_json_growth(const AnswerSize& size) {
    if (options_.budget.json_bytes == 0 || size.bytes == 0) return;
    const double growth = static_cast<double>(size.json_bytes) / static_cast<double>(size.bytes);
    json_growth_ = std::clamp(growth, json_growth_, kMostJsonGrowth);
  }
  FitBudget planning_budget() const {
    FitBudget budget = options_.budget;
    if (budget.json_bytes != 0) {
      budget.bytes =
          std::min(budget.bytes,
                   static_cast<std::size_t>(static_cast<double>(budget.json_bytes) / json_growth_));
    }
    return budget;
  }

  FitSubject& subject_;
  const FitOptions& options_;
  double json_growth_ = 1.0;
  std::unique_ptr<CutPlanner> priced_;
  // What the last plan left to save, in tokens: the most of the units still over, the others
  // converted at the answer's own rate.
  double tokens_left() const {
    double tokens = std::max(last_excess_.tokens, 0.0);
    if (last_cost_.chars > 0 && last_excess_.chars > 0) {
      tokens = std::max(tokens, last_excess_.chars * last_cost_.tokens / last_cost_.chars);
    }
    if (last_cost_.bytes > 0 && last_excess_.bytes > 0) {
      tokens = std::max(tokens, last_excess_.bytes * last_cost_.tokens / last_cost_.bytes);
    }
    return tokens;
  }

  FitResult result_;
  std::unique_ptr<CutPlanner> pristine_;  // the values priced, uncut
  int view_version_ = 0;                  // bumped whenever the view may have changed
  int pristine_version_ = -1;             // the view pristine_ priced
  CutMap last_map_;         // the last plan's cuts, rendered or not (projection reads them)
  Cost tighten_overshoot_;  // what the tightening steps so far learned (plan_rounds)
  Cost last_excess_;
  Cost last_cost_;  // the answer's cost before that plan's cuts
};

}  // namespace

FitResult fit(FitSubject& subject, const FitOptions& options, ValueView view,
              std::unique_ptr<CutPlanner> priced) {
  return Fitter(subject, options, std::move(view), std::move(priced)).run();
}

}  // namespace ctxguard::pipeline
