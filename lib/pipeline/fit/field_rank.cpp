#include "pipeline/fit/field_rank.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <boost/json/value.hpp>

#include "budget/token_estimator.hpp"
#include "support/iso_date.hpp"
#include "support/text_scan.hpp"

// How a field's kind is decided:
//
// From the key: it is split into lower-case words (snake_case, kebab-case, camelCase and
// acronyms: "bookingID" -> booking id, "HTTPStatus" -> http status) and its last word is looked
// up (identifier, name, status, date and amount words below); a first word "date"/"timestamp"
// ("dateOfBirth") also says date.
//
// From the values: each value has a class (null, boolean, number, ISO 8601 date string, short
// string, string longer than kLongTextChars characters, object/array), and the field's class is
// the one whose values weigh the most tokens over all records ("heaviest"; ties go to the later,
// heavier class). A field of mostly empty notes and a few long ones is long text: that is what
// it costs.
//
// Both together, by the field's value class:
//   nested, long text -> kNested, kLongText (whatever the key says: they are what they cost)
//   date strings      -> kDate (kIdentifier when the key says identifier)
//   numbers           -> what the key says (an id, a status code, a timestamp...) else kAmount
//   booleans          -> kStatus when the key says status, else kShortScalar: flags such as
//                        "private" or "has_wiki" come in numbers and would crowd out dates and
//                        amounts if they ranked as statuses
//   short strings, only nulls -> what the key says, else kShortScalar
//
// Prices: `"key":value,` on its own for every record holding the key (nulls included, as in
// `present`). Only a top-level string is priced cut to max_string_chars characters; nested
// values are priced whole. Order: kind, then the exact keys "id", "name", "title", then fewer
// tokens, then first appearance.

