#include "pipeline/digest.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <boost/json/value.hpp>

#include "support/json_writer.hpp"

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
// most; small integers are often quantities). The summary line describes the first categorical
// field of that order, whether or not `max_fields` leaves it in `fields`.

namespace ctxguard::pipeline {

namespace {

namespace json = boost::json;

constexpr std::size_t kSampleItems = 64;
constexpr std::size_t kMaxCandidates = 64;
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026, one character

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Characters as Unicode code points (for valid UTF-8; invalid bytes count as one each).
std::size_t count_chars(std::string_view text) {
  std::size_t count = 0;
  for (const char c : text) count += is_continuation(c) ? 0 : 1;
  return count;
}

// The byte length of the first `chars` characters of `text` (all of it when shorter).
std::size_t prefix_bytes(std::string_view text, std::size_t chars) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_continuation(text[i]) && seen++ == chars) return i;
  }
  return text.size();
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

// id, uid, uuid, guid, and keys ending in one of them as a word: booking_id, booking-id, bookingId,
// bookingID, userUuid (but not "paid" or "valid").
bool is_identifier_key(std::string_view key) {
  for (const std::string_view word : {"id", "uid", "uuid", "guid"}) {
    if (iequals(key, word)) return true;
    if (key.size() <= word.size()) continue;
    const std::string_view tail = key.substr(key.size() - word.size());
    const char before = key[key.size() - word.size() - 1];
    if (!iequals(tail, word)) continue;
    if (before == '_' || before == '-' || before == '.' || before == ' ') return true;
    if (is_upper(tail[0]) && !is_upper(before)) return true;
  }
  return false;
}

// ---- ISO 8601 dates ----------------------------------------------------------------------------

// A date or date-time as a comparable instant: seconds since 1970 in UTC (a date alone, or a
// time without an offset, counts as UTC), then the fraction's digits.
struct Instant {
  std::int64_t seconds = 0;
  std::string_view fraction;
};

