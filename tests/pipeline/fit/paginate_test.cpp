#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

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

// Room in tokens, with characters and bytes not limited.
Cost room_of(double tokens) {
  constexpr double kAny = std::numeric_limits<double>::infinity();
  return Cost{.tokens = tokens, .chars = kAny, .bytes = kAny};
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

TEST_CASE("paginate: growing a shortened array back adds what shrinking it took, up to its page") {
  const json::value value = json::object{{"rows", records(120)}};
  CutPlanner planner(50, 10);
  const Cost whole = planner.add_tree(value, 0, "");
  REQUIRE(planner.cut(Cost::tokens_only(whole.tokens - 300)));
  const ctxguard::pipeline::CutMap shrunk = planner.cut_map();
  const std::size_t shown = shrunk.begin()->second.count;
  REQUIRE(shown < 50);
  // The room of the next three items (and a little): exactly three come back, each priced as
  // cut() did: what its comma and its JSON add to the array written up to it.
  const json::array& rows = value.at("rows").as_array();
  const auto written_up_to = [&](std::size_t count) {
    ctxguard::budget::TokenCounter counter;
    counter.add("[");
    for (std::size_t i = 0; i < count; ++i) {
      if (i > 0) counter.add(",");
      counter.add_json(rows[i]);
    }
    return counter.fractional_tokens();
  };
  const auto price = [&](std::size_t index) {
    return written_up_to(index + 1) - written_up_to(index);
  };
  const double item = price(shown + 3);
  Cost room = room_of(price(shown) + price(shown + 1) + price(shown + 2) + 0.5);
  REQUIRE(planner.grow_shown(room, SIZE_MAX) == 3);
  REQUIRE(planner.cut_map().begin()->second.count == shown + 3);
  REQUIRE(room.tokens >= 0);
  REQUIRE(room.tokens < item);
  // Unlimited room: the array grows to its page, never past it.
  Cost all = room_of(1e9);
  planner.grow_shown(all, SIZE_MAX);
  REQUIRE(planner.cut_map().begin()->second.count == 50);
  // A fresh planner shown as that map, capped at 10 items, then grown to 12 at most.
  CutPlanner again(50, 10);
  again.add_tree(value, 0, "");
  again.apply(planner.cut_map());
  REQUIRE(written(value, again) == written(value, planner));
  again.cap_shown(10);
  REQUIRE(again.cut_map().begin()->second.count == 10);
  Cost more = room_of(1e9);
  REQUIRE(again.grow_shown(more, 12) == 2);
  REQUIRE(again.cut_map().begin()->second.count == 12);
}
