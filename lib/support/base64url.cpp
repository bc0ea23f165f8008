#include "support/base64url.hpp"

#include <array>
#include <cstdint>

namespace ctxguard {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::uint8_t kInvalid = 0xff;

// Character -> 6-bit value, kInvalid for everything else (including '=', '+', '/').
constexpr std::array<std::uint8_t, 256> make_decode_table() {
  std::array<std::uint8_t, 256> table{};
  for (auto& value : table) value = kInvalid;
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::uint8_t>(i);
  }
  return table;
}

constexpr auto kDecodeTable = make_decode_table();

}  // namespace

std::string base64url_encode(std::string_view bytes) {
  std::string text;
  text.reserve((bytes.size() * 4 + 2) / 3);
  std::size_t at = 0;
  for (; at + 3 <= bytes.size(); at += 3) {
    const std::uint32_t group = std::uint32_t{static_cast<unsigned char>(bytes[at])} << 16 |
                                std::uint32_t{static_cast<unsigned char>(bytes[at + 1])} << 8 |
                                std::uint32_t{static_cast<unsigned char>(bytes[at + 2])};
    text += kAlphabet[group >> 18 & 0x3f];
    text += kAlphabet[group >> 12 & 0x3f];
    text += kAlphabet[group >> 6 & 0x3f];
    text += kAlphabet[group & 0x3f];
  }
  const std::size_t rest = bytes.size() - at;
  if (rest == 1) {
    const std::uint32_t group = std::uint32_t{static_cast<unsigned char>(bytes[at])} << 16;
    text += kAlphabet[group >> 18 & 0x3f];
    text += kAlphabet[group >> 12 & 0x3f];
  } else if (rest == 2) {
    const std::uint32_t group = std::uint32_t{static_cast<unsigned char>(bytes[at])} << 16 |
                                std::uint32_t{static_cast<unsigned char>(bytes[at + 1])} << 8;
    text += kAlphabet[group >> 18 & 0x3f];
    text += kAlphabet[group >> 12 & 0x3f];
    text += kAlphabet[group >> 6 & 0x3f];
  }
  return text;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  // A final group of one character would carry only 6 bits: no byte string encodes to that.
  if (text.size() % 4 == 1) return std::nullopt;
  std::string bytes;
  bytes.reserve(text.size() / 4 * 3 + 2);
  std::uint32_t bits = 0;  // pending bits, the newest in the low `bit_count`
  int bit_count = 0;
  for (const char c : text) {
    const std::uint8_t value = kDecodeTable[static_cast<unsigned char>(c)];
    if (value == kInvalid) return std::nullopt;
    bits = (bits << 6 | value) & 0xfff;  // never more than 12 pending bits are needed
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      bytes += static_cast<char>(bits >> bit_count & 0xff);
    }
  }
  // The 2 or 4 bits left over are padding; requiring them to be zero makes the encoding unique
  // (otherwise "AA", "AB", ... "AP" would all decode to the same byte).
  if ((bits & ((1u << bit_count) - 1)) != 0) return std::nullopt;
  return bytes;
}

}  // namespace ctxguard
