#include <catch2/catch.hpp>

#include <charconv>
#include <cstring>
#include <random>

#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

using ctxguard::make_error_code;
using ctxguard::parse_json;
using ctxguard::to_json;

TEST_CASE("json reader: doubles are rounded correctly where Boost.JSON 1.81 is off by one ulp") {
  // Boost.JSON 1.81's own parser returns 1238.8249400479615 for this text.
  const auto value = parse_json("1238.8249400479617");
  REQUIRE(value.has_value());
  REQUIRE(value->as_double() == 1238.8249400479617);
}

TEST_CASE("json reader: any finite double survives write and read unchanged") {
  std::mt19937_64 random(7);
  for (int i = 0; i < 100000; ++i) {
    double number = 0;
    const std::uint64_t bits = random();
    std::memcpy(&number, &bits, sizeof number);
    if (!std::isfinite(number)) continue;
    const std::string text = to_json(boost::json::value(number));
    const auto back = parse_json(text);
    REQUIRE(back.has_value());
    const double read = back->is_double() ? back->get_double() : back->to_number<double>();
    REQUIRE(read == number);
  }
}

TEST_CASE("json reader: integers keep their type and numbers too large become infinity") {
  auto value = parse_json(R"([-9223372036854775808,18446744073709551615,2e720,-2e720,0.0])");
  REQUIRE(value.has_value());
  const auto& array = value->as_array();
  REQUIRE(array[0].as_int64() == INT64_MIN);
  REQUIRE(array[1].as_uint64() == UINT64_MAX);
  REQUIRE(std::isinf(array[2].as_double()));
  REQUIRE(to_json(*value) == "[-9223372036854775808,18446744073709551615,1e999,-1e999,0.0]");
}

TEST_CASE("json reader: invalid JSON, trailing data and deep nesting are reported") {
  REQUIRE_FALSE(parse_json("{").has_value());
  REQUIRE_FALSE(parse_json("[1] [2]").has_value());
  REQUIRE(parse_json("  [1]\n").has_value());
  REQUIRE(parse_json(std::string(1000, '[') + std::string(1000, ']')).has_value());
  REQUIRE_FALSE(parse_json(std::string(5000, '[') + std::string(5000, ']')).has_value());
}

TEST_CASE("json reader: invalid UTF-8 in strings is carried, not rejected") {
  const auto value = parse_json("\"a\xff\"");
  REQUIRE(value.has_value());
  REQUIRE(value->as_string() == "a\xff");
}

TEST_CASE(
    "json reader: the parser's scratch is bounded; past the limit the text is kJsonTooLarge") {
  // 400,000 one-digit numbers: 800 KB of text, 6.4 MB of values on the parser's stack.
  std::string numbers = "[";
  for (int i = 0; i < 400000; ++i) numbers += (i == 0 ? "" : ",") + std::to_string(i % 10);
  numbers += "]";
  const auto bounded = parse_json(numbers, {}, 4 << 20);
  REQUIRE_FALSE(bounded.has_value());
  CHECK(bounded.error() == make_error_code(ctxguard::Error::kJsonTooLarge));
  // The same text with room enough parses whole.
  const auto whole = parse_json(numbers, {}, 64 << 20);
  REQUIRE(whole.has_value());
  CHECK(whole->as_array().size() == 400000);
  // Records complete one by one: the stack holds one value per record (320 KB for these).
  std::string records = "[";
  for (int i = 0; i < 20000; ++i) records += (i == 0 ? "" : ",") + std::string(R"({"id":1})");
  records += "]";
  CHECK(parse_json(records, {}, 4 << 20).has_value());
}
