#include "support/base64url.hpp"

#include <random>
#include <string>

#include <catch2/catch.hpp>

using ctxguard::base64url_decode;
using ctxguard::base64url_encode;

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string random_bytes(std::mt19937& random, std::size_t size) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::string bytes(size, '\0');
  for (auto& c : bytes) c = static_cast<char>(byte(random));
  return bytes;
}

}  // namespace

TEST_CASE("base64url: the RFC 4648 test vectors encode and decode without padding") {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},          {"foo", "Zm9v"},
      {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [bytes, text] : vectors) {
    CAPTURE(bytes);
    CHECK(base64url_encode(bytes) == text);
    const auto decoded = base64url_decode(text);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == bytes);
  }
}

TEST_CASE("base64url: the url-safe alphabet uses - and _ where base64 uses + and /") {
  CHECK(base64url_encode("\xfb\xef\xbe") == "----");
  CHECK(base64url_encode("\xff\xff\xff") == "____");
  CHECK(base64url_encode("\xfb\xff") == "-_8");  // "+/8=" in standard base64
  CHECK(base64url_decode("-_8") == std::optional<std::string>("\xfb\xff"));
}

TEST_CASE("base64url: every 6-bit value maps to its alphabet character and back") {
  for (std::size_t value = 0; value < 64; ++value) {
    // One byte `value << 2` encodes as alphabet[value] followed by 'A' (the low bits are zero).
    const std::string byte(1, static_cast<char>(value << 2));
    const std::string text = std::string(1, kAlphabet[value]) + 'A';
    CHECK(base64url_encode(byte) == text);
    CHECK(base64url_decode(text) == std::optional<std::string>(byte));
  }
}

TEST_CASE("base64url: random byte strings of every length 0..100 round trip") {
  std::mt19937 random(20240611);
  for (std::size_t size = 0; size <= 100; ++size) {
    for (int round = 0; round < 20; ++round) {
      const std::string bytes = random_bytes(random, size);
      const std::string text = base64url_encode(bytes);
      CHECK(text.size() == (size * 4 + 2) / 3);
      CHECK(text.find_first_not_of(kAlphabet) == std::string::npos);
      const auto decoded = base64url_decode(text);
      REQUIRE(decoded.has_value());
      CHECK(*decoded == bytes);
    }
  }
}

TEST_CASE("base64url: the empty string is the encoding of no bytes") {
  CHECK(base64url_decode("") == std::optional<std::string>(""));
}

TEST_CASE("base64url: every character outside the alphabet is rejected in every position") {
  for (int c = 0; c < 256; ++c) {
    if (kAlphabet.find(static_cast<char>(c)) != std::string_view::npos) continue;
    for (std::size_t position = 0; position < 4; ++position) {
      std::string text = "Zm9v";
      text[position] = static_cast<char>(c);
      CAPTURE(c, position);
      CHECK_FALSE(base64url_decode(text).has_value());
    }
  }
}

TEST_CASE("base64url: standard base64 characters + and / are rejected") {
  CHECK_FALSE(base64url_decode("+/8").has_value());
  CHECK_FALSE(base64url_decode("Zm9v+A").has_value());
  CHECK_FALSE(base64url_decode("Zm9v/A").has_value());
}

TEST_CASE("base64url: padding is rejected") {
  CHECK_FALSE(base64url_decode("Zg==").has_value());
  CHECK_FALSE(base64url_decode("Zm8=").has_value());
  CHECK_FALSE(base64url_decode("Zg=").has_value());
  CHECK_FALSE(base64url_decode("====").has_value());
  CHECK_FALSE(base64url_decode("Zm9v=").has_value());
}

TEST_CASE("base64url: whitespace and NUL are rejected") {
  CHECK_FALSE(base64url_decode("Zm9v\n").has_value());
  CHECK_FALSE(base64url_decode(" Zm9v").has_value());
  CHECK_FALSE(base64url_decode("Zm 9v").has_value());
  CHECK_FALSE(base64url_decode(std::string_view("Zm9\0", 4)).has_value());
}

TEST_CASE("base64url: a length of 1 modulo 4 is rejected") {
  for (const char* text : {"A", "Z", "Zm9vY", "Zm9vYmFyZ", "AAAAAAAAA"}) {
    CAPTURE(text);
    CHECK_FALSE(base64url_decode(text).has_value());
  }
}

TEST_CASE("base64url: non-zero trailing bits are rejected, so each encoding is unique") {
  // Two characters carry 12 bits for one byte: the last 4 must be zero.
  for (std::size_t value = 1; value < 16; ++value) {
    CHECK_FALSE(base64url_decode(std::string("Z") + kAlphabet[value]).has_value());
  }
  CHECK(base64url_decode("Zg").has_value());  // 'g' = 32: low 4 bits clear
  CHECK_FALSE(base64url_decode("Zh").has_value());
  // Three characters carry 18 bits for two bytes: the last 2 must be zero.
  CHECK(base64url_decode("Zm8").has_value());  // '8' = 60
  CHECK_FALSE(base64url_decode("Zm9").has_value());
  CHECK_FALSE(base64url_decode("Zm-").has_value());
  CHECK_FALSE(base64url_decode("Zm9vZm_").has_value());
}

TEST_CASE("base64url: exactly one text of each length encodes each byte string") {
  // Exhaustive over all texts of two and three characters: 256 one-byte strings and 65536
  // two-byte strings, each accepted in exactly its canonical form.
  std::size_t accepted_two = 0;
  std::size_t accepted_three = 0;
  for (const char a : kAlphabet) {
    for (const char b : kAlphabet) {
      const std::string text{a, b};
      if (auto bytes = base64url_decode(text)) {
        ++accepted_two;
        CHECK(base64url_encode(*bytes) == text);
      }
      for (const char c : kAlphabet) {
        const std::string longer{a, b, c};
        if (auto bytes = base64url_decode(longer)) {
          ++accepted_three;
          CHECK(base64url_encode(*bytes) == longer);
        }
      }
    }
  }
  CHECK(accepted_two == 256);
  CHECK(accepted_three == 65536);
}
