#pragma once
// `ctxguard_fetch {cursor, aggregate}`: counts and sums over a cached array in one call
// (docs/protocol.md 5.6), exact.
//
// The aggregate: {"groupBy": FIELD or [FIELD, FIELD]?, "sum": [FIELD...]?, "min": [...]?,
// "max": [...]?, "avg": [...]?}, each FIELD a key, dotted for nested objects ("guest.country").
// Every item of the array (or every match of the call's `query`) counts once in its group; a
// group is the values of the groupBy fields (a missing or null value groups as null; an object
// or array as its JSON text).
//
// Numbers are read as the server wrote them, and summed exactly in decimal: a JSON integer; a
// JSON number with a fraction or exponent, as its shortest decimal text (what a server writing
// 213.8 wrote); a string that is a plain decimal ("213.80", "-5", "0.125": PostgreSQL's numeric)
// as its digits. Anything else in a numeric field (other strings, booleans, objects) is counted
// as not a number, and a missing or null value as missing: never guessed. A sum is exact up to
// 38 significant digits (beyond: the field reports an overflow); an average is the exact sum
// divided by the count, rounded to 6 decimals more than the values had. min and max are the
// values as the server wrote them.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "pipeline/fetch/query.hpp"
#include "support/error.hpp"

namespace ctxguard::pipeline {

inline constexpr std::size_t kMaxGroupBy = 2;
inline constexpr std::size_t kMaxAggregateFields = 16;

struct AggregateSpec {
  std::vector<std::string> group_by;  // dotted paths as written
  std::vector<std::string> sum, min, max, avg;

  bool operator==(const AggregateSpec&) const = default;
  // The spec as a cursor carries it (its `fields` list): "g:status", "s:total", ...
  std::vector<std::string> to_cursor_fields() const;
  static std::optional<AggregateSpec> from_cursor_fields(const std::vector<std::string>& fields);
  // The spec as the answer echoes it.
  boost::json::object to_json() const;
};

// The spec `value` gives, or a one-line message saying what is wrong with it.
Checked<AggregateSpec> parse_aggregate(const boost::json::value& value);

// The aggregate of `array` (the items `filter` matches, when given).
struct Aggregate {
  std::size_t items = 0;        // items counted
  boost::json::array groups;    // each {group fields..., "count", "sum": {...}, ...}, most first
  boost::json::object skipped;  // per numeric field: {"missing": n, "notNumbers": n, "overflow"}
};
Aggregate aggregate(const boost::json::array& array, const AggregateSpec& spec,
                    const Query* filter);

}  // namespace ctxguard::pipeline
