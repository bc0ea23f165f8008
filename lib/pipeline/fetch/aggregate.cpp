#include "pipeline/fetch/aggregate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "cursor/cursor_codec.hpp"
#include "support/double_chars.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

__extension__ using Int128 = __int128;

constexpr int kMaxScale = 30;
constexpr int kAverageExtraScale = 6;

// A decimal number, exactly: units × 10^-scale.
struct Decimal {
  Int128 units = 0;
  int scale = 0;
};

bool times_ten(Int128& value, int times) {
  for (int i = 0; i < times; ++i) {
    if (__builtin_mul_overflow(value, Int128{10}, &value)) return false;
  }
  return true;
}

// Both at the larger scale; false on overflow.
bool align(Decimal& a, Decimal& b) {
  if (a.scale < b.scale) {
    if (!times_ten(a.units, b.scale - a.scale)) return false;
    a.scale = b.scale;
  } else if (b.scale < a.scale) {
    if (!times_ten(b.units, a.scale - b.scale)) return false;
    b.scale = a.scale;
  }
  return true;
}

// Which forms of a number a text may take: a string's plain form only ("-12.50", "3"), or the
// JSON text of a number, which may have an exponent ("1.5e3", "2E-2").
enum class NumberForm { kPlain, kJson };

// The number `text` writes in `form`, or nothing.
std::optional<Decimal> parse_decimal(std::string_view text, NumberForm form) {
  Decimal decimal;
  bool negative = false;
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    negative = true;
    ++i;
  }
  std::size_t digits = 0;
  bool point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      if (!times_ten(decimal.units, 1)) return std::nullopt;
      decimal.units += c - '0';
      ++digits;
      if (point) ++decimal.scale;
    } else if (c == '.' && !point && digits > 0) {
      point = true;
    } else {
      break;
    }
  }
  if (digits == 0 || (point && text[i - 1] == '.')) return std::nullopt;
  if (i < text.size()) {
    if (form != NumberForm::kJson || (text[i] != 'e' && text[i] != 'E')) return std::nullopt;
    int exponent = 0;
    bool exponent_negative = false;
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) exponent_negative = text[j++] == '-';
    if (j == text.size()) return std::nullopt;
    for (; j < text.size(); ++j) {
      if (text[j] < '0' || text[j] > '9' || exponent > 1000) return std::nullopt;
      exponent = exponent * 10 + (text[j] - '0');
    }
    decimal.scale += exponent_negative ? exponent : -exponent;
  }
  if (decimal.scale < 0) {
    if (!times_ten(decimal.units, -decimal.scale)) return std::nullopt;
    decimal.scale = 0;
  }
  if (decimal.scale > kMaxScale) return std::nullopt;
  if (negative) decimal.units = -decimal.units;
  return decimal;
}

// The number a value holds as the server wrote it, or nothing (then `number` says why not).
enum class Reading { kNumber, kMissing, kNotNumber };
Reading read_number(const json::value* value, Decimal& number) {
  if (value == nullptr || value->is_null()) return Reading::kMissing;
  std::optional<Decimal> parsed;
  if (value->is_string()) {
    parsed = parse_decimal(value->get_string(), NumberForm::kPlain);
  } else if (const std::int64_t* whole = value->if_int64()) {
    parsed = Decimal{*whole, 0};
  } else if (const std::uint64_t* large = value->if_uint64()) {
    parsed = Decimal{static_cast<Int128>(*large), 0};
  } else if (const double* real = value->if_double(); real != nullptr && std::isfinite(*real)) {
    // The shortest text that reads back as this double: what the server wrote.
    std::array<char, kMaxDoubleChars> text;
    parsed = parse_decimal(format_double(*real, text), NumberForm::kJson);
  }
  if (!parsed) return Reading::kNotNumber;
  number = *parsed;
  return Reading::kNumber;
}

std::string decimal_text(Int128 units, int scale) {
  const bool negative = units < 0;
  std::string digits;
  // Digit by digit from the low end; units may be the most negative value, so work negated.
  Int128 rest = negative ? units : -units;
  do {
    digits += static_cast<char>('0' - static_cast<int>(rest % 10));
    rest /= 10;
  } while (rest != 0);
  while (digits.size() <= static_cast<std::size_t>(scale)) digits += '0';
  // Still lowest digit first: the point goes after `scale` digits, the sign last.
  if (scale > 0) digits.insert(static_cast<std::size_t>(scale), 1, '.');
  if (negative) digits += '-';
  std::reverse(digits.begin(), digits.end());
  return digits;
}

