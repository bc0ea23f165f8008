#include "budget/token_model.hpp"

#include <string_view>

#include "budget/token_terms.hpp"

namespace ctxguard::budget::detail {

void Features::add(std::string_view text, std::uint8_t& last_byte) noexcept {
  unsigned previous_byte = last_byte;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const unsigned previous = kByteClass[previous_byte];
    const unsigned byte_class = kByteClass[byte];
    if (byte == previous_byte && has_repeat_weight(byte)) {
      ++repeats[byte];
    } else if (byte_class < kAsciiClasses) {
      ++ascii_bytes[byte_class];
    }
    const std::size_t from = group_of(previous);
    const std::size_t to = group_of(byte_class);
    if (from != to) ++runs[from][to];
    const int script = script_at(previous, byte);
    if (script >= 0) ++chars[static_cast<std::size_t>(script)];
    if (is_stray(previous, byte_class)) ++stray_bytes;
    if (is_continuation_run(previous, byte_class)) ++continuation_runs;
    previous_byte = byte;
  }
  bytes += text.size();
  last_byte = static_cast<std::uint8_t>(previous_byte);
}

std::uint64_t weight_of(const Features& features) noexcept {
  std::uint64_t weight = 0;
  for (std::size_t c = 0; c < kAsciiClasses; ++c) {
    weight += features.ascii_bytes[c] * fixed(kByteWeight[c]);
  }
  for (std::size_t from = 0; from < kGroups; ++from) {
    for (std::size_t to = 0; to < kGroups; ++to) {
      if (from != to) weight += features.runs[from][to] * fixed(kRunWeight[from][to]);
    }
  }
  for (std::size_t s = 0; s < kScriptCount; ++s) {
    weight += features.chars[s] * script_weight(s);
  }
  for (unsigned byte = 0; byte < kRepeatWeights; ++byte) {
    if (features.repeats[byte] != 0) weight += features.repeats[byte] * fixed(kRepeatWeight[byte]);
  }
  weight += features.stray_bytes * fixed(kStrayByteWeight);
  weight += features.continuation_runs * fixed(kContinuationRunWeight);
  return weight;
}

}  // namespace ctxguard::budget::detail
