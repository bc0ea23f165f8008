#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"
#include "pipeline/fit/fitter.hpp"
#include "support/json_writer.hpp"

namespace json = boost::json;
using ctxguard::pipeline::AnswerSize;
using ctxguard::pipeline::Cost;
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
// larger than planned, and `whole_extra` for each value given back whole.
class TreeSubject final : public FitSubject {
 public:
  explicit TreeSubject(json::value value, std::size_t extra = 0, std::size_t whole_extra = 0)
      : value_(std::move(value)), extra_(extra), whole_extra_(whole_extra) {}

  void add_values(CutPlanner& planner) override { cost_ = planner.add_tree(value_, 0, ""); }
  Cost cost(CutPlanner& /*planner*/) override { return cost_; }
  std::vector<RecordGroup> record_groups(const CutMap& cuts, const ValueView& view) override {
    return ctxguard::pipeline::find_record_groups(value_, "", cuts, view);
  }
  std::optional<AnswerSize> render(const FitPlan& plan) override {
    if (stop_) return std::nullopt;
    std::string body;
    std::string path;
    ctxguard::pipeline::ViewStats stats;
    ctxguard::pipeline::write_view(body, value_, plan.view, plan.map, path, stats);
    levels.push_back(plan.level);
    string_limits.push_back(plan.view.max_string_chars);
    written = body;
    shortened_ = std::move(stats.shortened);
    // The `_ctxguard` the answer would carry: 100 tokens, 400 characters and bytes, one line,
    // and 40 tokens for each projection it lists; as JSON, the body is a text item's string.
    const std::size_t listed = 40 * plan.projections.size();
    const std::size_t hidden = extra_ + whole_extra_ * plan.view.whole.size();
    last = AnswerSize{.tokens = ctxguard::budget::estimate_tokens(body) + 100 + hidden + listed,
                      .chars = ctxguard::budget::utf16_length(body) + 400,
                      .bytes = body.size() + 400,
                      .lines = 1,
                      .json_bytes = ctxguard::json_string_size(body) + 500};
    written_tokens.push_back(last.tokens);
    return last;
  }

  // Whether some answer written was over `budget` tokens.
  bool over_budget(std::size_t budget) const {
    return std::any_of(written_tokens.begin(), written_tokens.end(),
                       [budget](std::size_t tokens) { return tokens > budget; });
  }

  std::vector<ctxguard::pipeline::Shortened> shortened() override { return shortened_; }

  void stop() { stop_ = true; }

  std::vector<FitLevel> levels;  // of every answer rendered, in order
  std::vector<std::size_t> string_limits;
  std::string written;
  AnswerSize last;                          // of the answer last written
  std::vector<std::size_t> written_tokens;  // of every answer written

 private:
  json::value value_;
  std::size_t extra_;
  std::size_t whole_extra_;  // tokens more for each value the view shows whole
  Cost cost_;
  std::vector<ctxguard::pipeline::Shortened> shortened_;  // by the last answer written
  bool stop_ = false;
};

// A page of an array (as a ctxguard_fetch page is): `count` items from the start. Every item
// shown adds `hidden_per_item` tokens to the measure that the plan does not see, standing for an
// estimate of each part that falls short of the written answer.
class PageSubject final : public FitSubject {
 public:
  PageSubject(json::array array, std::size_t count, std::size_t hidden_per_item)
      : array_(std::move(array)), count_(count), hidden_per_item_(hidden_per_item) {}

  void add_values(CutPlanner& planner) override {
    cost_ = planner.add_page(array_, 0, "", 0, count_);
  }
  Cost cost(CutPlanner& /*planner*/) override { return cost_; }
  std::vector<RecordGroup> record_groups(const CutMap& /*cuts*/,
                                         const ValueView& /*view*/) override {
    return {};
  }
  std::optional<AnswerSize> render(const FitPlan& plan) override {
    std::string body;
    ctxguard::pipeline::ViewStats stats;
    const ctxguard::pipeline::ArrayCut& page = plan.cuts.front();
    ctxguard::pipeline::write_page_items(body, array_, "", {page.begin, page.shown}, nullptr,
                                         plan.view, plan.map, stats);
    shown.push_back(page.shown);
    return AnswerSize{
        .tokens = ctxguard::budget::estimate_tokens(body) + 100 + hidden_per_item_ * page.shown,
        .chars = body.size(),
        .bytes = body.size(),
        .lines = 1};
  }

  std::vector<std::size_t> shown;  // by every page written, in order

