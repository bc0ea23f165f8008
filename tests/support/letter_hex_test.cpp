#include "support/letter_hex.hpp"

#include <random>
#include <string>

#include <catch2/catch.hpp>

using ctxguard::letter_hex_decode;
using ctxguard::letter_hex_encode;

TEST_CASE("letter hex: each byte is two letters of a-p, the high nibble first") {
  CHECK(letter_hex_encode("") == "");
  CHECK(letter_hex_encode(std::string("\x00\x1f\xa5\xff", 4)) == "aabpkfpp");
  CHECK(letter_hex_encode("foo") == "gggpgp");
  const auto decoded = letter_hex_decode("aabpkfpp");
  REQUIRE(decoded.has_value());
  CHECK(*decoded == std::string("\x00\x1f\xa5\xff", 4));
}

TEST_CASE("letter hex: any byte string round-trips, spelled in lowercase a-p only") {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::size_t size = 0; size < 300; ++size) {
    std::string bytes(size, '\0');
    for (auto& c : bytes) c = static_cast<char>(byte(random));
    const std::string text = letter_hex_encode(bytes);
    CHECK(text.size() == 2 * size);
    CHECK(text.find_first_not_of("abcdefghijklmnop") == std::string::npos);
    const auto decoded = letter_hex_decode(text);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == bytes);
  }
}

TEST_CASE("letter hex: an odd length or any character outside a-p is refused") {
  CHECK_FALSE(letter_hex_decode("a").has_value());
  CHECK_FALSE(letter_hex_decode("abc").has_value());
  // Every character but a-p, in either position of a pair: only one spelling is accepted.
  for (int c = 0; c < 256; ++c) {
    if (c >= 'a' && c <= 'p') continue;
    CAPTURE(c);
    const char other = static_cast<char>(c);
    CHECK_FALSE(letter_hex_decode(std::string{other, 'a'}).has_value());
    CHECK_FALSE(letter_hex_decode(std::string{'a', other}).has_value());
  }
  CHECK_FALSE(letter_hex_decode("AA").has_value());  // capitals are not letters of the alphabet
}
