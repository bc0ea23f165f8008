#include "support/double_chars.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include <fast_float/fast_float.h>
#include <fmt/format.h>

namespace ctxguard {
namespace {

// Room for fmt's shortest form of a magnitude (fmt's fixed layout reaches 17 digits and `0.000`).
constexpr std::size_t kFmtChars = 32;

// Below 2^53 every whole double is its shortest digits followed by zeros; above, the spacing of
// doubles exceeds 1 and the exact value has other low digits.
constexpr double kExactWholeLimit = 9007199254740992.0;

// The shortest decimal form of a finite, nonzero magnitude: digits[0].digits[1..] × 10^exponent.
struct ShortestDigits {
  std::array<char, 17> digits{};  // no leading or trailing zeros
  int count = 0;
  int exponent = 0;
};

// fmt's "{}" is Dragonbox's shortest round trip, laid out by fmt's own rule ("1e+16",
// "1000000000000000", "0.0001", "123.45"); only its digits and exponent are taken from it.
ShortestDigits shortest_digits(double magnitude) {
  std::array<char, kFmtChars> text{};
  const char* const end = fmt::format_to_n(text.data(), text.size(), "{}", magnitude).out;
  const char* p = text.data();
  ShortestDigits shortest;
  int integer_digits = 0;  // before the point, leading zeros included
  int leading_zeros = 0;
  bool after_point = false;
  for (; p != end && *p != 'e'; ++p) {
    if (*p == '.') {
      after_point = true;
      continue;
    }
    if (!after_point) ++integer_digits;
    if (shortest.count == 0 && *p == '0') {
      ++leading_zeros;
    } else if (static_cast<std::size_t>(shortest.count) < shortest.digits.size()) {
      shortest.digits[static_cast<std::size_t>(shortest.count++)] = *p;
    }  // else a zero of a fixed layout's padding: the shortest form has 17 digits at most
  }
  while (shortest.count > 1 &&
         shortest.digits[static_cast<std::size_t>(shortest.count - 1)] == '0') {
    --shortest.count;
  }
  int written_exponent = 0;
  if (p != end) std::from_chars(p[1] == '+' ? p + 2 : p + 1, end, written_exponent);
  shortest.exponent = integer_digits - 1 - leading_zeros + written_exponent;
  return shortest;
}

int exponent_digits(int exponent) { return std::abs(exponent) >= 100 ? 3 : 2; }

int scientific_length(const ShortestDigits& shortest) {
  return shortest.count + (shortest.count > 1 ? 1 : 0) + 2 + exponent_digits(shortest.exponent);
}

int fixed_length(const ShortestDigits& shortest) {
  if (shortest.exponent < 0) return 1 - shortest.exponent + shortest.count;  // 0.000ddd
  const int whole_digits = shortest.exponent + 1;
  return shortest.count <= whole_digits ? whole_digits : shortest.count + 1;  // ddd000, dd.dd
}

char* write_scientific(char* out, const ShortestDigits& shortest) {
  *out++ = shortest.digits[0];
  if (shortest.count > 1) {
    *out++ = '.';
    out = std::copy_n(shortest.digits.begin() + 1, shortest.count - 1, out);
  }
  *out++ = 'e';
  *out++ = shortest.exponent < 0 ? '-' : '+';
  int exponent = std::abs(shortest.exponent);
  if (exponent >= 100) *out++ = static_cast<char>('0' + exponent / 100);
  exponent %= 100;
  *out++ = static_cast<char>('0' + exponent / 10);
  *out++ = static_cast<char>('0' + exponent % 10);
  return out;
}

// A whole number: std::to_chars writes its exact value, which differs from the shortest digits
// padded with zeros only at 2^53 and above. It has as many digits as the padded form.
char* write_whole(char* out, double magnitude, const ShortestDigits& shortest) {
  const int whole_digits = shortest.exponent + 1;
  if (magnitude >= kExactWholeLimit) {
    return fmt::format_to_n(out, static_cast<std::size_t>(whole_digits), "{:.0f}", magnitude).out;
  }
  out = std::copy_n(shortest.digits.begin(), shortest.count, out);
  return std::fill_n(out, whole_digits - shortest.count, '0');
}

char* write_fixed(char* out, double magnitude, const ShortestDigits& shortest) {
  const int count = shortest.count;
  const int exponent = shortest.exponent;
  if (exponent < 0) {
    *out++ = '0';
    *out++ = '.';
    out = std::fill_n(out, -exponent - 1, '0');
    return std::copy_n(shortest.digits.begin(), count, out);
  }
  if (count <= exponent + 1) return write_whole(out, magnitude, shortest);
  out = std::copy_n(shortest.digits.begin(), exponent + 1, out);
  *out++ = '.';
  return std::copy_n(shortest.digits.begin() + exponent + 1, count - exponent - 1, out);
}

std::string_view nonfinite_or_zero(double value) {
  const bool negative = std::signbit(value);
  if (std::isnan(value)) return negative ? "-nan" : "nan";
  if (std::isinf(value)) return negative ? "-inf" : "inf";
  return negative ? "-0" : "0";
}

// fast_float 3.9 turns a number out of range into +-infinity or +-0 without an error, where
// std::from_chars reports result_out_of_range.
bool out_of_range(std::string_view text, double value) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (std::isinf(value)) return text.empty() || (text.front() != 'i' && text.front() != 'I');
  if (value != 0) return false;
  const std::string_view significand = text.substr(0, text.find_first_of("eE"));
  return significand.find_first_of("123456789") != std::string_view::npos;
}

}  // namespace

std::string_view format_double(double value, std::span<char, kMaxDoubleChars> out) noexcept {
  if (!std::isfinite(value) || value == 0) {
    const std::string_view text = nonfinite_or_zero(value);
    return {out.data(),
            static_cast<std::size_t>(std::copy(text.begin(), text.end(), out.data()) - out.data())};
  }
  char* end = out.data();
  if (value < 0) *end++ = '-';
  const double magnitude = std::fabs(value);
  const ShortestDigits shortest = shortest_digits(magnitude);
  end = fixed_length(shortest) <= scientific_length(shortest)
            ? write_fixed(end, magnitude, shortest)
            : write_scientific(end, shortest);
  return {out.data(), static_cast<std::size_t>(end - out.data())};
}

std::optional<double> parse_double(std::string_view text) noexcept {
  const char* const end = text.data() + text.size();
  double value = 0;
  const auto [last, error] = fast_float::from_chars(text.data(), end, value);
  if (error != std::errc{} || last != end || out_of_range(text, value)) return std::nullopt;
  return value;
}

}  // namespace ctxguard