// The exact sum divided by `count`, rounded half away from zero at scale + kAverageExtraScale.
std::optional<std::string> average_text(Decimal sum, std::size_t count) {
  Int128 scaled = sum.units;
  if (!times_ten(scaled, kAverageExtraScale)) return std::nullopt;
  const auto divisor = static_cast<Int128>(count);
  Int128 quotient = scaled / divisor;
  const Int128 remainder = scaled % divisor;
  if (2 * (remainder < 0 ? -remainder : remainder) >= divisor) quotient += scaled < 0 ? -1 : 1;
  return decimal_text(quotient, sum.scale + kAverageExtraScale);
}

// The value at a dotted path ("guest.country"), through objects only; null when absent.
const json::value* at_path(const json::value& item, std::string_view path) {
  const json::value* value = &item;
  while (value != nullptr) {
    const std::size_t dot = path.find('.');
    const json::object* object = value->if_object();
    if (object == nullptr) return nullptr;
    value = object->if_contains(path.substr(0, dot));
    if (dot == std::string_view::npos) return value;
    path.remove_prefix(dot + 1);
  }
  return nullptr;
}

// A numeric field of one group.
struct FieldTotals {
  Decimal sum;
  bool sum_is_string = false;  // some value was a decimal string: write the sum as one
  bool overflow = false;
  std::size_t counted = 0;
  const json::value* min = nullptr;
  const json::value* max = nullptr;
  Decimal min_number, max_number;
};

struct Group {
  std::vector<json::value> key;  // the groupBy values
  std::size_t count = 0;
  std::vector<FieldTotals> fields;  // per numeric field (numeric_fields' order)
};

// -1, 0, 1; numbers that cannot be aligned compare by their double values.
int compare(Decimal a, Decimal b) {
  if (!align(a, b)) {
    const auto as_double = [](const Decimal& d) {
      return static_cast<long double>(d.units) / std::pow(10.0L, d.scale);
    };
    return as_double(a) < as_double(b) ? -1 : (as_double(a) > as_double(b) ? 1 : 0);
  }
  return a.units < b.units ? -1 : (a.units > b.units ? 1 : 0);
}

void add_value(FieldTotals& totals, const json::value& value, const Decimal& number) {
  ++totals.counted;
  totals.sum_is_string = totals.sum_is_string || value.is_string();
  if (!totals.overflow) {
    Decimal addend = number;
    totals.overflow = !align(totals.sum, addend) ||
                      __builtin_add_overflow(totals.sum.units, addend.units, &totals.sum.units);
  }
  if (totals.min == nullptr || compare(number, totals.min_number) < 0) {
    totals.min = &value;
    totals.min_number = number;
  }
  if (totals.max == nullptr || compare(number, totals.max_number) > 0) {
    totals.max = &value;
    totals.max_number = number;
  }
}

// The numeric fields the spec names, each once.
std::vector<std::string> numeric_fields(const AggregateSpec& spec) {
  std::vector<std::string> fields;
  for (const auto* list : {&spec.sum, &spec.min, &spec.max, &spec.avg}) {
    for (const std::string& field : *list) {
      if (std::find(fields.begin(), fields.end(), field) == fields.end()) fields.push_back(field);
    }
  }
  return fields;
}

json::value sum_value(const FieldTotals& totals) {
  const std::string text = decimal_text(totals.sum.units, totals.sum.scale);
  if (totals.sum_is_string) return json::value(text);
  // JSON numbers in, a JSON number out when it says the same; else the exact text.
  if (totals.sum.scale == 0 && totals.sum.units >= INT64_MIN && totals.sum.units <= INT64_MAX) {
    return json::value(static_cast<std::int64_t>(totals.sum.units));
  }
  const std::optional<double> as_double = parse_double(text);
  if (!as_double) return json::value(text);
  std::string back;
  write_json_scalar(back, json::value(*as_double));
  const auto round_trip = parse_decimal(back, NumberForm::kJson);
  return round_trip && compare(*round_trip, totals.sum) == 0 ? json::value(*as_double)
                                                             : json::value(text);
}

