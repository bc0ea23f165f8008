#include "pipeline/fit/digest.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <boost/json/value.hpp>

#include "pipeline/fit/field_rank.hpp"
#include "support/iso_date.hpp"
#include "support/json_compare.hpp"
#include "support/json_writer.hpp"
#include "support/text_scan.hpp"

// How the digest decides, in one pass over the items:
//
// Candidate fields. The keys seen in the first kSampleItems items, plus keys first seen later
// while they can still be present in half of the items (first seen at index i with 2i <= size),
// at most kMaxCandidates keys in all (by first appearance). An array of maps keyed by ids would
// otherwise grow the table with every item; a key that appears in none of the first items of a
// uniform array and still in half of them is rare and may be missed once the table is full.
//
// Per candidate, the values (nulls ignored: a field is "present" where it holds a non-null
// value) must all be of one family: strings, booleans or numbers (integers and doubles mix).
// Nested values, mixed families and identifier keys (id, uuid, *_id, *Id, *ID, ...) leave the
// field out. Distinct values are tracked up to `max_distinct`; one more and the field stops
// being categorical (its table is dropped), numbers and dates keep their min/max.
//
// Forms, for fields present in at least half of the items:
//   strings that are all ISO 8601 dates         -> {"min", "max"} (dates are never categories)
//   strings, booleans, integers, at most `max_distinct` distinct, none longer than
//   `max_value_chars`, and some value repeated  -> {"top", "distinct"}
//   other numbers                               -> {"min", "max"}
// "Some value repeated": counts that are all 1 say nothing the items do not (this is what keeps
// integer ids with unremarkable keys, and names in a short array, out of the categories).
//
// Most useful first: categorical fields, then dates, then numbers, each in order of first
// appearance (servers tend to put what matters first), except that categorical fields are
// grouped: those whose whole split the counts show (2..top_values distinct), then those with
// more distinct values (fewer first), then constant ones; and within a group strings before
// booleans before integers (a string category such as a status is what a reader asks about
// most; small integers are often quantities). Ahead of all those that vary come the fields whose
// key names a state or kind (status, state, type, kind, level, severity, category...; the
// kStatus words of field_rank): "how many are cancelled?" is asked of `status`, not `channel`. The
// summary line describes the first categorical field of that order, whether or not `max_fields`
// leaves it in `fields`.