// The number the `count` digits at `pos` write, or -1.
[[gnu::always_inline]] inline int digits_at(std::string_view text, std::size_t pos,
                                            std::size_t count) {
  if (pos + count > text.size()) return -1;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    const int digit = static_cast<unsigned char>(text[i]) - '0';
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

// Days since 1970-01-01 of a proleptic Gregorian date of year 0..9999 (H. Hinnant's
// days_from_civil, shifted by one 400-year era so that every quantity stays unsigned).
std::int64_t days_from_civil(int year, int month, int day) {
  constexpr std::int64_t kEraDays = 146097;
  const auto y = static_cast<unsigned>(year + 400 - (month <= 2 ? 1 : 0));
  const auto m = static_cast<unsigned>(month);
  const unsigned era = y / 400;
  const unsigned year_of_era = y - era * 400;
  const unsigned day_of_year =
      (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + static_cast<unsigned>(day) - 1;
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return std::int64_t{era} * kEraDays + std::int64_t{day_of_era} - 719468 - kEraDays;
}

int days_in_month(int year, int month) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// The months of the dates seen last, one per month of the year: dates in an array mostly share
// their years, and the calendar arithmetic was half the cost of a date.
class Calendar {
 public:
  struct Month {
    int year = -1;
    int days = 0;                // in the month
    std::int64_t first_day = 0;  // days since 1970-01-01 of its first day
  };

  const Month& month(int year, int month) {
    Month& known = months_[month - 1];
    if (known.year != year) {
      known.year = year;
      known.days = days_in_month(year, month);
      known.first_day = days_from_civil(year, month, 1);
    }
    return known;
  }

 private:
  std::array<Month, 12> months_{};
};

// YYYY-MM-DD, optionally followed by T (or a space) hh:mm[:ss[.fraction]] and Z or +-hh[[:]mm].
std::optional<Instant> parse_iso_date(std::string_view text, Calendar& calendar) {
  const std::size_t size = text.size();
  if (size < 10 || size > 40 || text[4] != '-' || text[7] != '-') return {};
  const int year = digits_at(text, 0, 4);
  const int month = digits_at(text, 5, 2);
  const int day = digits_at(text, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1) return {};
  const Calendar::Month& known = calendar.month(year, month);
  if (day > known.days) return {};
  Instant instant;
  instant.seconds = (known.first_day + day - 1) * 86400;
  if (size == 10) return instant;
  if ((text[10] != 'T' && text[10] != 't' && text[10] != ' ') || size < 16 || text[13] != ':') {
    return {};
  }
  const int hour = digits_at(text, 11, 2);
  const int minute = digits_at(text, 14, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return {};
  int second = 0;
  std::size_t pos = 16;
  if (pos < size && text[pos] == ':') {
    second = digits_at(text, 17, 2);
    if (second < 0 || second > 60) return {};
    pos = 19;
    if (pos < size && (text[pos] == '.' || text[pos] == ',')) {
      const std::size_t begin = ++pos;
      while (pos < size && is_digit(text[pos])) ++pos;
      if (pos == begin) return {};
      instant.fraction = text.substr(begin, pos - begin);
    }
  }
  instant.seconds += hour * 3600 + minute * 60 + second;
  if (pos == size) return instant;
  if (text[pos] == 'Z' || text[pos] == 'z') {
    if (pos + 1 != size) return {};
    return instant;
  }
  if (text[pos] != '+' && text[pos] != '-') return {};
  const int sign = text[pos] == '+' ? 1 : -1;
  const int offset_hours = digits_at(text, pos + 1, 2);
  if (offset_hours < 0 || offset_hours > 23) return {};
  pos += 3;
  int offset_minutes = 0;
  if (pos < size) {  // +hh:mm or +hhmm
    if (text[pos] == ':') ++pos;
    offset_minutes = digits_at(text, pos, 2);
    if (offset_minutes < 0 || offset_minutes > 59) return {};
    pos += 2;
  }
  if (pos != size) return {};
  instant.seconds -= sign * (offset_hours * 3600 + offset_minutes * 60);
  return instant;
}

// Fractions compare as decimals: "5" equals "50".
int compare_fractions(std::string_view a, std::string_view b) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const char x = i < a.size() ? a[i] : '0';
    const char y = i < b.size() ? b[i] : '0';
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// Earlier instants first; the same instant written two ways orders by its text, so that min and
// max do not depend on the items' order.
[[gnu::always_inline]] inline int compare_dates(const Instant& a, std::string_view a_text,
                                                const Instant& b, std::string_view b_text) {
  if (a.seconds != b.seconds) return a.seconds < b.seconds ? -1 : 1;
  if (const int fraction = compare_fractions(a.fraction, b.fraction)) return fraction;
  return a_text.compare(b_text);
}

// ---- numbers -----------------------------------------------------------------------------------

template <class T>
int three_way(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

double as_double(const json::value& number) {
  if (number.is_int64()) return static_cast<double>(number.get_int64());
  if (number.is_uint64()) return static_cast<double>(number.get_uint64());
  return number.get_double();
}

// Integers compare exactly; with a double involved, as doubles; equal values of different
// kinds (5 and 5.0) order by kind so that min and max do not depend on the items' order.
int compare_numbers(const json::value& a, const json::value& b);

// The common cases inline: fields of int64s or of doubles.
[[gnu::always_inline]] inline int compare_numbers_fast(const json::value& a, const json::value& b) {
  if (a.is_int64() && b.is_int64()) return three_way(a.get_int64(), b.get_int64());
  if (a.is_double() && b.is_double() && a.get_double() != b.get_double()) {
    return a.get_double() < b.get_double() ? -1 : 1;
  }
  return compare_numbers(a, b);
}

int compare_numbers(const json::value& a, const json::value& b) {
  if (a.is_int64() && b.is_int64()) return three_way(a.get_int64(), b.get_int64());
  if (a.is_uint64() && b.is_uint64()) return three_way(a.get_uint64(), b.get_uint64());
  // Parsed integers are int64 unless above INT64_MAX, so int64 vs uint64 is decided by sign.
  if (a.is_int64() && b.is_uint64()) {
    return a.get_int64() < 0 ? -1
                             : three_way(static_cast<std::uint64_t>(a.get_int64()), b.get_uint64());
  }
  if (a.is_uint64() && b.is_int64()) return -compare_numbers(b, a);
  if (const int by_value = three_way(as_double(a), as_double(b))) return by_value;
  return three_way(static_cast<int>(a.kind()), static_cast<int>(b.kind()));
}

// ---- per-field state ---------------------------------------------------------------------------

enum class Family { kNone, kString, kBool, kNumber };

// Equal texts. Keys and category values are short: compared with two overlapping loads when they
// can be, since a call to memcmp (or a byte loop) per key was a fifth of the digest's time.
[[gnu::always_inline]] inline bool same_text(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  const std::size_t size = a.size();
  if (size < 4) {  // the first, middle and last bytes are all of them
    return size == 0 || (a[0] == b[0] && a[size / 2] == b[size / 2] && a[size - 1] == b[size - 1]);
  }
  if (size < 8) {  // two overlapping 4-byte loads
    std::uint32_t x = 0;
    std::uint32_t y = 0;
    std::memcpy(&x, a.data(), sizeof x);
    std::memcpy(&y, b.data(), sizeof y);
    if (x != y) return false;
    std::memcpy(&x, a.data() + size - 4, sizeof x);
    std::memcpy(&y, b.data() + size - 4, sizeof y);
    return x == y;
  }
  std::uint64_t x = 0;
  std::uint64_t y = 0;
  std::memcpy(&x, a.data(), sizeof x);
  std::memcpy(&y, b.data(), sizeof y);
  if (x != y) return false;
  if (size > 16) return std::memcmp(a.data() + 8, b.data() + 8, size - 8) == 0;
  std::memcpy(&x, a.data() + size - 8, sizeof x);
  std::memcpy(&y, b.data() + size - 8, sizeof y);
  return x == y;
}

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
  if (known.is_string()) return same_text(known.get_string(), value.get_string());
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
  if (x.is_number() && y.is_number()) return compare_numbers(x, y) < 0;
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
  // per value was a third of the digest's time.
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
    if (field.min == nullptr || compare_numbers_fast(value, *field.min) < 0) field.min = &value;
    if (field.max == nullptr || compare_numbers_fast(value, *field.max) > 0) field.max = &value;
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
std::tuple<int, int, std::size_t, std::size_t> category_rank(const FieldState& field,
                                                             std::size_t slot,
                                                             const DigestLimits& limits) {
  const std::size_t distinct = field.categories.size();
  const int group = distinct == 1 ? 2 : (distinct <= limits.top_values ? 0 : 1);
  const int family = field.family == Family::kString ? 0 : (field.family == Family::kBool ? 1 : 2);
  return {group, family, group == 1 ? distinct : 0, slot};
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
      if (slot >= fields.size() || !same_text(fields[slot].key, key)) {
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
