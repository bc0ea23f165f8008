#include "budget/token_estimator.hpp"

#include "support/double_chars.hpp"
#include "support/json_writer.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <boost/json/value.hpp>

#include "budget/token_model.hpp"
#include "budget/token_terms.hpp"
#include "budget/token_weights.hpp"

namespace ctxguard::budget {
namespace {

namespace json = boost::json;
using namespace detail;

// The whole model folded into one table: the weight of `byte` after a byte of class `row`, in
// 1/kUnit tokens (each term rounded on its own, as weight_of does, so both sum the same).
using WeightTable = std::array<std::array<std::uint16_t, 256>, kByteClassCount>;

constexpr WeightTable kWeights = [] {
  WeightTable table{};
  for (unsigned row = 0; row < kByteClassCount; ++row) {
    for (unsigned byte = 0; byte < 256; ++byte) {
      const std::uint64_t weight = byte_weight(kByteClass[byte]) +
                                   run_weight(row, kByteClass[byte]) + char_weight(row, byte) +
                                   invalid_utf8_weight(row, kByteClass[byte]);
      table[row][byte] = static_cast<std::uint16_t>(weight);
    }
  }
  return table;
}();

constexpr bool fits_16_bits() {
  for (unsigned row = 0; row < kByteClassCount; ++row) {
    for (unsigned byte = 0; byte < 256; ++byte) {
      const std::uint64_t weight = byte_weight(kByteClass[byte]) +
                                   run_weight(row, kByteClass[byte]) + char_weight(row, byte) +
                                   invalid_utf8_weight(row, kByteClass[byte]);
      if (weight > 0xffff) return false;
    }
  }
  return true;
}
static_assert(fits_16_bits(), "a weight above 16 tokens does not fit the table");

// The same table indexed by the pair (previous byte, byte) as one 16-bit number, byte << 8 |
// previous: what a little-endian 16-bit load at the previous byte reads. 128 KiB, of which
// ASCII text touches about 20 KiB; it saves the class lookup of the previous byte.
using PairTable = std::array<std::uint16_t, 65536>;

constexpr PairTable kPairWeights = [] {
  PairTable table{};
  for (unsigned previous = 0; previous < 256; ++previous) {
    for (unsigned byte = 0; byte < 256; ++byte) {
      // Within a run the class does not change, so no run or character weight applies.
      table[(byte << 8) | previous] = previous == byte && has_repeat_weight(byte)
                                          ? static_cast<std::uint16_t>(fixed(kRepeatWeight[byte]))
                                          : kWeights[kByteClass[previous]][byte];
    }
  }
  return table;
}();

// A byte as the writer prints it inside a JSON string: 1, 2 (\n) or 6 (\u0001) bytes.
struct Escaped {
  char bytes[6];
  std::size_t size;
};

constexpr Escaped escaped(unsigned byte) noexcept {
  const char escape = kJsonEscapes[byte];
  if (escape == 0) return {{static_cast<char>(byte)}, 1};
  if (escape != 'u') return {{'\\', escape}, 2};
  constexpr std::string_view kHex = "0123456789abcdef";
  return {{'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xf]}, 6};
}

constexpr std::array<std::uint8_t, 256> kEscapeExtraBytes = [] {
  std::array<std::uint8_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    table[byte] = static_cast<std::uint8_t>(escaped(byte).size - 1);
  }
  return table;
}();

// The last byte the writer prints for a byte inside a string.
constexpr std::array<std::uint8_t, 256> kEscapedLast = [] {
  std::array<std::uint8_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    const Escaped e = escaped(byte);
    table[byte] = static_cast<std::uint8_t>(e.bytes[e.size - 1]);
  }
  return table;
}();

// kPairWeights for the body of a JSON string: the weight of `byte`'s escaped form printed after
// the escaped form of `previous`, so that a string is priced with one lookup per byte as well.
constexpr std::uint64_t string_pair_weight(unsigned previous, unsigned byte) noexcept {
  const Escaped e = escaped(byte);
  unsigned last = kEscapedLast[previous];
  std::uint64_t weight = 0;
  for (std::size_t i = 0; i < e.size; ++i) {
    const auto out = static_cast<unsigned char>(e.bytes[i]);
    weight += kPairWeights[(unsigned{out} << 8) | last];
    last = out;
  }
  return weight;
}

constexpr bool string_weights_fit_16_bits() {
  for (unsigned previous = 0; previous < 256; ++previous) {
    for (unsigned byte = 0; byte < 256; ++byte) {
      if (string_pair_weight(previous, byte) > 0xffff) return false;
    }
  }
  return true;
}
static_assert(string_weights_fit_16_bits(), "an escape above 16 tokens does not fit the table");

constexpr PairTable kStringPairWeights = [] {
  PairTable table{};
  for (unsigned previous = 0; previous < 256; ++previous) {
    for (unsigned byte = 0; byte < 256; ++byte) {
      table[(byte << 8) | previous] =
          static_cast<std::uint16_t>(string_pair_weight(previous, byte));
    }
  }
  return table;
}();

// Whether any of the 8 bytes of `block` is escaped in a JSON string (", \\ or below 0x20), with
// the usual SWAR tests for a zero byte and for a byte below n.
constexpr bool needs_escape(std::uint64_t block) noexcept {
  constexpr std::uint64_t kOnes = 0x0101010101010101;
  constexpr std::uint64_t kHigh = 0x8080808080808080;
  const std::uint64_t quote = block ^ (kOnes * '"');
  const std::uint64_t backslash = block ^ (kOnes * '\\');
  const std::uint64_t found = ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) |
                              ((block - kOnes * 0x20) & ~block);
  return (found & kHigh) != 0;
}

// ---- the hot loop ----------------------------------------------------------------------------

// The running state of a count, kept in locals while one call lasts and stored into the
// TokenCounter at its end, so that the many small pieces of a JSON walk cost no member stores.
struct Tally {
  std::uint64_t weight = 0;
  std::size_t bytes = 0;
  unsigned previous = 0;  // the byte before the next one
  // For characters as UTF-16 code units (bytes - continuations + supplementary), when counted:
  // UTF-8 continuation bytes, and leads of 4-byte sequences (two code units each).
  bool count_chars = false;
  std::size_t continuations = 0;
  std::size_t supplementary = 0;
};

// Counts the continuation bytes and 4-byte leads of an 8-byte block (both have bit 7 set), or
// of one byte given as a block of its own.
inline void tally_wide(Tally& tally, std::uint64_t block) noexcept {
  constexpr std::uint64_t kHigh = 0x8080808080808080;
  tally.continuations += static_cast<std::size_t>(std::popcount(block & ~(block << 1) & kHigh));
  tally.supplementary += static_cast<std::size_t>(
      std::popcount(block & (block << 1) & (block << 2) & (block << 3) & kHigh));
}

inline void tally_byte(Tally& tally, unsigned char byte) noexcept {
  tally.weight += kPairWeights[(unsigned{byte} << 8) | tally.previous];
  tally.previous = byte;
  ++tally.bytes;
}

// Sums `table` over the pairs (previous byte, byte) of `text`, `previous` being the byte before
// it (updated). With kPairWeights that is the estimate of the text; with kStringPairWeights, of
// the text as a JSON string body. `extra` (if not null) gets the bytes escapes add.
template <const PairTable& table, bool kCountChars>
inline std::uint64_t sum_pairs(std::string_view text, unsigned& previous, std::size_t* extra,
                               Tally& tally) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* const end = p + text.size();
  unsigned last = previous;
  // Two sums so that consecutive adds do not wait on each other. Every lookup depends on the
  // input bytes only, never on an earlier lookup, so the loads of a block overlap.
  std::uint64_t even = 0;
  std::uint64_t odd = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; end - p >= 8; p += 8) {
      std::uint64_t block;
      std::memcpy(&block, p, sizeof block);
      // Byte i of `pairs` is the byte before input byte i, so bits 8i..8i+15 are the pair
      // (byte i - 1, byte i), the index of the table.
      const std::uint64_t pairs = (block << 8) | last;
      even += table[pairs & 0xffff];
      odd += table[(pairs >> 8) & 0xffff];
      even += table[(pairs >> 16) & 0xffff];
      odd += table[(pairs >> 24) & 0xffff];
      even += table[(pairs >> 32) & 0xffff];
      odd += table[(pairs >> 40) & 0xffff];
      even += table[(pairs >> 48) & 0xffff];
      odd += table[block >> 48];
      last = static_cast<unsigned>(block >> 56);
      if (kCountChars && (block & 0x8080808080808080) != 0) tally_wide(tally, block);
      if (extra != nullptr && needs_escape(block)) {
        for (int i = 0; i < 8; ++i) *extra += kEscapeExtraBytes[p[i]];
      }
    }
  }
  for (; p != end; ++p) {
    even += table[(unsigned{*p} << 8) | last];
    if (extra != nullptr) *extra += kEscapeExtraBytes[*p];
    if (kCountChars && *p >= 0x80) tally_wide(tally, std::uint64_t{*p});
    last = *p;
  }
  previous = last;
  return even + odd;
}

