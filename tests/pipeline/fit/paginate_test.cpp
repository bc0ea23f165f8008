#include <catch2/catch.hpp>

#include <cmath>

#include <boost/json.hpp>

#include "budget/answer_size.hpp"
#include "budget/token_estimator.hpp"
#include "pipeline/fit/paginate.hpp"
#include "support/json_writer.hpp"

namespace json = boost::json;
using ctxguard::pipeline::Cost;
using ctxguard::pipeline::CutPlanner;
using ctxguard::pipeline::write_with_cuts;

namespace {

json::array records(std::size_t count, std::string_view note = "a short note") {
  json::array out;
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back(json::object{{"id", i}, {"note", note}});
  }
  return out;
}

std::string written(const json::value& value, const CutPlanner& planner) {
  std::string out;
  write_with_cuts(out, value, planner.cut_map());
  return out;
}

}  // namespace

TEST_CASE("paginate: a tree costs what its minified JSON is estimated at") {
  const json::value value = json::object{{"rows", records(120)}, {"total", 120}};
  CutPlanner planner(50, 10);
  planner.count_chars(true);
  const Cost cost = planner.add_tree(value, 0, "");
  const std::string text = ctxguard::to_json(value);
  const auto estimate = static_cast<double>(ctxguard::budget::estimate_tokens(text));
  REQUIRE(std::abs(cost.tokens - estimate) <= 1.0);
  // Characters and bytes are exact.
  REQUIRE(cost.bytes == static_cast<double>(text.size()));
  REQUIRE(cost.chars == static_cast<double>(ctxguard::budget::utf16_length(text)));
}

TEST_CASE("paginate: characters count UTF-16 code units, bytes UTF-8 bytes, escapes included") {
  // é is 2 bytes and 1 unit, 😀 4 bytes and 2 units; the quote and newline are escaped.
  const json::value value = json::object{{"s", "é😀\"\n"}};
  CutPlanner planner(50, 10);
  planner.count_chars(true);
  const Cost cost = planner.add_tree(value, 0, "");
  const std::string text = ctxguard::to_json(value);  // {"s":"é😀\"\n"}
  REQUIRE(cost.bytes == static_cast<double>(text.size()));
  REQUIRE(cost.chars == static_cast<double>(text.size() - 1 - 2));
}

TEST_CASE("paginate: an excess in characters is cut as exactly as one in tokens") {
  const json::value value = json::object{{"rows", records(300)}};
  CutPlanner planner(50, 10);
  planner.count_chars(true);
  const Cost cost = planner.add_tree(value, 0, "");
  // Tokens are within; only characters are over, by a third of the whole.
  Cost excess = Cost::tokens_only(-1e9);
  excess.chars = cost.chars / 3;
  REQUIRE(planner.cut(excess));
  const std::string shown = written(value, planner);
  REQUIRE(static_cast<double>(ctxguard::budget::utf16_length(shown)) <= cost.chars - excess.chars);
}

TEST_CASE("paginate: arrays longer than a page are cut to one page, the largest first") {
  const json::value value = json::object{{"small", records(60)},
                                         {"large", records(300, "a much longer note, repeated")},
                                         {"tiny", records(8)}};
  CutPlanner planner(50, 10);
  planner.add_tree(value, 0, "");
  // Just enough to need the largest array cut: one page of it does it.
  REQUIRE(planner.cut_to_pages(Cost::tokens_only(10.0)));
  const auto cuts = planner.visible_cuts();
  REQUIRE(cuts.size() == 1);
  REQUIRE(cuts.front().path == "/large");
  REQUIRE(cuts.front().shown == 50);
  REQUIRE(cuts.front().total == 300);

  // The answer keeps the server's items, in order, and the other arrays whole.
  const json::value shown = json::parse(written(value, planner));
  REQUIRE(shown.at("large").as_array().size() == 50);
  REQUIRE(shown.at("large").at(49).at("id") == 49);
  REQUIRE(shown.at("small").as_array().size() == 60);
}

TEST_CASE("paginate: arrays of min_cut_items or fewer are never cut") {
  const json::value value = json::object{{"few", records(10, std::string(400, 'x'))}};
  CutPlanner planner(5, 10);
  planner.add_tree(value, 0, "");
  REQUIRE_FALSE(planner.cut(Cost::tokens_only(1e9)));
  REQUIRE(planner.visible_cuts().empty());
  REQUIRE(written(value, planner) == ctxguard::to_json(value));
}

TEST_CASE("paginate: when pages are not enough, shown arrays shrink, never below one item") {
  const json::value value = json::object{{"rows", records(500)}};
  CutPlanner planner(50, 10);
  const Cost cost = planner.add_tree(value, 0, "");
  REQUIRE_FALSE(planner.cut(Cost::tokens_only(cost.tokens * 10)));  // more than everything
  const auto cuts = planner.visible_cuts();
  REQUIRE(cuts.size() == 1);
  REQUIRE(cuts.front().shown == 1);
  REQUIRE(planner.excess_left().over());
  REQUIRE(json::parse(written(value, planner)).at("rows").as_array().size() == 1);
}

TEST_CASE("paginate: a cut inside an item is listed with its own path") {
  json::array outer;
  for (int i = 0; i < 3; ++i) outer.push_back(json::object{{"name", i}, {"items", records(400)}});
  const json::value value = json::object{{"groups", outer}};
  CutPlanner planner(50, 2);
  planner.add_tree(value, 0, "");
  REQUIRE(planner.cut_to_pages(Cost::tokens_only(100.0)));
  const auto cuts = planner.visible_cuts();
  REQUIRE_FALSE(cuts.empty());
  for (const auto& cut : cuts) {
    REQUIRE(cut.path.rfind("/groups/", 0) == 0);
    REQUIRE(cut.path.size() > std::string("/groups/").size());
    REQUIRE(cut.shown == 50);
  }
}