namespace ctxguard::pipeline {

namespace {

namespace json = boost::json;

constexpr std::size_t kSampleItems = 64;
constexpr std::size_t kMaxCandidates = 64;
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026, one character

using text::is_digit;
using text::is_upper;
using text::prefix_bytes;
constexpr auto count_chars = text::char_count;

// id, uid, uuid, guid, and keys ending in one of them as a word: booking_id, booking-id, bookingId,
// bookingID, userUuid (but not "paid" or "valid").
bool is_identifier_key(std::string_view key) {
  for (const std::string_view word : {"id", "uid", "uuid", "guid"}) {
    if (text::equal_folded(key, word)) return true;
    if (key.size() <= word.size()) continue;
    const std::string_view tail = key.substr(key.size() - word.size());
    const char before = key[key.size() - word.size() - 1];
    if (!text::equal_folded(tail, word)) continue;
    if (before == '_' || before == '-' || before == '.' || before == ' ') return true;
    if (is_upper(tail[0]) && !is_upper(before)) return true;
  }
  return false;
}

// ---- per-field state ---------------------------------------------------------------------------

enum class Family { kNone, kString, kBool, kNumber };

// A cheap stand-in for a category's value, which also places it in the field's hash table:
// different fingerprints, different values (for strings, the length and the first and last 8
// bytes; booleans and integers are their own fingerprint).
std::uint64_t fingerprint(const json::value& value) {
  switch (value.kind()) {
    case json::kind::string: {
      const std::string_view text = value.get_string();
      std::uint64_t head = 0;
      std::uint64_t tail = 0;
      if (text.size() >= 8) {
        std::memcpy(&head, text.data(), sizeof head);
        std::memcpy(&tail, text.data() + text.size() - 8, sizeof tail);
      } else {
        for (const char c : text) head = head << 8 | static_cast<unsigned char>(c);
      }
      return (head ^ (tail * 0x9E3779B97F4A7C15u) ^ text.size()) + 0x632BE59BD9B4E019u;
    }
    case json::kind::bool_:
      return value.get_bool() ? 1 : 0;
    case json::kind::int64:
      return static_cast<std::uint64_t>(value.get_int64());
    case json::kind::uint64:
      return value.get_uint64();
    default:
      return 0;
  }
}

// The hash table slot of a fingerprint (its high bits after a multiplicative mix).
std::size_t home_of(std::uint64_t print, std::size_t mask) {
  return static_cast<std::size_t>((print * 0x9E3779B97F4A7C15u) >> 40) & mask;
}

struct Category {
  const json::value* value = nullptr;  // its first occurrence: a string, boolean or integer
  std::uint64_t fingerprint = 0;
  std::size_t count = 0;
};

// Within one field every category is of the field's family; int64 and uint64 never hold the same
// integer (parsed integers are uint64 only above INT64_MAX).
bool same_category(const Category& category, const json::value& value, std::uint64_t print) {
  if (category.fingerprint != print) return false;
  const json::value& known = *category.value;
  if (known.kind() != value.kind()) return false;
  if (known.is_string()) return text::same_bytes(known.get_string(), value.get_string());
  return true;  // booleans and integers: the fingerprint is the value
}

// Categories in the digest's order: by count descending, then by value ascending (numbers
// numerically, strings bytewise, false before true).
bool category_before(const Category& a, const Category& b) {
  if (a.count != b.count) return a.count > b.count;
  const json::value& x = *a.value;
  const json::value& y = *b.value;
  if (x.is_string() && y.is_string()) {
    return std::string_view(x.get_string()) < std::string_view(y.get_string());
  }
  if (x.is_bool() && y.is_bool()) return !x.get_bool() && y.get_bool();
  if (x.is_number() && y.is_number()) return compare_json_numbers(x, y) < 0;
  return static_cast<int>(x.kind()) < static_cast<int>(y.kind());
}

struct FieldState {
  std::string_view key;
  std::size_t present = 0;  // non-null values
  Family family = Family::kNone;
  bool dead = false;        // left out whatever follows: nested or mixed values, an identifier
  bool categorical = true;  // every value a category so far, at most max_distinct distinct
  bool dates = true;        // every string an ISO 8601 date so far
  bool integers = true;     // every number an integer so far
  std::vector<Category> categories;
  // Open addressing over `categories`: 1 + the index of a category, 0 for an empty slot; at
  // most half full. Values of a field rarely come in runs, and a linear scan over 20 categories
  // per value would cost a third of the digest's time.
  std::vector<std::size_t> table;
  const json::value* min = nullptr;
  const json::value* max = nullptr;
  Instant min_instant;
  Instant max_instant;
};

void stop_categories(FieldState& field) {
  field.categorical = false;
  field.categories = {};
  field.table = {};
}

void grow_table(FieldState& field) {
  field.table.assign(std::max<std::size_t>(16, field.table.size() * 2), 0);
  const std::size_t mask = field.table.size() - 1;
  for (std::size_t i = 0; i < field.categories.size(); ++i) {
    std::size_t at = home_of(field.categories[i].fingerprint, mask);
    while (field.table[at] != 0) at = (at + 1) & mask;
    field.table[at] = i + 1;
  }
}

void count_category(FieldState& field, const json::value& value, const DigestLimits& limits) {
  if (!field.categorical) return;
  std::vector<Category>& categories = field.categories;
  if (2 * (categories.size() + 1) > field.table.size()) grow_table(field);
  const std::uint64_t print = fingerprint(value);
  const std::size_t mask = field.table.size() - 1;
  std::size_t at = home_of(print, mask);
  while (const std::size_t entry = field.table[at]) {
    Category& category = categories[entry - 1];
    if (same_category(category, value, print)) {
      ++category.count;
      return;
    }
    at = (at + 1) & mask;
  }
  if (categories.size() >= limits.max_distinct) {
    stop_categories(field);
    return;
  }
  categories.push_back(Category{&value, print, 1});
  field.table[at] = categories.size();
}

void observe_date(FieldState& field, const json::value& value, Calendar& calendar) {
  const std::string_view text = value.get_string();
  const std::optional<Instant> instant = parse_iso_date(text, calendar);
  if (!instant) {
    field.dates = false;
    return;
  }
  if (field.min == nullptr ||
      compare_dates(*instant, text, field.min_instant, field.min->get_string()) < 0) {
    field.min = &value;
    field.min_instant = *instant;
  }
  if (field.max == nullptr ||
      compare_dates(*instant, text, field.max_instant, field.max->get_string()) > 0) {
    field.max = &value;
    field.max_instant = *instant;
  }
}

void observe(FieldState& field, const json::value& value, const DigestLimits& limits,
             Calendar& calendar) {
  Family family = Family::kNone;
  switch (value.kind()) {
    case json::kind::null:
      return;
    case json::kind::array:
    case json::kind::object:
      field.dead = true;
      stop_categories(field);
      return;
    case json::kind::bool_:
      family = Family::kBool;
      break;
    case json::kind::string:
      family = Family::kString;
      break;
    default:
      family = Family::kNumber;
      break;
  }
  if (field.family != family && field.family != Family::kNone) {
    field.dead = true;
    stop_categories(field);
    return;
  }
  field.family = family;
  ++field.present;
  if (family == Family::kNumber) {
    if (field.min == nullptr || compare_json_numbers_fast(value, *field.min) < 0)
      field.min = &value;
    if (field.max == nullptr || compare_json_numbers_fast(value, *field.max) > 0)
      field.max = &value;
    if (value.is_double() && field.integers) {
      field.integers = false;
      stop_categories(field);
    }
  } else if (family == Family::kString) {
    if (field.dates) observe_date(field, value, calendar);
    // Counted even while every value is a date: a later value may turn out not to be one.
    if (field.categorical) {
      const std::string_view text = value.get_string();
      if (text.size() > limits.max_value_chars && count_chars(text) > limits.max_value_chars) {
        stop_categories(field);
      }
    }
  }
  count_category(field, value, limits);
  if (!field.categorical && family != Family::kNumber && !field.dates) field.dead = true;
}

// ---- the digest --------------------------------------------------------------------------------

enum class Form { kCategories, kDates, kNumbers };

struct Described {
  std::size_t slot = 0;  // index of the field state (order of first appearance)
  Form form = Form::kCategories;
};

// The last key of `path`, unescaped ("~1" is "/", "~0" is "~"); "items" for "" or an index.
std::string noun_of(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (last.empty() || std::all_of(last.begin(), last.end(), is_digit)) return "items";
  std::string noun;
  for (std::size_t i = 0; i < last.size(); ++i) {
    if (last[i] == '~' && i + 1 < last.size() && (last[i + 1] == '0' || last[i + 1] == '1')) {
      noun += last[i + 1] == '0' ? '~' : '/';
      ++i;
    } else {
      noun += last[i];
    }
  }
  return noun;
}

// Control characters (a line break in a value) would break the one line: they become spaces.
void append_one_line(std::string& out, std::string_view text) {
  for (const char c : text) out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
}

// How a category reads: strings as they are ("" for the empty string), others as JSON text.
std::string category_text(const json::value& value) {
  std::string text;
  if (const json::string* string = value.if_string()) {
    text = std::string_view(*string);
  } else {
    write_json_scalar(text, value);
  }
  return text;
}

std::vector<Category> top_categories(const FieldState& field, std::size_t top_values) {
  std::vector<Category> top = field.categories;
  const std::size_t shown = std::min(top_values, top.size());
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(shown), top.end(),
                    category_before);
  top.resize(shown);
  return top;
}

// The order of categorical fields (see the top of this file): smaller tuples first.
std::tuple<bool, bool, int, int, std::size_t, std::size_t> category_rank(
    const FieldState& field, std::size_t slot, const DigestLimits& limits) {
  const std::size_t distinct = field.categories.size();
  const int group = distinct == 1 ? 2 : (distinct <= limits.top_values ? 0 : 1);
  const int family = field.family == Family::kString ? 0 : (field.family == Family::kBool ? 1 : 2);
  // A field that names a state or kind (status, type, level...) is what a reader asks about
  // first, unless it never varies.
  const bool constant = group == 2;
  const bool telling = kind_of_key(field.key) == FieldKind::kStatus;
  return {constant, !telling, group, family, group == 1 ? distinct : 0, slot};
}

json::object describe(const FieldState& field, Form form, const DigestLimits& limits) {
  json::object entry;
  if (form == Form::kCategories) {
    json::object top;
    for (const Category& category : top_categories(field, limits.top_values)) {
      top[category_text(*category.value)] = static_cast<std::int64_t>(category.count);
    }
    entry["top"] = std::move(top);
    entry["distinct"] = static_cast<std::int64_t>(field.categories.size());
  } else {
    entry["min"] = *field.min;
    entry["max"] = *field.max;
  }
  return entry;
}

// Cuts `line` to at most `chars` characters at a character boundary, ending in "…".
void fit_line(std::string& line, std::size_t chars) {
  if (count_chars(line) <= chars) return;
  if (chars == 0) {
    line.clear();
    return;
  }
  line.resize(prefix_bytes(line, chars - 1));
  line += kEllipsis;
}

// "; status: confirmed 320, cancelled 120, …" within the `room` characters left on the line,
// cut after a whole "value count" pair; empty when not even the first pair fits.
std::string describe_in_summary(const FieldState& field, const DigestLimits& limits,
                                std::size_t room) {
  std::string part = "; ";
  append_one_line(part, field.key);
  part += ": ";
  std::size_t used = count_chars(part);
  const std::vector<Category> top = top_categories(field, limits.top_values);
  std::size_t listed = 0;
  for (const Category& category : top) {
    std::string pair = listed == 0 ? "" : ", ";
    const std::string text = category_text(*category.value);
    append_one_line(pair, text.empty() ? "\"\"" : text);
    pair += ' ';
    pair += std::to_string(category.count);
    const std::size_t pair_chars = count_chars(pair);
    if (used + pair_chars > room) break;
    part += pair;
    used += pair_chars;
    ++listed;
  }
  if (listed == 0) return {};
  const std::size_t kMoreChars = 3;  // ", …"
  if (listed < field.categories.size() && used + kMoreChars <= room) {
    part += ", ";
    part += kEllipsis;
  }
  return part;
}

}  // namespace

