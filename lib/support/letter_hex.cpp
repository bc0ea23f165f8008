#include "support/letter_hex.hpp"

namespace ctxguard {
namespace {

constexpr char kFirstLetter = 'a';
constexpr unsigned kNibbleValues = 16;

// The nibble a letter stands for, or kNibbleValues for any other character.
constexpr unsigned nibble_of(char letter) {
  const unsigned value = static_cast<unsigned char>(letter) - static_cast<unsigned>(kFirstLetter);
  return value < kNibbleValues ? value : kNibbleValues;
}

}  // namespace

std::string letter_hex_encode(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size() * 2);
  for (const char byte : bytes) {
    const auto value = static_cast<unsigned char>(byte);
    text += static_cast<char>(kFirstLetter + (value >> 4));
    text += static_cast<char>(kFirstLetter + (value & 0x0f));
  }
  return text;
}

std::optional<std::string> letter_hex_decode(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string bytes;
  bytes.reserve(text.size() / 2);
  for (std::size_t at = 0; at < text.size(); at += 2) {
    const unsigned high = nibble_of(text[at]);
    const unsigned low = nibble_of(text[at + 1]);
    if (high == kNibbleValues || low == kNibbleValues) return std::nullopt;
    bytes += static_cast<char>((high << 4) | low);
  }
  return bytes;
}

}  // namespace ctxguard