inline void tally_text(Tally& tally, std::string_view text) noexcept {
  // Characters are counted only when asked for: it costs a fifth of the speed on non-ASCII text.
  tally.weight += tally.count_chars
                      ? sum_pairs<kPairWeights, true>(text, tally.previous, nullptr, tally)
                      : sum_pairs<kPairWeights, false>(text, tally.previous, nullptr, tally);
  tally.bytes += text.size();
}

// ---- JSON without serializing, as support/json_writer.cpp writes it ---------------------------

// The body of a JSON string is priced with kStringPairWeights, whose entries already hold each
// byte's escaped form; only the byte count needs the escapes' extra bytes.
void tally_json_string(Tally& tally, std::string_view unescaped) noexcept {
  tally_byte(tally, '"');
  // As an input byte, '"' comes out as \", which ends in '"' like the opening quote does.
  unsigned previous = '"';
  std::size_t extra = 0;
  tally.weight += tally.count_chars
                      ? sum_pairs<kStringPairWeights, true>(unescaped, previous, &extra, tally)
                      : sum_pairs<kStringPairWeights, false>(unescaped, previous, &extra, tally);
  tally.bytes += unescaped.size() + extra;
  tally.previous = kEscapedLast[previous];
  tally_byte(tally, '"');
}

void tally_scalar(Tally& tally, const json::value& value) noexcept {
  char buffer[32];
  switch (value.kind()) {
    case json::kind::null:
      tally_text(tally, "null");
      break;
    case json::kind::bool_:
      tally_text(tally, value.get_bool() ? "true" : "false");
      break;
    case json::kind::int64: {
      const auto result = std::to_chars(buffer, buffer + sizeof buffer, value.get_int64());
      tally_text(tally, std::string_view(buffer, static_cast<std::size_t>(result.ptr - buffer)));
      break;
    }
    case json::kind::uint64: {
      const auto result = std::to_chars(buffer, buffer + sizeof buffer, value.get_uint64());
      tally_text(tally, std::string_view(buffer, static_cast<std::size_t>(result.ptr - buffer)));
      break;
    }
    case json::kind::double_: {
      const double number = value.get_double();
      // Infinities as 1e999 (which reads back as infinity), NaN as null.
      if (std::isinf(number)) {
        tally_text(tally, number > 0 ? "1e999" : "-1e999");
      } else if (std::isnan(number)) {
        tally_text(tally, "null");
      } else {
        // Shortest round trip; an integral value keeps a `.0` so that it still reads as a double.
        std::array<char, kMaxDoubleChars> digits;
        const std::string_view text = format_double(number, digits);
        tally_text(tally, text);
        if (text.find_first_of(".e") == std::string_view::npos) tally_text(tally, ".0");
      }
      break;
    }
    case json::kind::string:
      tally_json_string(tally, value.get_string());
      break;
    case json::kind::array:
    case json::kind::object:
      break;  // containers are walked by tally_value
  }
}

