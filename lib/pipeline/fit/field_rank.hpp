#pragma once
// Which fields of a record are essential: the automatic choice of field
// projection when no per-tool map names them.
//
// Fields are ranked by what they are, from their key and their values: identifiers, then names
// and titles, then status/state/type, then dates, then amounts and counts, then other short
// scalars; long text and nested values last (the larger, the later). Within a rank the cheaper
// field comes first. A projection keeps a prefix of this order.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

namespace ctxguard::pipeline {

enum class FieldKind {
  kIdentifier,   // id, uuid, key, *_id, *Id, *ID, slug, ref, ...
  kName,         // name, title, label, subject, email, username, path, filename, ...
  kStatus,       // status, state, type, kind, category, level, severity, priority, role, ...
  kDate,         // *_at, *At, date, time, timestamp, created, updated, ... or ISO 8601 values
  kAmount,       // numbers (amount, total, price, count, qty, ... or any numeric value)
  kShortScalar,  // other scalars whose values stay short (<= 80 characters)
  kLongText,     // strings longer than that
  kNested,       // objects and arrays
};

struct FieldStat {
  std::string key;
  FieldKind kind = FieldKind::kShortScalar;
  std::size_t present = 0;  // records holding the key
  double tokens = 0;        // estimated tokens of `"key":value,` summed over the records
};

// What a key alone says of its field ("bookingStatus" -> kStatus, "created_at" -> kDate), or
// nothing: its last word (split at _ - . and camelCase) looked up in the lists of field_rank.cpp.
std::optional<FieldKind> kind_of_key(std::string_view key);

// The top-level keys of `records` (each an object; null pointers are skipped), most essential
// first. String values are priced as if cut to `max_string_chars` characters (0: whole).
std::vector<FieldStat> rank_fields(const std::vector<const boost::json::object*>& records,
                                   std::size_t max_string_chars = 0);

// The keys to keep so the records' fields cost at most `max_tokens` in all: the longest prefix
// of `ranked` within it, but never fewer than `min_fields` (or all, when there are fewer).
std::vector<std::string> choose_fields(const std::vector<FieldStat>& ranked, double max_tokens,
                                       std::size_t min_fields = 1);

}  // namespace ctxguard::pipeline