std::optional<ArrayDigest> digest_array(const json::array& array, std::string_view path,
                                        const DigestLimits& limits) {
  const std::size_t size = array.size();
  std::vector<FieldState> fields;
  std::unordered_map<std::string_view, std::size_t> slots;
  std::size_t objects = 0;
  Calendar calendar;
  for (std::size_t i = 0; i < size; ++i) {
    const json::object* object = array[i].if_object();
    if (object == nullptr) continue;
    ++objects;
    const bool admits = i < kSampleItems || 2 * i <= size;
    // Items usually list the same keys in the same order: try the slot after the last one first.
    std::size_t next = 0;
    for (const json::key_value_pair& member : *object) {
      const std::string_view key = member.key();
      std::size_t slot = next;
      if (slot >= fields.size() || !text::same_bytes(fields[slot].key, key)) {
        const auto found = slots.find(key);
        if (found != slots.end()) {
          slot = found->second;
        } else {
          if (!admits || fields.size() >= kMaxCandidates) continue;
          slot = fields.size();
          slots.emplace(key, slot);
          FieldState& added = fields.emplace_back();
          added.key = key;
          added.dead = is_identifier_key(key);
          if (added.dead) stop_categories(added);
        }
      }
      next = slot + 1;
      if (!fields[slot].dead) observe(fields[slot], member.value(), limits, calendar);
    }
  }
  if (2 * objects < size) return std::nullopt;

  std::vector<Described> described;
  for (std::size_t slot = 0; slot < fields.size(); ++slot) {
    const FieldState& field = fields[slot];
    if (field.dead || field.present == 0 || 2 * field.present < size) continue;
    const bool repeated = field.categorical && field.categories.size() < field.present;
    if (field.family == Family::kString && field.dates) {
      described.push_back({slot, Form::kDates});
    } else if (repeated) {
      described.push_back({slot, Form::kCategories});
    } else if (field.family == Family::kNumber) {
      described.push_back({slot, Form::kNumbers});
    }
  }
  std::stable_sort(described.begin(), described.end(), [&](const Described& a, const Described& b) {
    if (a.form != b.form) return a.form < b.form;
    if (a.form != Form::kCategories) return a.slot < b.slot;
    return category_rank(fields[a.slot], a.slot, limits) <
           category_rank(fields[b.slot], b.slot, limits);
  });

  ArrayDigest digest;
  for (std::size_t i = 0; i < described.size() && i < limits.max_fields; ++i) {
    const FieldState& field = fields[described[i].slot];
    digest.fields[field.key] = describe(field, described[i].form, limits);
  }

  digest.summary = std::to_string(size);
  digest.summary += ' ';
  append_one_line(digest.summary, noun_of(path));
  fit_line(digest.summary, limits.summary_chars);
  const std::size_t used = count_chars(digest.summary);
  if (!described.empty() && described.front().form == Form::kCategories &&
      used < limits.summary_chars) {
    digest.summary +=
        describe_in_summary(fields[described.front().slot], limits, limits.summary_chars - used);
  }
  return digest;
}

}  // namespace ctxguard::pipeline