// Walks `value` depth first with an explicit stack of kFrames containers; a deeper document
// continues in a nested call with a fresh stack, so the machine stack grows by one call per
// kFrames levels instead of one per level, and nothing is allocated.
void tally_value(Tally& tally, const json::value& root) noexcept {
  constexpr std::size_t kFrames = 256;
  struct Frame {
    const json::value* container;
    std::size_t next;  // index of the next element or member
  };
  std::array<Frame, kFrames> stack;
  std::size_t depth = 0;

  // Opens `value`: scalars are counted at once, containers pushed (or, on a full stack, counted
  // whole by a nested call).
  const auto open = [&](const json::value& value) {
    const bool array = value.is_array();
    if (!array && !value.is_object()) {
      tally_scalar(tally, value);
    } else if (depth == kFrames) {
      tally_value(tally, value);
    } else {
      tally_byte(tally, array ? '[' : '{');
      stack[depth++] = {&value, 0};
    }
  };

  open(root);
  while (depth > 0) {
    Frame& top = stack[depth - 1];
    if (const json::array* array = top.container->if_array()) {
      if (top.next == array->size()) {
        tally_byte(tally, ']');
        --depth;
        continue;
      }
      if (top.next > 0) tally_byte(tally, ',');
      open((*array)[top.next++]);
    } else {
      const json::object& object = top.container->get_object();
      if (top.next == object.size()) {
        tally_byte(tally, '}');
        --depth;
        continue;
      }
      if (top.next > 0) tally_byte(tally, ',');
      const json::key_value_pair& member = *(object.begin() + top.next++);
      tally_json_string(tally, member.key());
      tally_byte(tally, ':');
      open(member.value());
    }
  }
}

}  // namespace