json::object group_json(const Group& group, const AggregateSpec& spec,
                        const std::vector<std::string>& numeric) {
  json::object out;
  for (std::size_t i = 0; i < spec.group_by.size(); ++i) out[spec.group_by[i]] = group.key[i];
  out["count"] = group.count;
  const auto section = [&](const std::vector<std::string>& fields, std::string_view name,
                           const auto& value_of) {
    if (fields.empty()) return;
    json::object values;
    for (const std::string& field : fields) {
      const auto slot = static_cast<std::size_t>(std::find(numeric.begin(), numeric.end(), field) -
                                                 numeric.begin());
      const FieldTotals& totals = group.fields[slot];
      values[field] = totals.counted == 0 ? json::value(nullptr) : value_of(totals);
    }
    out[name] = std::move(values);
  };
  section(spec.sum, "sum",
          [](const FieldTotals& t) { return t.overflow ? json::value(nullptr) : sum_value(t); });
  section(spec.min, "min", [](const FieldTotals& t) { return *t.min; });
  section(spec.max, "max", [](const FieldTotals& t) { return *t.max; });
  section(spec.avg, "avg", [](const FieldTotals& t) {
    const auto text = t.overflow ? std::nullopt : average_text(t.sum, t.counted);
    return text ? json::value(*text) : json::value(nullptr);
  });
  return out;
}

struct StringViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const {
    return std::hash<std::string_view>{}(text);
  }
};

// Appends what tells one groupBy value from another, unambiguously and without escaping: a
// string as its bytes after its kind and length, anything else as its JSON text (an object or
// array groups as its JSON text, as group_key shows it).
void append_group_key(std::string& key, const json::value* value) {
  if (value != nullptr && value->is_string()) {
    const json::string& text = value->get_string();
    key += 's';
    const auto length = static_cast<std::uint32_t>(text.size());
    key.append(reinterpret_cast<const char*>(&length), sizeof length);
    key.append(text.data(), text.size());
    return;
  }
  const std::size_t mark = key.size();
  key += 'j';
  key.append(sizeof(std::uint32_t), '\0');
  write_json(key, value != nullptr ? *value : json::value(nullptr));
  const auto length = static_cast<std::uint32_t>(key.size() - mark - 1 - sizeof(std::uint32_t));
  std::copy_n(reinterpret_cast<const char*>(&length), sizeof length, key.data() + mark + 1);
}

// The groupBy values of `item`, as the group shows them.
std::vector<json::value> group_key(const json::value& item, const AggregateSpec& spec) {
  std::vector<json::value> key;
  for (const std::string& field : spec.group_by) {
    const json::value* value = at_path(item, field);
    key.emplace_back(value == nullptr                            ? json::value(nullptr)
                     : (value->is_object() || value->is_array()) ? json::value(to_json(*value))
                                                                 : *value);
  }
  return key;
}

// What was skipped of each numeric field, as the answer says it.
json::object skipped_json(const std::vector<std::string>& numeric,
                          const std::vector<std::array<std::size_t, 2>>& skipped,
                          const std::vector<bool>& overflow) {
  json::object out;
  for (std::size_t i = 0; i < numeric.size(); ++i) {
    json::object entry;
    if (skipped[i][0] > 0) entry["missing"] = skipped[i][0];
    if (skipped[i][1] > 0) entry["notNumbers"] = skipped[i][1];
    if (overflow[i]) entry["overflow"] = true;
    if (!entry.empty()) out[numeric[i]] = std::move(entry);
  }
  return out;
}

}  // namespace

namespace {

// The spec's lists: the member an answer and a request name each by, and the letter a cursor
// marks its fields with ("g:status", "s:total").
struct SpecList {
  std::string_view name;
  char mark;
  std::vector<std::string> AggregateSpec::*fields;
};

constexpr std::array<SpecList, 5> kSpecLists{{
    {"groupBy", 'g', &AggregateSpec::group_by},
    {"sum", 's', &AggregateSpec::sum},
    {"min", 'n', &AggregateSpec::min},
    {"max", 'x', &AggregateSpec::max},
    {"avg", 'a', &AggregateSpec::avg},
}};

}  // namespace

std::vector<std::string> AggregateSpec::to_cursor_fields() const {
  std::vector<std::string> fields;
  for (const SpecList& list : kSpecLists) {
    for (const std::string& field : this->*list.fields) {
      fields.push_back(std::string{list.mark, ':'} + field);
    }
  }
  return fields;
}

std::optional<AggregateSpec> AggregateSpec::from_cursor_fields(
    const std::vector<std::string>& fields) {
  AggregateSpec spec;
  for (const std::string& field : fields) {
    if (field.size() < 3 || field[1] != ':') return std::nullopt;
    const auto list = std::find_if(kSpecLists.begin(), kSpecLists.end(),
                                   [&](const SpecList& known) { return known.mark == field[0]; });
    if (list == kSpecLists.end()) return std::nullopt;
    (spec.*list->fields).push_back(field.substr(2));
  }
  return spec;
}

