#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"
#include "pipeline/fit/fitter.hpp"

namespace json = boost::json;
using ctxguard::pipeline::AnswerSize;
using ctxguard::pipeline::CutMap;
using ctxguard::pipeline::CutPlanner;
using ctxguard::pipeline::FitBudget;
using ctxguard::pipeline::FitLevel;
using ctxguard::pipeline::FitOptions;
using ctxguard::pipeline::FitPlan;
using ctxguard::pipeline::FitResult;
using ctxguard::pipeline::FitSubject;
using ctxguard::pipeline::RecordGroup;
using ctxguard::pipeline::ValueView;

namespace {

// A value fitted as a whole (as a ctxguard_fetch value by path is), written and measured for
// real; `extra` tokens are added to every measure, standing for an answer that always comes out
// larger than planned.
class TreeSubject final : public FitSubject {
 public:
  explicit TreeSubject(json::value value, std::size_t extra = 0)
      : value_(std::move(value)), extra_(extra) {}

  void add_values(CutPlanner& planner) override { cost_ = planner.add_tree(value_, 0, ""); }
  double cost(CutPlanner& /*planner*/) override { return cost_; }
  std::vector<RecordGroup> record_groups(const CutMap& cuts, const ValueView& view) override {
    return ctxguard::pipeline::find_record_groups(value_, "", cuts, view);
  }
  std::optional<AnswerSize> render(const FitPlan& plan) override {
    if (stop_) return std::nullopt;
    std::string body;
    std::string path;
    ctxguard::pipeline::ViewStats stats;
    ctxguard::pipeline::write_view(body, value_, plan.view, plan.map, path, 0, nullptr, stats);
    levels.push_back(plan.level);
    string_limits.push_back(plan.view.max_string_chars);
    written = body;
    return AnswerSize{.tokens = ctxguard::budget::estimate_tokens(body) + 100 + extra_};
  }

  void stop() { stop_ = true; }

  std::vector<FitLevel> levels;  // of every answer rendered, in order
  std::vector<std::size_t> string_limits;
  std::string written;

 private:
  json::value value_;
  std::size_t extra_;
  double cost_ = 0;
  bool stop_ = false;
};

// Prose-like text of about `chars` characters (numbers and words: it costs what text costs).
std::string note(std::size_t chars, std::size_t seed) {
  std::string text;
  for (std::size_t word = seed; text.size() < chars; ++word) {
    text += "item" + std::to_string(word * 7919 % 10007) + " ";
  }
  text.resize(chars);
  return text;
}

json::array records(std::size_t count, std::size_t note_chars) {
  json::array out;
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back(json::object{{"id", i},
                               {"status", i % 3 == 0 ? "open" : "closed"},
                               {"date", "2026-11-26"},
                               {"total", 12.5},
                               {"note", note(note_chars, i)},
                               {"owner", json::object{{"name", "ana"}, {"team", "core"}}}});
  }
  return out;
}

FitOptions options(std::size_t budget) {
  return FitOptions{.budget = {.tokens = budget},
                    .page_size = 50,
                    .min_cut_items = 10,
                    .summarize = true,
                    .project = true,
                    .max_string_chars = 400,
                    .max_depth = 0,
                    .projection_rule = nullptr};
}

// Levels are tried in the order FitLevel declares them.
int rank(FitLevel level) { return static_cast<int>(level); }

}  // namespace

TEST_CASE("fitter: an answer that pages alone bring within the budget stops at pages") {
  TreeSubject subject(json::object{{"rows", records(300, 20)}});
  const FitResult result = ctxguard::pipeline::fit(subject, options(4000), ValueView{});
  REQUIRE(result.fitted);
  REQUIRE(subject.levels == std::vector<FitLevel>{FitLevel::kPages});
  REQUIRE(result.plan.cuts.size() == 1);
  REQUIRE(result.plan.cuts.front().shown == 50);
  REQUIRE(result.size.tokens <= 4000);
}

TEST_CASE("fitter: levels are reached in order, each only when the one before is not enough") {
  // Long notes: a page of whole records is far over; cutting the notes brings it within.
  TreeSubject subject(json::object{{"rows", records(300, 3000)}});
  const FitResult result = ctxguard::pipeline::fit(subject, options(6000), ValueView{});
  REQUIRE(result.fitted);
  REQUIRE(std::is_sorted(subject.levels.begin(), subject.levels.end(),
                         [](FitLevel a, FitLevel b) { return rank(a) < rank(b); }));
  REQUIRE(rank(subject.levels.back()) >= rank(FitLevel::kSummarize));
  REQUIRE(result.plan.view.max_string_chars == 400);
  REQUIRE(subject.written.find("…[+") != std::string::npos);
}