namespace ctxguard::pipeline {

namespace {

namespace json = boost::json;

constexpr std::size_t kLongTextChars = 80;

using text::char_count;
using text::prefix_bytes;

bool is_one_of(std::string_view word, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// Value classes, lightest first (ties between classes go to the later one).
enum class ValueClass { kNull, kBool, kNumber, kShortString, kDate, kLongText, kNested };
constexpr std::size_t kValueClasses = 7;

ValueClass class_of(const json::value& value) {
  switch (value.kind()) {
    case json::kind::null:
      return ValueClass::kNull;
    case json::kind::bool_:
      return ValueClass::kBool;
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return ValueClass::kNumber;
    case json::kind::string: {
      const std::string_view text = value.get_string();
      if (has_iso_date_shape(text)) return ValueClass::kDate;
      const bool long_text = text.size() > kLongTextChars && char_count(text) > kLongTextChars;
      return long_text ? ValueClass::kLongText : ValueClass::kShortString;
    }
    case json::kind::array:
    case json::kind::object:
      break;
  }
  return ValueClass::kNested;
}

FieldKind resolve_kind(std::optional<FieldKind> by_key, ValueClass by_values) {
  switch (by_values) {
    case ValueClass::kNested:
      return FieldKind::kNested;
    case ValueClass::kLongText:
      return FieldKind::kLongText;
    case ValueClass::kDate:
      return by_key == FieldKind::kIdentifier ? FieldKind::kIdentifier : FieldKind::kDate;
    case ValueClass::kNumber:
      return by_key.value_or(FieldKind::kAmount);
    case ValueClass::kBool:
      return by_key == FieldKind::kStatus ? FieldKind::kStatus : FieldKind::kShortScalar;
    case ValueClass::kShortString:
    case ValueClass::kNull:
      break;
  }
  return by_key.value_or(FieldKind::kShortScalar);
}

struct FieldTally {
  std::string_view key;
  std::size_t present = 0;
  double tokens = 0;
  std::array<double, kValueClasses> class_tokens{};
  std::array<std::size_t, kValueClasses> class_count{};
};

// The class whose values weigh the most; kNull only when every value is null.
ValueClass heaviest_class(const FieldTally& tally) {
  std::size_t best = 0;
  for (std::size_t c = 1; c < kValueClasses; ++c) {
    if (tally.class_count[c] == 0) continue;
    if (best == 0 || tally.class_tokens[c] >= tally.class_tokens[best]) best = c;
  }
  return static_cast<ValueClass>(best);
}

bool is_first_in_kind(std::string_view key) {
  return key == "id" || key == "name" || key == "title";
}

}  // namespace

std::optional<FieldKind> kind_of_key(std::string_view key) {
  const std::vector<std::string> words = text::words_of(key);
  if (words.empty()) return std::nullopt;
  const std::string_view last = words.back();
  if (is_one_of(last, {"id", "ids", "uid", "uuid", "guid", "key", "ref", "slug", "sku", "sha",
                       "hash", "isbn"})) {
    return FieldKind::kIdentifier;
  }
  if (is_one_of(last, {"name", "title", "label", "subject", "email", "mail", "username", "login",
                       "handle", "path", "filename", "nickname", "fullname", "displayname",
                       "heading", "headline", "caption"})) {
    return FieldKind::kName;
  }
  if (is_one_of(last,
                {"status", "state", "type", "kind", "category", "level", "severity", "priority",
                 "role", "stage", "phase", "tier", "mode", "outcome", "visibility"})) {
    return FieldKind::kStatus;
  }
  // "on" only after another word: createdOn, postedOn.
  if (is_one_of(last, {"at",        "date",     "time",    "timestamp",  "datetime",
                       "ts",        "created",  "updated", "modified",   "deleted",
                       "published", "expires",  "expiry",  "expiration", "deadline",
                       "due",       "birthday", "dob",     "since",      "until"}) ||
      (last == "on" && words.size() > 1) ||
      is_one_of(words.front(), {"date", "datetime", "timestamp"})) {
    return FieldKind::kDate;
  }
  if (is_one_of(last,
                {"amount",   "total",  "subtotal", "price",  "cost",   "count",   "qty",
                 "quantity", "sum",    "balance",  "fee",    "fees",   "tax",     "size",
                 "length",   "number", "num",      "score",  "rating", "percent", "percentage",
                 "rate",     "votes",  "age",      "weight", "height", "width",   "duration"})) {
    return FieldKind::kAmount;
  }
  return std::nullopt;
}

std::vector<FieldStat> rank_fields(const std::vector<const json::object*>& records,
                                   std::size_t max_string_chars) {
  std::vector<FieldTally> tallies;  // in order of first appearance
  std::unordered_map<std::string_view, std::size_t> slots;
  for (const json::object* record : records) {
    if (record == nullptr) continue;
    // Records usually list the same keys in the same order: try the field after the last one
    // before hashing the key.
    std::size_t next = 0;
    for (const json::key_value_pair& member : *record) {
      std::size_t slot = next;
      if (slot >= tallies.size() || tallies[slot].key != member.key()) {
        const auto [found, added] = slots.try_emplace(member.key(), tallies.size());
        if (added) tallies.push_back(FieldTally{.key = member.key()});
        slot = found->second;
      }
      next = slot + 1;
      FieldTally& tally = tallies[slot];
      const json::value& value = member.value();
      // `"key":value,` priced on its own, as a projection would write it.
      budget::TokenCounter counter;
      counter.add_json_string(member.key());
      counter.add(":");
      if (const json::string* string = value.if_string();
          string != nullptr && max_string_chars > 0) {
        counter.add_json_string(string->subview(0, prefix_bytes(*string, max_string_chars)));
      } else {
        counter.add_json(value);
      }
      counter.add(",");
      const double tokens = counter.fractional_tokens();
      const auto value_class = static_cast<std::size_t>(class_of(value));
      ++tally.present;
      tally.tokens += tokens;
      tally.class_tokens[value_class] += tokens;
      ++tally.class_count[value_class];
    }
  }

  std::vector<FieldStat> ranked;
  ranked.reserve(tallies.size());
  for (const FieldTally& tally : tallies) {
    ranked.push_back(FieldStat{.key = std::string(tally.key),
                               .kind = resolve_kind(kind_of_key(tally.key), heaviest_class(tally)),
                               .present = tally.present,
                               .tokens = tally.tokens});
  }
  // Stable: equal fields keep their order of first appearance.
  std::stable_sort(ranked.begin(), ranked.end(), [](const FieldStat& a, const FieldStat& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    const bool a_first = is_first_in_kind(a.key);
    const bool b_first = is_first_in_kind(b.key);
    if (a_first != b_first) return a_first;
    return a.tokens < b.tokens;
  });
  return ranked;
}

std::vector<std::string> choose_fields(const std::vector<FieldStat>& ranked, double max_tokens,
                                       std::size_t min_fields) {
  std::size_t count = 0;
  double spent = 0;
  while (count < ranked.size() && spent + ranked[count].tokens <= max_tokens) {
    spent += ranked[count].tokens;
    ++count;
  }
  count = std::max(count, std::min(min_fields, ranked.size()));
  std::vector<std::string> keys;
  keys.reserve(count);
  for (std::size_t i = 0; i < count; ++i) keys.push_back(ranked[i].key);
  return keys;
}

}  // namespace ctxguard::pipeline
