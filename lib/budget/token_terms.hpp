#pragma once
// The terms of the token model (token_model.hpp) in fixed point (1/kUnit token), each rounded on
// its own: what token_estimator.cpp folds into its pair tables at compile time and what
// token_model.cpp sums term by term, so that both give the same estimate.

#include <cstddef>
#include <cstdint>

#include "budget/token_model.hpp"
#include "budget/token_weights.hpp"

namespace ctxguard::budget::detail {

inline constexpr std::uint64_t fixed(double tokens) noexcept {
  return static_cast<std::uint64_t>(tokens * static_cast<double>(kUnit) + 0.5);
}

inline constexpr std::uint64_t byte_weight(unsigned byte_class) noexcept {
  return byte_class < kAsciiClasses ? fixed(kByteWeight[byte_class]) : 0;
}

inline constexpr std::uint64_t run_weight(unsigned from_class, unsigned to_class) noexcept {
  const std::size_t from = group_of(from_class);
  const std::size_t to = group_of(to_class);
  return from == to ? 0 : fixed(kRunWeight[from][to]);
}

// The character weight charged at this byte: at the lead of 2- and 4-byte characters, at the
// second byte of 3-byte characters (whose script the lead alone does not tell).
inline constexpr int script_at(unsigned previous_class, unsigned byte) noexcept {
  const unsigned byte_class = kByteClass[byte];
  if (byte_class == kLead2 || byte_class == kLead4) return kLeadScript[byte];
  if (byte_class == kContinuation && is_lead3(previous_class)) {
    return script_of_3byte(previous_class, byte);
  }
  return -1;
}

// A character's weight less the continuation-run weight its own bytes are charged.
inline constexpr std::uint64_t script_weight(std::size_t script) noexcept {
  return fixed(kCharWeight[script]) - continuation_runs_in(script) * fixed(kContinuationRunWeight);
}

constexpr bool script_weights_cover_their_runs() {
  for (std::size_t script = 0; script < kScriptCount; ++script) {
    if (fixed(kCharWeight[script]) < continuation_runs_in(script) * fixed(kContinuationRunWeight)) {
      return false;
    }
  }
  return true;
}
static_assert(script_weights_cover_their_runs(),
              "kContinuationRunWeight exceeds a calibrated character weight");

inline constexpr std::uint64_t char_weight(unsigned previous_class, unsigned byte) noexcept {
  const int script = script_at(previous_class, byte);
  return script < 0 ? 0 : script_weight(static_cast<std::size_t>(script));
}

inline constexpr bool is_stray(unsigned previous_class, unsigned byte_class) noexcept {
  const bool continuation = byte_class == kContinuation;
  return continuation ? previous_class < kAsciiClasses : is_lead3(previous_class);
}

inline constexpr bool is_continuation_run(unsigned previous_class, unsigned byte_class) noexcept {
  return byte_class == kContinuation && previous_class == kContinuation;
}

// What bytes outside any valid character cost (token_model.hpp, kStrayByteWeight).
inline constexpr std::uint64_t invalid_utf8_weight(unsigned previous_class,
                                                   unsigned byte_class) noexcept {
  if (is_stray(previous_class, byte_class)) return fixed(kStrayByteWeight);
  return is_continuation_run(previous_class, byte_class) ? fixed(kContinuationRunWeight) : 0;
}

// An ASCII byte after itself costs its run weight instead of its class's byte weight, where
// the calibration measured one (token_weights.hpp: kRepeatWeight, negative where not).
inline constexpr bool has_repeat_weight(unsigned byte) noexcept {
  return byte < kRepeatWeights && kRepeatWeight[byte] >= 0;
}

}  // namespace ctxguard::budget::detail
