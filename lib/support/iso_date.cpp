#include "support/iso_date.hpp"

#include "support/text_scan.hpp"

namespace ctxguard {

namespace {

using text::digits_at;
using text::is_digit;

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

}  // namespace

const Calendar::Month& Calendar::month(int year, int month) {
  Month& known = months_[month - 1];
  if (known.year != year) {
    known.year = year;
    known.days = days_in_month(year, month);
    known.first_day = days_from_civil(year, month, 1);
  }
  return known;
}

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

bool has_iso_date_shape(std::string_view text) {
  const auto digits = [&](std::size_t pos, std::size_t count) {
    for (std::size_t i = pos; i < pos + count; ++i) {
      if (!is_digit(text[i])) return false;
    }
    return true;
  };
  if (text.size() < 10 || text.size() > 40 || !digits(0, 4) || text[4] != '-' || !digits(5, 2) ||
      text[7] != '-' || !digits(8, 2)) {
    return false;
  }
  const int month = (text[5] - '0') * 10 + (text[6] - '0');
  const int day = (text[8] - '0') * 10 + (text[9] - '0');
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  if (text.size() == 10) return true;
  return text.size() >= 16 && (text[10] == 'T' || text[10] == 't' || text[10] == ' ') &&
         digits(11, 2) && text[13] == ':' && digits(14, 2);
}

}  // namespace ctxguard
