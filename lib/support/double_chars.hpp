#pragma once
// Doubles to text and back, the one place that does it: Apple's libc++ has no
// std::from_chars for floating types (libc++ gained it in LLVM 20) and offers std::to_chars for
// them only from macOS 13.3, so nothing else calls either with a double.
//
// format_double writes the bytes std::to_chars(first, last, value) writes: the shortest digits
// that read back as the same double, in fixed or scientific notation, whichever is shorter (fixed
// on a tie: `10000`, `1e+05`, `0.001`, `1e-04`); a whole number in fixed notation is its exact
// value (`123456789012345683968`, not `123456789012345680000`); infinities and NaN are `inf`,
// `-inf`, `nan`, `-nan`. `-0.0` is `-0`.
//
// parse_double reads what std::from_chars(first, last, value) reads, correctly rounded: an
// optional `-` (no `+`, no spaces), decimal digits with an optional point and exponent, `inf`,
// `infinity`, `nan` and `nan(chars)` in any case; no hexadecimal. It answers only when the number
// is the whole text and within range: `1e400` and `1e-400` are nothing (from_chars's
// result_out_of_range), a subnormal such as `1e-310` is a number.
//
// Neither throws nor allocates. tests/support/double_chars_test.cpp holds both to the standard
// functions wherever the library has them.

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace ctxguard {

// The longest text format_double writes: a sign, 17 digits, a point, `e-308`.
inline constexpr std::size_t kMaxDoubleChars = 24;

// The text, in `out`.
std::string_view format_double(double value, std::span<char, kMaxDoubleChars> out) noexcept;

std::optional<double> parse_double(std::string_view text) noexcept;

}  // namespace ctxguard
