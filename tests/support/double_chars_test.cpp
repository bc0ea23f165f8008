#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "support/double_chars.hpp"

using ctxguard::format_double;
using ctxguard::kMaxDoubleChars;
using ctxguard::parse_double;

namespace {

constexpr int kValuesPerKind = 200'000;

std::string formatted(double value) {
  std::array<char, kMaxDoubleChars> buffer{};
  return std::string(format_double(value, buffer));
}

// Equal as stored: -0 is not 0, and a NaN equals a NaN of the same sign.
bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) && std::signbit(a) == std::signbit(b);
  }
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

double from_bits(std::uint64_t bits) { return std::bit_cast<double>(bits); }

double random_sign(std::mt19937_64& random, double magnitude) {
  return (random() & 1) != 0 ? -magnitude : magnitude;
}

// A decimal with few significant digits, the values whose fixed and scientific forms come
// closest in length (`10000` against `1e+04`).
double short_decimal(std::mt19937_64& random, int min_exponent, int max_exponent) {
  const auto digits = std::to_string(random() % 100'000);
  const auto exponent = std::uniform_int_distribution<int>(min_exponent, max_exponent)(random);
  const auto value = parse_double(digits + "e" + std::to_string(exponent));
  return value.value_or(0.0);
}

struct DoubleKind {
  const char* name;
  std::function<double(std::mt19937_64&)> make;
};

// Every kind of double format_double meets, from bit patterns to the edges of its layouts.
std::vector<DoubleKind> double_kinds() {
  return {
      {"any bit pattern", [](std::mt19937_64& r) { return from_bits(r()); }},
      {"subnormal", [](std::mt19937_64& r) { return from_bits(r() & 0x800f'ffff'ffff'ffffULL); }},
      {"whole number",
       [](std::mt19937_64& r) {
         return static_cast<double>(static_cast<std::int64_t>(r()) >> (r() % 64));
       }},
      {"short decimal", [](std::mt19937_64& r) { return short_decimal(r, -30, 30); }},
      {"power of ten and its neighbours",
       [](std::mt19937_64& r) {
         const double power =
             std::pow(10.0, static_cast<double>(static_cast<int>(r() % 640) - 330));
         const double infinity = std::numeric_limits<double>::infinity();
         switch (r() % 3) {
           case 0:
             return power;
           case 1:
             return std::nextafter(power, 0.0);
           default:
             return std::nextafter(power, infinity);
         }
       }},
      {"between 1e15 and 1e25",
       [](std::mt19937_64& r) {
         return r() % 2 == 0 ? std::pow(10.0, std::uniform_real_distribution(15.0, 25.0)(r))
                             : short_decimal(r, 10, 25);
       }},
      {"the edges of the range",
       [](std::mt19937_64& r) {
         const double edges[] = {std::numeric_limits<double>::max(),
                                 std::numeric_limits<double>::min(),
                                 std::numeric_limits<double>::denorm_min(),
                                 9007199254740992.0,
                                 18446744073709551616.0,
                                 0.0,
                                 std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::quiet_NaN()};
         const double edge = edges[r() % std::size(edges)];
         const auto steps = static_cast<int>(r() % 4);
         double value = edge;
         for (int i = 0; i < steps; ++i) value = std::nextafter(value, 1.0);
         return random_sign(r, value);
       }},
  };
}

}  // namespace

TEST_CASE("double chars: doubles are written as std::to_chars writes them") {
  CHECK(formatted(0.0) == "0");
  CHECK(formatted(-0.0) == "-0");
  CHECK(formatted(1.5) == "1.5");
  CHECK(formatted(-123.45) == "-123.45");
  // Fixed wins a tie in length, scientific anything shorter.
  CHECK(formatted(10000.0) == "10000");
  CHECK(formatted(100000.0) == "1e+05");
  CHECK(formatted(123456.0) == "123456");
  CHECK(formatted(1e15) == "1e+15");
  CHECK(formatted(0.001) == "0.001");
  CHECK(formatted(0.0001) == "1e-04");
  CHECK(formatted(1e21) == "1e+21");
  CHECK(formatted(1.5e300) == "1.5e+300");
  CHECK(formatted(5e-324) == "5e-324");
  CHECK(formatted(-2.2250738585072014e-308) == "-2.2250738585072014e-308");
  CHECK(formatted(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
  // A whole number in fixed form is exact, not its shortest digits padded with zeros.
  CHECK(formatted(1152921504606846976.0) == "1152921504606846976");
  CHECK(formatted(123456789012345683968.0) == "123456789012345683968");
  CHECK(formatted(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(formatted(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(formatted(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(formatted(-std::numeric_limits<double>::quiet_NaN()) == "-nan");
}

TEST_CASE("double chars: every written double reads back as the same double") {
  std::mt19937_64 random(20240611);
  for (const DoubleKind& kind : double_kinds()) {
    int mismatches = 0;
    std::optional<double> first;
    for (int i = 0; i < kValuesPerKind; ++i) {
      const double value = kind.make(random);
      const auto back = parse_double(formatted(value));
      if (back && same_double(*back, value)) continue;
      if (mismatches++ == 0) first = value;
    }
    INFO(kind.name << ": " << mismatches << " differ, the first "
                   << (first ? formatted(*first) : std::string("none")));
    CHECK(mismatches == 0);
  }
}

TEST_CASE("double chars: numbers are read as std::from_chars reads them") {
  CHECK(parse_double("1.5") == 1.5);
  CHECK(parse_double("-0.5e-3") == -0.0005);
  // Boost.JSON 1.81 reads this one ulp off (json_reader.hpp).
  CHECK(same_double(*parse_double("1238.8249400479617"), 1238.8249400479617));
  CHECK(same_double(*parse_double("-0"), -0.0));
  CHECK(same_double(*parse_double("0e999"), 0.0));
  CHECK(*parse_double("1e-310") > 0);  // subnormal, in range
  CHECK(*parse_double("-Infinity") == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(*parse_double("nan(abc)")));
  // Out of range, or not the whole text, or not this grammar.
  CHECK_FALSE(parse_double("1e400"));
  CHECK_FALSE(parse_double("-1e400"));
  CHECK_FALSE(parse_double("1e-400"));
  CHECK_FALSE(parse_double(""));
  CHECK_FALSE(parse_double("+1"));
  CHECK_FALSE(parse_double(" 1"));
  CHECK_FALSE(parse_double("1 "));
  CHECK_FALSE(parse_double("1e"));
  CHECK_FALSE(parse_double("0x1p3"));
  CHECK_FALSE(parse_double("infin"));
}

// Where the standard library has both floating from_chars and to_chars (libstdc++; not Apple's
// libc++), the two functions are held to it byte for byte.
#if defined(__cpp_lib_to_chars)

namespace {

// What parse_double meets: pieces of numbers and of inf and nan spellings joined at random, and
// long decimals near the ends of the exponent range (where results go out of range).
std::string random_text(std::mt19937_64& random) {
  static constexpr std::string_view kPieces[] = {
      "-",   "+",   "0",  "1",   "7",   "9",   "00",  "123456789", ".",   "e",
      "E",   "e+",  "e-", "308", "309", "324", "400", "inf",       "INF", "inity",
      "nan", "NaN", "(",  ")",   "_a1", " ",   "x",   "0x1p3",     "p",   "4503599627370497"};
  std::string text;
  if (random() % 2 == 0) {
    const auto pieces = random() % 7;
    for (std::uint64_t i = 0; i < pieces; ++i) text += kPieces[random() % std::size(kPieces)];
    return text;
  }
  if (random() % 2 == 0) text += '-';
  text += std::to_string(random() % 1'000'000) + "." + std::to_string(random());
  const auto exponent = random() % 2 == 0 ? static_cast<int>(random() % 60) - 350
                                          : static_cast<int>(random() % 40) + 290;
  return text + "e" + std::to_string(exponent);
}

}  // namespace

TEST_CASE("double chars: format_double writes std::to_chars's bytes for random doubles") {
  std::mt19937_64 random(7);
  for (const DoubleKind& kind : double_kinds()) {
    int mismatches = 0;
    std::string first;
    for (int i = 0; i < kValuesPerKind; ++i) {
      const double value = kind.make(random);
      // Every caller writes NaN its own way before asking (null, NaN), and the libraries spell
      // it differently (MSVC: -nan(ind)); the first test case pins format_double's spelling.
      if (std::isnan(value)) continue;
      std::array<char, 64> expected{};
      const auto end = std::to_chars(expected.data(), expected.data() + expected.size(), value).ptr;
      const std::string_view standard(expected.data(),
                                      static_cast<std::size_t>(end - expected.data()));
      const std::string ours = formatted(value);
      if (ours == standard) continue;
      if (mismatches++ == 0) first = std::string(standard) + " written as " + ours;
    }
    INFO(kind.name << ": " << mismatches << " differ, the first " << first);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("double chars: parse_double reads random texts as std::from_chars does") {
  std::mt19937_64 random(11);
  int mismatches = 0;
  int numbers = 0;
  std::string first;
  for (int i = 0; i < 4 * kValuesPerKind; ++i) {
    const std::string text = random_text(random);
    double standard = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), standard);
    const bool whole = error == std::errc{} && end == text.data() + text.size();
    const auto ours = parse_double(text);
    numbers += whole ? 1 : 0;
    if (whole == ours.has_value() && (!whole || same_double(*ours, standard))) continue;
    if (mismatches++ == 0) first = text;
  }
  INFO(mismatches << " differ, the first '" << first << "'");
  CHECK(mismatches == 0);
  CHECK(numbers > kValuesPerKind / 2);  // numbers often enough to compare their values
}

#endif
