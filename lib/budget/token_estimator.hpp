#pragma once
// Estimates how many tokens a model sees for a piece of text, without a tokenizer.
//
// The seeds' rule (4 characters per token + 20%) underestimates exactly what MCP servers send
// most: JSON full of quotes, braces and digits, source code, and CJK text. The estimate here
// counts bytes and runs per byte class (letters, digits, punctuation/JSON syntax, whitespace,
// UTF-8 multi-byte sequences) and combines them linearly with coefficients calibrated against a
// real tokenizer (tests/e2e/estimator-accuracy.test.mjs, docs/estimator.md). It is tuned to err
// high: within 15% for 95% of real outputs and never more than 10% under.
//
// Thread-safe and allocation-free. Throughput is measured by scripts/bench.sh (>= 1 GB/s).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/json/fwd.hpp>

namespace ctxguard::budget {

// Byte and run counts of one or more pieces of text. Estimates are additive: counting two
// pieces into one TokenCounter gives the same as counting their concatenation, up to the run
// that spans the seam.
class TokenCounter {
 public:
  void add(std::string_view text) noexcept;
  // A JSON string as serialized: quotes included, escapes counted as their escaped bytes.
  void add_json_string(std::string_view unescaped) noexcept;
  // `value` as minified JSON (the form ctxguard writes), without serializing it.
  void add_json(const boost::json::value& value) noexcept;
  std::size_t tokens() const noexcept;
  std::size_t bytes() const noexcept;

 private:
  // The byte before the next one (the model prices a byte by its predecessor's class, see
  // token_model.hpp); a text starts as if after a newline.
  static constexpr unsigned char kStartByte = '\n';

  // Runs `counting` on a local copy of the state (see token_estimator.cpp), then stores it.
  template <class Counting>
  void count_with(Counting&& counting) noexcept;

  std::uint64_t weight_ = 0;  // the estimate so far, in 1/4096 tokens
  std::size_t bytes_ = 0;
  std::uint8_t last_byte_ = kStartByte;
};

// Tokens of `text` as the model sees it.
std::size_t estimate_tokens(std::string_view text) noexcept;

// Tokens of `value` serialized as minified JSON.
std::size_t estimate_json_tokens(const boost::json::value& value) noexcept;

}  // namespace ctxguard::budget
