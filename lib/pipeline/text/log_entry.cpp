#include "pipeline/text/log_entry.hpp"

#include <algorithm>
#include <array>

#include "support/text_scan.hpp"

namespace ctxguard::pipeline {

namespace {

using text::digits_at;
using text::is_blank;
using text::is_digit;
using text::is_letter;
using text::is_upper;

// The lines looks_like_log reads, and the share of them that must start an entry (1 in 5).
constexpr std::size_t kLogSampleLines = 1000;
constexpr std::size_t kLogShare = 5;

// ---- entry starts -------------------------------------------------------------------------------

// Not followed by one more digit (so 2024-05-011 or 12:30:456 are no dates or times).
bool ends_number(std::string_view line, std::size_t at) {
  return at >= line.size() || !is_digit(line[at]);
}

// 2024-05-01 or 2024/05/01 (the same separator twice, a month and a day in range).
bool date_at(std::string_view line, std::size_t at) {
  if (digits_at(line, at, 4) < 0 || at + 10 > line.size()) return false;
  const char separator = line[at + 4];
  if ((separator != '-' && separator != '/') || line[at + 7] != separator) return false;
  const int month = digits_at(line, at + 5, 2);
  const int day = digits_at(line, at + 8, 2);
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && ends_number(line, at + 10);
}

// 12:30:45 or 9:30:45 (an hour, minutes and seconds in range).
bool time_at(std::string_view line, std::size_t at) {
  std::size_t hour_digits = 2;
  int hour = digits_at(line, at, 2);
  if (hour < 0) {
    hour_digits = 1;
    hour = digits_at(line, at, 1);
  }
  const std::size_t colon = at + hour_digits;
  if (hour < 0 || hour > 23 || colon + 6 > line.size()) return false;
  if (line[colon] != ':' || line[colon + 3] != ':') return false;
  const int minute = digits_at(line, colon + 1, 2);
  const int second = digits_at(line, colon + 4, 2);
  return minute >= 0 && minute <= 59 && second >= 0 && second <= 60 && ends_number(line, colon + 6);
}

// RFC 3164: "May  1 12:30:45" or "May 15 12:30:45".
bool syslog_date_at(std::string_view line, std::size_t at) {
  if (at + 6 > line.size() || line[at + 3] != ' ' || !is_month_abbreviation(line.substr(at, 3))) {
    return false;
  }
  std::size_t day = at + 4;
  if (line[day] == ' ') ++day;  // a one-digit day is padded with a space
  std::size_t day_end = day;
  while (day_end < line.size() && day_end < day + 2 && is_digit(line[day_end])) ++day_end;
  if (day_end == day || day_end >= line.size() || line[day_end] != ' ') return false;
  return time_at(line, day_end + 1);
}

// ERROR, WARN, ... in capitals, followed by a non-letter (or the end of the line).
bool level_at(std::string_view line, std::size_t at) {
  std::size_t end = at;
  while (end < line.size() && is_upper(line[end])) ++end;
  if (end < line.size() && is_letter(line[end])) return false;
  return !log_level(line.substr(at, end - at)).empty();
}

}  // namespace

// ---- words ------------------------------------------------------------------------------------

std::string_view log_level(std::string_view word) {
  static constexpr std::array<std::string_view, 9> kLevels{
      "TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR", "FATAL", "CRITICAL"};
  if (word.size() < 4 || word.size() > 8) return {};
  for (const std::string_view level : kLevels) {
    if (level.size() != word.size()) continue;
    const bool same = std::equal(level.begin(), level.end(), word.begin(),
                                 [](char a, char b) { return text::lower(a) == text::lower(b); });
    if (same) return level == "WARNING" ? std::string_view("WARN") : level;
  }
  return {};
}

bool is_month_abbreviation(std::string_view word) {
  static constexpr std::array<std::string_view, 12> kMonths{
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  return std::find(kMonths.begin(), kMonths.end(), word) != kMonths.end();
}

// ---- log detection -----------------------------------------------------------------------------

bool starts_log_entry(std::string_view line) {
  std::size_t at = 0;
  if (line.starts_with('[')) {
    at = 1;
  } else if (line.starts_with('<')) {  // a syslog priority, <13>, maybe with RFC 5424's version
    std::size_t close = 1;
    while (close < line.size() && close < 5 && is_digit(line[close])) ++close;
    if (close == 1 || close >= line.size() || line[close] != '>') return false;
    at = close + 1;
    if (at + 1 < line.size() && line[at] == '1' && line[at + 1] == ' ') at += 2;
  }
  if (at >= line.size()) return false;
  // Continuation lines start with a blank, a lowercase letter or punctuation: one test each.
  if (is_digit(line[at])) return date_at(line, at) || time_at(line, at);
  return syslog_date_at(line, at) || level_at(line, at);
}

bool looks_like_log(std::string_view text) {
  std::size_t sampled = 0;
  std::size_t entries = 0;
  std::size_t at = 0;
  while (at < text.size() && sampled < kLogSampleLines) {
    // Empty lines are skipped a byte or two at a time, not a search each (a text of line breaks).
    if (text[at] == '\n') {
      ++at;
      continue;
    }
    if (text[at] == '\r' && at + 1 < text.size() && text[at + 1] == '\n') {
      at += 2;
      continue;
    }
    const std::size_t newline = text.find('\n', at);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    const std::string_view line = text::without_line_break(text.substr(at, end - at));
    at = end;
    if (is_blank(line)) continue;
    ++sampled;
    if (starts_log_entry(line)) ++entries;
  }
  return entries >= 2 && entries * kLogShare >= sampled;
}

}  // namespace ctxguard::pipeline
