#include <catch2/catch.hpp>

#include <string>

#include <boost/json.hpp>

#include "pipeline/fetch/aggregate.hpp"
#include "support/json_reader.hpp"

namespace json = boost::json;
using ctxguard::pipeline::aggregate;
using ctxguard::pipeline::AggregateSpec;
using ctxguard::pipeline::parse_aggregate;
using ctxguard::pipeline::Query;

namespace {

json::array array_of(std::string_view text) { return ctxguard::parse_json(text)->as_array(); }

AggregateSpec spec_of(std::string_view text) {
  auto parsed = parse_aggregate(*ctxguard::parse_json(text));
  REQUIRE(parsed.has_value());
  return *parsed;
}

}  // namespace

TEST_CASE("aggregate: counts and exact decimal sums by group, the largest group first") {
  // PostgreSQL writes numeric columns as strings: "213.80" + "100.20" is "314.00", not 314.0000001.
  const json::array orders = array_of(R"([
    {"status": "refunded", "total": "213.80", "qty": 2},
    {"status": "paid", "total": "10.10", "qty": 1},
    {"status": "refunded", "total": "100.20", "qty": 3},
    {"status": "paid", "total": "0.1", "qty": 1},
    {"status": "paid", "total": "0.2", "qty": 5}])");
  const auto result = aggregate(orders, spec_of(R"({"groupBy": "status", "sum": ["total", "qty"],
                                                     "avg": "qty", "min": "total", "max": "total"})"),
                                nullptr);
  CHECK(result.items == 5);
  REQUIRE(result.groups.size() == 2);
  CHECK(result.groups[0] == json::parse(R"({"status": "paid", "count": 3,
      "sum": {"total": "10.40", "qty": 7}, "min": {"total": "0.1"}, "max": {"total": "10.10"},
      "avg": {"qty": "2.333333"}})"));
  CHECK(result.groups[1].at("sum").at("total") == "314.00");
  CHECK(result.skipped.empty());
}

TEST_CASE("aggregate: JSON numbers sum exactly as written; a sum that a double says exactly") {
  const json::array values = array_of(R"([{"v": 0.1}, {"v": 0.2}, {"v": 1e2}, {"v": -3}])");
  const auto result = aggregate(values, spec_of(R"({"sum": "v"})"), nullptr);
  CHECK(result.groups[0] == json::parse(R"({"count": 4, "sum": {"v": 97.3}})"));
  const json::array big = array_of(R"([{"v": 9007199254740993}, {"v": 0.5}])");
  CHECK(aggregate(big, spec_of(R"({"sum": "v"})"), nullptr).groups[0].at("sum").at("v") ==
        "9007199254740993.5");
}

TEST_CASE("aggregate: missing and non-numeric values are reported, never guessed") {
  const json::array values =
      array_of(R"([{"v": 1}, {"v": null}, {}, {"v": "n/a"}, {"v": true}, {"v": "2.5"}])");
  const auto result = aggregate(values, spec_of(R"({"sum": "v", "max": "v"})"), nullptr);
  CHECK(result.groups[0].at("sum").at("v") == "3.5");
  CHECK(result.groups[0].at("max").at("v") == "2.5");
  CHECK(result.skipped == json::parse(R"({"v": {"missing": 2, "notNumbers": 2}})"));
}

TEST_CASE("aggregate: two groupBy fields, dotted, a filter; an empty input") {
  const json::array bookings = array_of(R"([
    {"guest": {"country": "PT"}, "status": "cancelled", "nights": 2},
    {"guest": {"country": "PT"}, "status": "confirmed", "nights": 3},
    {"guest": {"country": "DE"}, "status": "cancelled", "nights": 1},
    {"guest": {"country": "PT"}, "status": "cancelled", "nights": 4},
    {"status": "cancelled", "nights": 5}])");
  const auto filter = Query::parse("status=cancelled").value();
  const auto result = aggregate(
      bookings, spec_of(R"({"groupBy": ["guest.country", "status"], "sum": "nights"})"), &filter);
  CHECK(result.items == 4);
  REQUIRE(result.groups.size() == 3);
  CHECK(result.groups[0] == json::parse(R"({"guest.country": "PT", "status": "cancelled",
                                           "count": 2, "sum": {"nights": 6}})"));
  CHECK(result.groups[2].at("guest.country").is_null());

  const auto empty = aggregate(json::array{}, spec_of(R"({"groupBy": "status"})"), nullptr);
  CHECK(empty.items == 0);
  CHECK(empty.groups.empty());
}

TEST_CASE("aggregate: a sum over 38 digits says overflow instead of a wrong number") {
  const std::string huge = "\"" + std::string(37, '9') + "\"";
  json::array values;
  for (int i = 0; i < 20; ++i) values.push_back(json::object{{"v", json::parse(huge)}});
  const auto result = aggregate(values, spec_of(R"({"sum": "v"})"), nullptr);
  CHECK(result.groups[0].at("sum").at("v").is_null());
  CHECK(result.skipped.at("v").at("overflow") == true);
}

TEST_CASE("aggregate spec: what is accepted, refused with a message, and carried by a cursor") {
  for (const char* bad : {R"("status")", R"({"groupBy": 3})", R"({"count": "x"})",
                          R"({"groupBy": ["a", "b", "c"]})", R"({"sum": [""]})"}) {
    CHECK_FALSE(parse_aggregate(json::parse(bad)).has_value());
  }
  const AggregateSpec spec = spec_of(R"({"groupBy": ["a.b"], "sum": "x", "avg": ["y", "z"]})");
  CHECK(AggregateSpec::from_cursor_fields(spec.to_cursor_fields()) == spec);
  CHECK_FALSE(AggregateSpec::from_cursor_fields({"q:x"}));
  CHECK(spec.to_json() == json::parse(R"({"groupBy": ["a.b"], "sum": ["x"], "avg": ["y", "z"]})"));
}