TEST_CASE("fitter: tightening ends when nothing is left to tighten") {
  // Every answer measures 50,000 tokens more than it is: no level can ever fit it.
  TreeSubject subject(json::object{{"rows", records(60, 2000)}}, 50000);
  const FitResult result = ctxguard::pipeline::fit(subject, options(4000), ValueView{});
  REQUIRE_FALSE(result.fitted);
  REQUIRE(result.rendered);
  REQUIRE(subject.levels.back() == FitLevel::kTighten);
  // Strings halved from 400 down to the floor, a bounded number of steps.
  REQUIRE(result.plan.view.max_string_chars == ctxguard::pipeline::kMinStringChars);
  REQUIRE(subject.levels.size() < 60);
  // Tightening only ever made strings shorter.
  std::vector<std::size_t> tightened;
  for (std::size_t i = 0; i < subject.levels.size(); ++i) {
    if (subject.levels[i] == FitLevel::kTighten) tightened.push_back(subject.string_limits[i]);
  }
  REQUIRE(std::is_sorted(tightened.rbegin(), tightened.rend()));
}

TEST_CASE("fitter: one item over the budget is shown alone, and the result says it does not fit") {
  // Summarization off: values are never cut, so the best is one whole item.
  TreeSubject subject(json::object{{"rows", records(20, 30000)}});
  FitOptions no_summary = options(2000);
  no_summary.summarize = false;
  const FitResult result = ctxguard::pipeline::fit(subject, no_summary, ValueView{});
  REQUIRE_FALSE(result.fitted);
  REQUIRE(result.plan.cuts.size() == 1);
  REQUIRE(result.plan.cuts.front().shown == 1);
  REQUIRE(result.size.tokens > 2000);
  // Without summarization the summarizing levels never plan.
  for (const FitLevel level : subject.levels) {
    REQUIRE(level != FitLevel::kSummarize);
    REQUIRE(level != FitLevel::kProject);
    REQUIRE(level != FitLevel::kTighten);
  }
}

TEST_CASE("fitter: a subject that stops ends the fit with nothing rendered") {
  TreeSubject subject(json::object{{"rows", records(300, 20)}});
  subject.stop();
  const FitResult result = ctxguard::pipeline::fit(subject, options(2000), ValueView{});
  REQUIRE(result.stopped);
  REQUIRE_FALSE(result.rendered);
  REQUIRE_FALSE(result.fitted);
}

TEST_CASE("fitter: records are projected before fewer than ten are shown") {
  // Wide records (a long note) and a budget that ten whole ones cannot meet.
  TreeSubject subject(json::object{{"rows", records(300, 2000)}});
  FitOptions wide = options(2500);
  wide.max_string_chars = 0;  // nothing to cut in strings: projection has to do it
  const FitResult result = ctxguard::pipeline::fit(subject, wide, ValueView{});
  REQUIRE(result.fitted);
  REQUIRE_FALSE(result.plan.projections.empty());
  REQUIRE(result.plan.cuts.front().shown >= ctxguard::pipeline::kMinItemsShown);
  REQUIRE(subject.written.find("\"note\"") == std::string::npos);
}

TEST_CASE("fitter: corrections grow with what an answer came out over") {
  const FitBudget budget{.tokens = 1000};
  // 200 over: a quarter more, and a margin.
  REQUIRE(ctxguard::pipeline::overshoot_after(0, {.tokens = 1200}, budget) == 200 * 1.25 + 32);
  REQUIRE(ctxguard::pipeline::overshoot_after(10, {.tokens = 1000}, budget) == 10 + 32);
  REQUIRE(ctxguard::pipeline::text_allowance(budget, 160) == 840);
  REQUIRE(ctxguard::pipeline::text_allowance({.tokens = 200}, 160) == 100);
  // A fitting piece stands; an over one gives up its excess and a margin, at most half.
  REQUIRE_FALSE(ctxguard::pipeline::reduced_allowance(800, {.tokens = 990}, budget));
  REQUIRE(ctxguard::pipeline::reduced_allowance(800, {.tokens = 1100}, budget) == 800 - 116);
  REQUIRE(ctxguard::pipeline::reduced_allowance(800, {.tokens = 9000}, budget) == 400);
  REQUIRE_FALSE(ctxguard::pipeline::reduced_allowance(63, {.tokens = 9000}, budget));
}
