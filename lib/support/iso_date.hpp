#pragma once
// ISO 8601 dates and date-times (2024-05-01, 2024-05-01T12:30:00.5+02:00): recognising their
// shape (field ranking) and reading them as comparable instants (the digest's min/max). No
// allocation; invalid dates (2023-02-29) are not dates.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ctxguard {

// A date or date-time as a comparable instant: seconds since 1970 in UTC (a date alone, or a
// time without an offset, counts as UTC), then the fraction's digits.
struct Instant {
  std::int64_t seconds = 0;
  std::string_view fraction;
};

// The months of the dates seen last, one per month of the year: dates in an array mostly share
// their years, and the calendar arithmetic was half the cost of a date.
class Calendar {
 public:
  struct Month {
    int year = -1;
    int days = 0;                // in the month
    std::int64_t first_day = 0;  // days since 1970-01-01 of its first day
  };

  const Month& month(int year, int month);

 private:
  std::array<Month, 12> months_{};
};

// YYYY-MM-DD, optionally followed by T (or a space) hh:mm[:ss[.fraction]] and Z or +-hh[[:]mm];
// nullopt for anything else, impossible dates included. `calendar` caches month arithmetic
// across calls.
std::optional<Instant> parse_iso_date(std::string_view text, Calendar& calendar);

// YYYY-MM-DD, alone or followed by T (or a space) and hh:mm: the shape of an ISO 8601 date or
// date-time (the digest checks the rest when it needs the instant).
bool has_iso_date_shape(std::string_view text);

// Fractions compare as decimals: "5" equals "50".
inline int compare_fractions(std::string_view a, std::string_view b) {
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

}  // namespace ctxguard
