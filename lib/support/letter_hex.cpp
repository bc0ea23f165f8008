#include "support/letter_hex.hpp"

namespace ctxguard {
namespace {

constexpr char kFirstLetter = 'a';
constexpr unsigned kLetters = 17;       // a-q
constexpr unsigned kNibbleValues = 16;  // the letters but the one before
constexpr unsigned kStartIndex = kLetters - 1;

// Spells nibbles one after another, each relative to the letter before it.
class NibbleSpeller {
 public:
  char letter_of(unsigned nibble) {
    previous_ = (previous_ + 1 + nibble) % kLetters;
    return static_cast<char>(kFirstLetter + previous_);
  }

  // The nibble `letter` stands for, or kNibbleValues for a character outside a-q or the letter
  // before it again.
  unsigned nibble_of(char letter) {
    const unsigned index = static_cast<unsigned char>(letter) - static_cast<unsigned>(kFirstLetter);
    if (index >= kLetters) return kNibbleValues;
    const unsigned nibble = (index + kLetters - previous_ - 1) % kLetters;
    previous_ = index;
    return nibble;
  }

 private:
  unsigned previous_ = kStartIndex;
};

}  // namespace

std::string letter_hex_encode(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size() * 2);
  NibbleSpeller speller;
  for (const char byte : bytes) {
    const auto value = static_cast<unsigned char>(byte);
    text += speller.letter_of(value >> 4);
    text += speller.letter_of(value & 0x0f);
  }
  return text;
}

std::optional<std::string> letter_hex_decode(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string bytes;
  bytes.reserve(text.size() / 2);
  NibbleSpeller speller;
  for (std::size_t at = 0; at < text.size(); at += 2) {
    const unsigned high = speller.nibble_of(text[at]);
    const unsigned low = speller.nibble_of(text[at + 1]);
    if (high == kNibbleValues || low == kNibbleValues) return std::nullopt;
    bytes += static_cast<char>((high << 4) | low);
  }
  return bytes;
}

}  // namespace ctxguard