json::object AggregateSpec::to_json() const {
  json::object out;
  for (const SpecList& list : kSpecLists) {
    if ((this->*list.fields).empty()) continue;
    json::array array;
    for (const std::string& field : this->*list.fields) array.emplace_back(field);
    out[list.name] = std::move(array);
  }
  return out;
}

Checked<AggregateSpec> parse_aggregate(const json::value& value) {
  const json::object* object = value.if_object();
  if (object == nullptr) {
    return Problem{
        "`aggregate` must be an object such as {\"groupBy\": \"status\", \"sum\": [\"total\"]}."};
  }
  AggregateSpec spec;
  std::size_t named = 0;
  for (const auto& member : *object) {
    const std::string_view key = member.key();
    const auto known = std::find_if(kSpecLists.begin(), kSpecLists.end(),
                                    [&](const SpecList& list) { return list.name == key; });
    if (known == kSpecLists.end()) {
      return Problem{
          fmt::format("`aggregate` takes groupBy, sum, min, max and avg, not \"{}\".", key)};
    }
    std::vector<std::string>* target = &(spec.*known->fields);
    const json::value& given = member.value();
    const json::array single{given};
    const json::array* list = given.is_string() ? &single : given.if_array();
    if (list == nullptr)
      return Problem{fmt::format("`aggregate.{}` must be a field or a list of fields.", key)};
    for (const json::value& field : *list) {
      if (!field.is_string() || field.get_string().empty() ||
          field.get_string().size() + 2 > cursor::kMaxFieldBytes) {
        return Problem{
            fmt::format("`aggregate.{}` must list field names (dotted for nested ones).", key)};
      }
      target->emplace_back(field.get_string());
      ++named;
    }
  }
  if (spec.group_by.size() > kMaxGroupBy)
    return Problem{"`aggregate.groupBy` takes at most 2 fields."};
  if (named > kMaxAggregateFields) return Problem{"`aggregate` takes at most 16 fields in all."};
  return spec;
}

Aggregate aggregate(const json::array& array, const AggregateSpec& spec, const Query* filter) {
  Aggregate result;
  const std::vector<std::string> numeric = numeric_fields(spec);
  // Looked up per item by a key that is cheap to build (GroupKey); ordered at the end.
  std::unordered_map<std::string, std::size_t, StringViewHash, std::equal_to<>> index;
  std::vector<Group> groups;
  std::vector<std::array<std::size_t, 2>> skipped(numeric.size());  // missing, not numbers
  std::string key;
  for (const json::value& item : array) {
    if (filter != nullptr && !filter->matches(item)) continue;
    ++result.items;
    key.clear();
    for (const std::string& field : spec.group_by) append_group_key(key, at_path(item, field));
    auto found = index.find(std::string_view(key));
    if (found == index.end()) {
      found = index.emplace(key, groups.size()).first;
      groups.push_back(Group{group_key(item, spec), 0, {}});
      groups.back().fields.resize(numeric.size());
    }
    Group& group = groups[found->second];
    ++group.count;
    for (std::size_t i = 0; i < numeric.size(); ++i) {
      const json::value* value = at_path(item, numeric[i]);
      Decimal number;
      const Reading reading = read_number(value, number);
      if (reading == Reading::kNumber) {
        add_value(group.fields[i], *value, number);
      } else {
        ++skipped[i][reading == Reading::kMissing ? 0 : 1];
      }
    }
  }
  // Largest first; equal counts in the order of their values' JSON text.
  std::vector<std::pair<std::string, const Group*>> by_text;
  by_text.reserve(groups.size());
  for (const Group& group : groups) {
    std::string text;
    for (const json::value& value : group.key) {
      write_json(text, value);
      text += '\n';
    }
    by_text.emplace_back(std::move(text), &group);
  }
  std::sort(by_text.begin(), by_text.end(), [](const auto& a, const auto& b) {
    return a.second->count != b.second->count ? a.second->count > b.second->count
                                              : a.first < b.first;
  });
  std::vector<bool> overflow(numeric.size(), false);
  for (const Group& group : groups) {
    for (std::size_t i = 0; i < numeric.size(); ++i) {
      overflow[i] = overflow[i] || group.fields[i].overflow;
    }
  }
  for (const auto& [text, group] : by_text) {
    result.groups.emplace_back(group_json(*group, spec, numeric));
  }
  result.skipped = skipped_json(numeric, skipped, overflow);
  return result;
}

}  // namespace ctxguard::pipeline
