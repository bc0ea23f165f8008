#pragma once
// What every fuzz target shares: reading knobs off the front of the input, and checking an
// invariant so that a violation is a crash libFuzzer keeps (the input goes to -artifact_prefix).
//
// Knobs come first and the payload (JSON, YAML, text) is the rest, so a seed file reads as a few
// header bytes followed by a real message (libFuzzer's FuzzedDataProvider takes its integers
// from the end, which would cut the last bytes off every seed's payload).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>

namespace ctxguard::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size)
      : bytes_(reinterpret_cast<const char*>(data), size) {}

  // The next byte, or 0 once the input is used up (a short input reads as all-zero knobs).
  std::uint8_t byte() {
    if (at_ == bytes_.size()) return 0;
    return static_cast<std::uint8_t>(bytes_[at_++]);
  }

  // A value in [low, high] from the next byte (two bytes when the range needs them).
  std::size_t in_range(std::size_t low, std::size_t high) {
    const std::size_t span = high - low + 1;
    std::size_t raw = byte();
    if (span > 256) raw = raw << 8 | byte();
    return low + raw % span;
  }

  bool flag() { return (byte() & 1) != 0; }

  // Everything not read yet.
  std::string_view rest() {
    const std::string_view left = bytes_.substr(at_);
    at_ = bytes_.size();
    return left;
  }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

// A broken invariant: say which one and what was seen, then abort so libFuzzer records the input.
[[noreturn]] inline void invariant_broken(std::string_view invariant, std::string_view detail) {
  std::fprintf(stderr, "\nfuzz invariant broken: %.*s\n  %.*s\n",
               static_cast<int>(invariant.size()), invariant.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

inline void require(bool holds, std::string_view invariant, std::string_view detail = {}) {
  if (!holds) invariant_broken(invariant, detail);
}

// The same with the detail written only when it is needed (checks on hot paths).
template <class Describe>
requires std::is_invocable_r_v<std::string, Describe>
inline void require(bool holds, std::string_view invariant, Describe&& describe) {
  if (!holds) invariant_broken(invariant, describe());
}

// A short printable excerpt of `text` for a failure message.
inline std::string excerpt(std::string_view text, std::size_t limit = 200) {
  std::string out;
  for (const char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      constexpr std::string_view kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

}  // namespace ctxguard::fuzz
