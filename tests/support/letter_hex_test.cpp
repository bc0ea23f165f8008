#include "support/letter_hex.hpp"

#include <algorithm>
#include <random>
#include <string>

#include <catch2/catch.hpp>

using ctxguard::letter_hex_decode;
using ctxguard::letter_hex_encode;

TEST_CASE("letter hex: each nibble is the letter p + 1 + v (mod 17) after the letter p") {
  CHECK(letter_hex_encode("") == "");
  // 0, 0, 1, f: a (after a virtual q), b, d, c (3 + 1 + 15 = 19 = 2 mod 17).
  CHECK(letter_hex_encode(std::string("\x00\x1f", 2)) == "abdc");
  CHECK(letter_hex_encode(std::string("\xa5\xff", 2)) == "kqpo");
  const auto decoded = letter_hex_decode("abdc");
  REQUIRE(decoded.has_value());
  CHECK(*decoded == std::string("\x00\x1f", 2));
}

TEST_CASE("letter hex: any byte string round-trips, in a-q, never a letter twice in a row") {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::size_t size = 0; size < 300; ++size) {
    std::string bytes(size, '\0');
    for (auto& c : bytes) c = static_cast<char>(byte(random));
    const std::string text = letter_hex_encode(bytes);
    CHECK(text.size() == 2 * size);
    CHECK(text.find_first_not_of("abcdefghijklmnopq") == std::string::npos);
    CHECK(std::adjacent_find(text.begin(), text.end()) == text.end());
    const auto decoded = letter_hex_decode(text);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == bytes);
  }
}

TEST_CASE(
    "letter hex: an odd length, a letter after itself or a character outside a-q is refused") {
  CHECK_FALSE(letter_hex_decode("a").has_value());
  CHECK_FALSE(letter_hex_decode("abc").has_value());
  CHECK_FALSE(letter_hex_decode("aa").has_value());
  CHECK_FALSE(letter_hex_decode("abdd").has_value());
  CHECK_FALSE(letter_hex_decode("qb").has_value());  // q stands before the first letter
  // Every character but a-q, in either position of a pair: only one spelling is accepted.
  for (int c = 0; c < 256; ++c) {
    if (c >= 'a' && c <= 'q') continue;
    CAPTURE(c);
    const char other = static_cast<char>(c);
    CHECK_FALSE(letter_hex_decode(std::string{other, 'a'}).has_value());
    CHECK_FALSE(letter_hex_decode(std::string{'a', other}).has_value());
  }
  CHECK_FALSE(letter_hex_decode("AA").has_value());  // capitals are not letters of the alphabet
}
