// What the levels of fit() shortened, given back while the answer fits (fit_run.hpp).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "budget/token_estimator.hpp"
#include "pipeline/fit/fit_run.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline::detail {

namespace {

constexpr double kUnlimitedRoom = std::numeric_limits<double>::infinity();

// A value given back is priced apart from the text around it: a token of slack each.
constexpr double kGiveBackSlackTokens = 1;

}  // namespace

void Fitter::give_back() {
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

void Fitter::give_back_as_pages() {
  for (int round = 0; round < kGiveBackRounds; ++round) {
    const std::vector<Gain> gains = gains_of(subject_.shortened(), result_.plan);
    const auto array = std::find_if(gains.begin(), gains.end(), [](const Gain& gain) {
      return gain.value->is_array() && !gain.value->get_array().empty();
    });
    if (array == gains.end() || !give_back_page(*array->value)) return;
  }
}

bool Fitter::give_back_page(const boost::json::value& array) {
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

void Fitter::grow_pages(std::size_t max_keep) {
  for (int round = 0; round < kGiveBackRounds; ++round) {
    if (!grow_round(max_keep)) return;
  }
}

bool Fitter::grow_round(std::size_t max_keep) {
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

void Fitter::give_back_fields() {
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
  if (std::erase_if(plan.projections,
                    [](const Projection& projection) { return projection.omitted.empty(); }) > 0) {
    restore();
  }
}

void Fitter::cap_pages(std::size_t most) {
  const std::unique_ptr<CutPlanner> cuts = planner();
  cuts->apply(result_.plan.map);
  cuts->cap_shown(most);
  result_.plan.cuts = cuts->visible_cuts();
  result_.plan.map = cuts->cut_map();
}

bool Fitter::give_back_field(Projection& projection, std::size_t index) {
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
  projection.omitted.insert(projection.omitted.begin() + static_cast<std::ptrdiff_t>(index), field);
  set_fields(projection);
  restore();
  return false;
}

void Fitter::set_fields(const Projection& projection) {
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

void Fitter::restore() {
  if (const std::optional<AnswerSize> size = subject_.render(result_.plan)) result_.size = *size;
}

bool Fitter::give_back_round(const std::vector<Gain>& gains) {
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

Cost Fitter::room_left() const {
  const FitBudget& budget = options_.budget;
  const AnswerSize& size = result_.size;
  const auto left = [](std::size_t used, std::size_t limit) {
    return limit == 0 ? kUnlimitedRoom : static_cast<double>(limit) - static_cast<double>(used);
  };
  // JSON bytes are planned as bytes (budget/answer_size.hpp): the lesser room of the two.
  return Cost{
      .tokens = left(size.tokens, budget.tokens),
      .chars = left(size.chars, budget.chars),
      .bytes = std::min(left(size.bytes, budget.bytes), left(size.json_bytes, budget.json_bytes))};
}

std::vector<Fitter::Gain> Fitter::gains_of(const std::vector<Shortened>& shortened,
                                           const FitPlan& plan) {
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
            .bytes = grown(static_cast<double>(more.bytes()), static_cast<double>(less.bytes()))}});
  }
  std::stable_sort(gains.begin(), gains.end(),
                   [](const Gain& a, const Gain& b) { return a.cost.tokens > b.cost.tokens; });
  return gains;
}

}  // namespace ctxguard::pipeline::detail
