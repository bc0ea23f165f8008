#pragma once
// The digest of a long array of objects: what a model needs
// to answer "how many are cancelled?" or "what is the latest date?" without paging through the
// items. Deterministic (ties broken by value), no model calls, bounded in size whatever the
// array holds.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace ctxguard::pipeline {

struct DigestLimits {
  std::size_t max_fields = 6;        // fields described in the digest
  std::size_t top_values = 5;        // value counts listed per low-cardinality field
  std::size_t max_distinct = 20;     // more distinct values than this: not low-cardinality
  std::size_t max_value_chars = 40;  // longer string values are never counted as categories
  std::size_t summary_chars = 100;   // the one-line summary's length limit (in characters)
};

struct ArrayDigest {
  // One line of at most `summary_chars` characters, e.g.
  // "500 bookings; status: confirmed 320, cancelled 120, pending 60".
  std::string summary;
  // Per field (top-level keys of the items, in order of first appearance, the most useful
  // first, at most `max_fields`):
  //   low-cardinality (strings, booleans, integers with at most `max_distinct` distinct values):
  //     {"top": {"confirmed": 320, "cancelled": 120, ...}, "distinct": 3}   (top `top_values`,
  //     by count descending then value ascending; values written as their JSON text for
  //     non-strings, e.g. "true", "3")
  //   numbers otherwise: {"min": 12.5, "max": 990}
  //   date/time strings (ISO 8601: 2024-05-01, 2024-05-01T12:30:00Z, ...): {"min": "...",
  //   "max": "..."}
  // Fields present in fewer than half of the items, or that fit none of the above (ids, free
  // text, nested values), are left out.
  boost::json::object fields;
};

// The digest of `array`, the array at `path` (an RFC 6901 pointer; its last key names the items
// in the summary: "/bookings" -> "500 bookings", "" or an index -> "500 items"). nullopt when
// fewer than half of the items are objects. One pass over the items.
std::optional<ArrayDigest> digest_array(const boost::json::array& array, std::string_view path,
                                        const DigestLimits& limits = {});

}  // namespace ctxguard::pipeline