// ---- TokenCounter ----------------------------------------------------------------------------

template <class Counting>
void TokenCounter::count_with(Counting&& counting) noexcept {
  static_assert(kStartByte == detail::kStartByte);
  Tally tally{.weight = 0, .bytes = 0, .previous = last_byte_, .count_chars = count_chars_};
  counting(tally);
  weight_ += tally.weight;
  bytes_ += tally.bytes;
  chars_ += tally.bytes + tally.supplementary - tally.continuations;
  last_byte_ = static_cast<std::uint8_t>(tally.previous);
}

void TokenCounter::add(std::string_view text) noexcept {
  count_with([text](Tally& tally) { tally_text(tally, text); });
}

void TokenCounter::add_json_string(std::string_view unescaped) noexcept {
  count_with([unescaped](Tally& tally) { tally_json_string(tally, unescaped); });
}

void TokenCounter::add_json(const json::value& value) noexcept {
  count_with([&value](Tally& tally) { tally_value(tally, value); });
}

std::size_t TokenCounter::tokens() const noexcept {
  return static_cast<std::size_t>((weight_ + kUnit - 1) / kUnit);
}

double TokenCounter::fractional_tokens() const noexcept {
  return static_cast<double>(weight_) / static_cast<double>(kUnit);
}

std::size_t TokenCounter::bytes() const noexcept { return bytes_; }

std::size_t TokenCounter::chars() const noexcept { return chars_; }

std::size_t estimate_tokens(std::string_view text) noexcept {
  TokenCounter counter;
  counter.add(text);
  return counter.tokens();
}

std::size_t estimate_json_tokens(const json::value& value) noexcept {
  TokenCounter counter;
  counter.add_json(value);
  return counter.tokens();
}

}  // namespace ctxguard::budget