 private:
  json::array array_;
  std::size_t count_;
  std::size_t hidden_per_item_;
  Cost cost_;
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

// Summarization off: values are never altered, only arrays shortened.
FitOptions unsummarized(std::size_t budget) {
  FitOptions plain = options(budget);
  plain.summarize = false;
  return plain;
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
  const FitResult result = ctxguard::pipeline::fit(subject, unsummarized(2000), ValueView{});
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

TEST_CASE("fitter: a page written over its plan shows fewer items until it fits") {
  // Each item written costs 20 tokens (about half) more than planned: a page planned at the
  // budget comes out far over, and the levels' corrections take items off until one fits.
  PageSubject subject(records(50, 20), 50, 20);
  const FitResult result = ctxguard::pipeline::fit(subject, unsummarized(2000), ValueView{});
  REQUIRE(result.fitted);
  REQUIRE(result.size.tokens <= 2000);
  REQUIRE(subject.shown.size() > 1);
  REQUIRE(subject.shown.front() > result.plan.cuts.front().shown);
  // Not cut to a few: the answer fills the budget as a page that fits must (85%).
  REQUIRE(result.size.tokens >= 2000 * 85 / 100);
}

TEST_CASE("fitter: a page whose one item is over the budget ends with that item alone") {
  PageSubject subject(records(50, 30000), 50, 0);
  const FitResult result = ctxguard::pipeline::fit(subject, unsummarized(2000), ValueView{});
  REQUIRE_FALSE(result.fitted);
  REQUIRE(result.plan.cuts.front().shown == 1);
  REQUIRE(result.plan.cuts.front().is_page);
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

namespace {

// A directory tree `fanout` wide at each level, `levels` deep; every folder holds `files` files.
json::array folder_tree(std::size_t levels, std::size_t fanout, std::size_t files,
                        const std::string& prefix = "d") {
  json::array children;
  for (std::size_t f = 0; f < files; ++f) {
    children.push_back(
        json::object{{"name", prefix + "-file" + std::to_string(f) + ".txt"}, {"type", "file"}});
  }
  if (levels > 0) {
    for (std::size_t i = 0; i < fanout; ++i) {
      const std::string name = prefix + std::to_string(i);
      children.push_back(json::object{{"name", name},
                                      {"type", "directory"},
                                      {"children", folder_tree(levels - 1, fanout, files, name)}});
    }
  }
  return children;
}

// Every "name" of a folder in `tree` down to `levels` levels.
void folder_names(const json::array& tree, std::size_t levels, std::vector<std::string>& names) {
  for (const json::value& entry : tree) {
    if (entry.at("type") != "directory") continue;
    names.emplace_back(entry.at("name").as_string());
    const json::array* children = entry.at("children").if_array();
    if (levels > 1 && children != nullptr) folder_names(*children, levels - 1, names);
  }
}

// Options that collapse values (the breadth level needs a depth limit), none reached here.
FitOptions tree_options(std::size_t budget) {
  FitOptions collapsing = options(budget);
  collapsing.max_depth = 16;
  return collapsing;
}

bool shows_name(const std::string& written, const std::string& name) {
  return written.find("\"name\":\"" + name + "\"") != std::string::npos;
}

}  // namespace

TEST_CASE("fitter: a tree is shown level by level, every branch before any goes deeper") {
  // 6 folders of 6 folders of 6 folders, 8 files in each: about 20,000 tokens whole.
  const json::array tree = folder_tree(3, 6, 8);
  TreeSubject subject(tree);
  const FitResult result = ctxguard::pipeline::fit(subject, tree_options(3000), ValueView{});
  REQUIRE(result.fitted);
  REQUIRE(result.plan.level == FitLevel::kBreadth);
  // Two levels of folders fit: all 42 names are shown, and every folder of the second level
  // says how many entries it holds.
  REQUIRE(result.plan.view.max_array_nesting == 2);
  std::vector<std::string> names;
  folder_names(tree, 2, names);
  REQUIRE(names.size() == 42);
  for (const std::string& name : names) REQUIRE(shows_name(subject.written, name));
  REQUIRE(subject.written.find("\"[array of 14 items: /8/children/8/children]\"") !=
          std::string::npos);
  // Nothing of the third level is shown.
  REQUIRE_FALSE(shows_name(subject.written, "d000"));
}

TEST_CASE("fitter: one huge branch is collapsed, its siblings' levels stay shown") {
  json::array tree = folder_tree(1, 8, 2);
  // One folder of 3 folders of 1,000 files each, beside 8 small ones.
  json::array huge;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "huge" + std::to_string(i);
    huge.push_back(json::object{
        {"name", name}, {"type", "directory"}, {"children", folder_tree(0, 0, 1000, name)}});
  }
  tree.push_back(json::object{{"name", "huge"}, {"type", "directory"}, {"children", huge}});
  TreeSubject subject(tree);
  const FitResult result = ctxguard::pipeline::fit(subject, tree_options(2500), ValueView{});
  REQUIRE(result.fitted);
  REQUIRE(result.plan.level == FitLevel::kBreadth);
  // The huge folders are collapsed by the breadth level; the room left shows the first one's
  // first files as a page.
  REQUIRE(result.plan.cuts.front().path == "/10/children/0/children");
  REQUIRE(result.plan.cuts.front().shown <= 50);
  std::vector<std::string> names;
  folder_names(tree, 2, names);
  for (const std::string& name : names) REQUIRE(shows_name(subject.written, name));
}

TEST_CASE("fitter: folders too long to show whole are given back as pages in the room left") {
  // 30 folders of 90 files: the folders' entries are collapsed at the breadth level, and no
  // folder's 90 entries fit in what their placeholders leave of the budget.
  json::array tree;
  for (int d = 0; d < 30; ++d) {
    json::array files;
    for (int f = 0; f < 90; ++f) {
      // Names of one length: every folder costs the same, and ties go in the answer's order.
      files.push_back(json::object{{"name", "f" + std::to_string(10000 + d * 100 + f) + ".txt"},
                                   {"type", "file"}});
    }
    tree.push_back(json::object{
        {"name", "dir" + std::to_string(d)}, {"type", "directory"}, {"children", files}});
  }
  TreeSubject subject(tree);
  const FitResult result = ctxguard::pipeline::fit(subject, tree_options(4000), ValueView{});
  REQUIRE(result.fitted);
  REQUIRE(result.plan.view.max_array_nesting == 1);
  for (int d = 0; d < 30; ++d) REQUIRE(shows_name(subject.written, "dir" + std::to_string(d)));
  // The first folder shows its first files, cut, with the rest behind its cursor.
  REQUIRE_FALSE(result.plan.cuts.empty());
  const ctxguard::pipeline::ArrayCut& first = result.plan.cuts.front();
  // Ties go largest gain first: the estimate tells the folders' names apart by their digits.
  REQUIRE(first.path.ends_with("/children"));
  const int folder = std::stoi(first.path.substr(1));
  REQUIRE(first.shown >= 10);
  REQUIRE(first.shown < 90);
  REQUIRE(shows_name(subject.written, "f" + std::to_string(10000 + folder * 100) + ".txt"));
  // The others are collapsed, or given back whole while they fit, or as pages listed with
  // their cursors (at most a page of entries each).
  const auto collapsed = [&](int d) {
    return subject.written.find("\"[array of 90 items: /" + std::to_string(d) + "/children]\"") !=
           std::string::npos;
  };
  std::size_t given_back = 0;
  for (int d = 0; d < 30; ++d) given_back += collapsed(d) ? 0 : 1;
  REQUIRE(given_back >= result.plan.cuts.size());
  REQUIRE(given_back < 30);
  for (const ctxguard::pipeline::ArrayCut& cut : result.plan.cuts) REQUIRE(cut.shown <= 50);
  // And the room is used.
  REQUIRE(result.size.tokens >= 4000 * 85 / 100);
}

TEST_CASE("fitter: arrays of arrays are shown a level at a time; flat records are not touched") {
  // A 3-deep matrix of small rows.
  json::array matrix;
  for (int a = 0; a < 12; ++a) {
    json::array plane;
    for (int b = 0; b < 12; ++b) {
      json::array row;
      for (int c = 0; c < 40; ++c) row.push_back(json::array{a, b, c, "cell"});
      plane.push_back(std::move(row));
    }
    matrix.push_back(std::move(plane));
  }
  TreeSubject subject(matrix);
  const FitResult result = ctxguard::pipeline::fit(subject, tree_options(2000), ValueView{});
  REQUIRE(result.fitted);
  REQUIRE(result.plan.view.max_array_nesting >= 1);
  // All 12 planes are there, each as many rows as fit.
  const json::value written = json::parse(subject.written);
  REQUIRE(written.as_array().size() == 12);
  // Records without nested arrays never reach the breadth level.
  TreeSubject flat(json::object{{"rows", records(300, 2000)}});
  FitOptions wide = tree_options(2500);
  wide.max_string_chars = 0;
  const FitResult flat_result = ctxguard::pipeline::fit(flat, wide, ValueView{});
  REQUIRE(flat_result.plan.view.max_array_nesting == 0);
  for (const FitLevel level : flat.levels) REQUIRE(level != FitLevel::kBreadth);
  // A depth limit of 0 (nothing collapsed) turns the level off.
  TreeSubject uncollapsed(matrix);
  const FitResult any_depth = ctxguard::pipeline::fit(uncollapsed, options(2000), ValueView{});
  REQUIRE(any_depth.plan.view.max_array_nesting == 0);
  REQUIRE(uncollapsed.written.find("[array of") == std::string::npos);
}

TEST_CASE("fitter: corrections grow with what an answer came out over") {
  const FitBudget budget{.tokens = 1000};
  // 200 over: a quarter more, and a margin.
  using ctxguard::pipeline::Cost;
  using ctxguard::pipeline::overshoot_after;
  REQUIRE(overshoot_after(Cost{}, {.tokens = 1200}, budget).tokens == 200 * 1.25 + 32);
  REQUIRE(overshoot_after(Cost{.tokens = 10}, {.tokens = 1000}, budget).tokens == 10);
}

TEST_CASE("fitter: an answer is planned within characters and bytes as it is within tokens") {
  json::array rows;
  for (int i = 0; i < 400; ++i) {
    // Non-ASCII text: characters and bytes differ, and both differ from tokens.
    rows.push_back(
        json::object{{"id", i}, {"name", "Zoë Ångström " + std::to_string(i)}, {"city", "Zürich"}});
  }
  const json::value value = json::object{{"rows", rows}};
  for (const FitBudget budget :
       {FitBudget{.tokens = 100'000, .chars = 6000}, FitBudget{.tokens = 100'000, .bytes = 5000},
        FitBudget{.tokens = 1500, .chars = 9000, .bytes = 9000}}) {
    TreeSubject subject(value);
    FitOptions limited = options(budget.tokens);
    limited.budget = budget;
    limited.page_size = 1000;  // no page to fall back on: the array is shortened to what fits
    const FitResult result = ctxguard::pipeline::fit(subject, limited, ValueView{});
    REQUIRE(result.fitted);
    REQUIRE(ctxguard::budget::fits(result.size, budget));
    // Planned, not shrunk to nothing: the answer fills most of its tightest limit.
    const std::size_t chars = ctxguard::budget::utf16_length(subject.written) + 400;
    if (budget.chars != 0 && budget.tokens == 100'000) REQUIRE(chars > budget.chars * 3 / 4);
  }
}

TEST_CASE("fitter: an answer is planned within JSON bytes, its escapes corrected") {
  json::array rows;
  for (int i = 0; i < 400; ++i) {
    // Quotes and line breaks: as JSON a third longer than as text.
    rows.push_back(json::object{{"id", i}, {"quote", "he said \"hi\"\nand \"bye\"\n\"ok\""}});
  }
  const json::value value = json::object{{"rows", rows}};
  // Planned as bytes (FitBudget::of), held to JSON bytes.
  const FitBudget budget{.tokens = 100'000, .bytes = 12'000, .json_bytes = 12'000};
  TreeSubject subject(value);
  FitOptions limited = options(budget.tokens);
  limited.budget = budget;
  limited.page_size = 1000;
  const FitResult result = ctxguard::pipeline::fit(subject, limited, ValueView{});
  REQUIRE(result.fitted);
  REQUIRE(result.size.json_bytes <= 12'000);
  REQUIRE(result.size.json_bytes > 12'000 * 85 / 100);  // corrected, not shrunk to nothing
  REQUIRE(result.size == subject.last);
}

TEST_CASE("fitter: a give-back that comes out over leaves the answer as it was") {
  // Every value given back whole costs 300 tokens more than planned: the give-back fits the
  // plan, comes out over, and with the correction nothing more fits.
  const json::value value = json::object{{"rows", records(300, 600)}};
  int taken_back = 0;
  for (std::size_t budget = 3000; budget <= 9000; budget += 500) {
    INFO("budget " << budget);
    TreeSubject subject(value, 0, 300);
    const FitResult result = ctxguard::pipeline::fit(subject, options(budget), ValueView{});
    REQUIRE(result.fitted);
    REQUIRE(result.size == subject.last);  // what is reported is what was written last
    REQUIRE(subject.last.tokens <= budget);
    taken_back += subject.over_budget(budget) ? 1 : 0;
  }
  REQUIRE(taken_back > 0);  // some give-back came out over and was taken back
}

TEST_CASE("fitter: limits in characters and bytes are corrected per unit") {
  using ctxguard::pipeline::Cost;
  using ctxguard::pipeline::overshoot_after;
  const FitBudget budget{.tokens = 4000, .chars = 8000, .bytes = 0, .lines = 100};
  // Within tokens, 500 characters over: only characters are corrected.
  const Cost next = overshoot_after(Cost{}, {.tokens = 3000, .chars = 8500, .lines = 3}, budget);
  REQUIRE(next.tokens == 0);
  REQUIRE(next.chars > 500);
  REQUIRE(next.bytes == 0);
}
