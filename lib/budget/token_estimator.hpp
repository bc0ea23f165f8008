#pragma once
// Estimates how many tokens a model sees for a piece of text, without a tokenizer.
//
// The common rule of thumb (4 characters per token + 20%) underestimates exactly what MCP servers
// send most: JSON full of quotes, braces and digits, source code, and CJK text. The estimate here
// prices each byte by its class and by the class of the byte before it (letters, digits,
// punctuation/JSON syntax, whitespace and newlines, UTF-8 characters by script), and an ASCII
// byte after itself at what a run of that character costs (see token_model.hpp): a linear model
// whose coefficients are calibrated against Claude's tokenizer on real MCP outputs and
// adversarial text (scripts/calibrate-estimator.mjs, tests/e2e/estimator-accuracy.test.mjs,
// docs/estimator.md). It errs high by design: on that corpus 95% of the outputs are within 15%
// and none is more than 10% under. Prose in languages other than English written in ASCII
// letters is the known weak spot (up to a third under, docs/estimator.md).
//
// No allocation, no exceptions, no shared mutable state: the functions are safe to call from
// any thread; a TokenCounter is a plain value (one per thread, or guard it). One table lookup
// per byte, >= 1 GB/s (bench/estimator_bench.cpp).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/json/fwd.hpp>

namespace ctxguard::budget {

// The running estimate of one or more pieces of text. Counting pieces one after another into
// one TokenCounter gives exactly the estimate of their concatenation (the counter remembers the
// last byte), so a result can be counted part by part, and JSON without serializing it.
class TokenCounter {
 public:
  // With `count_chars`, chars() counts characters too (a fifth slower on non-ASCII text).
  explicit TokenCounter(bool count_chars = false) noexcept : count_chars_(count_chars) {}

  void add(std::string_view text) noexcept;
  // A JSON string as serialized: quotes included, escapes counted as their escaped bytes.
  void add_json_string(std::string_view unescaped) noexcept;
  // `value` as minified JSON (the form ctxguard writes), without serializing it.
  void add_json(const boost::json::value& value) noexcept;
  std::size_t tokens() const noexcept;
  // The estimate so far without rounding: differences between two readings price exactly the
  // bytes added in between (the pagination planner prices every item this way in one pass).
  double fractional_tokens() const noexcept;
  std::size_t bytes() const noexcept;
  // Characters as UTF-16 code units (budget/answer_size.hpp), exact for valid UTF-8 when the
  // counter counts them; bytes() otherwise.
  std::size_t chars() const noexcept;

 private:
  // The byte before the next one (the model prices a byte by its predecessor's class, see
  // token_model.hpp); a text starts as if after a newline.
  static constexpr unsigned char kStartByte = '\n';

  // Runs `counting` on a local copy of the state (see token_estimator.cpp), then stores it.
  template <class Counting>
  void count_with(Counting&& counting) noexcept;

  std::uint64_t weight_ = 0;  // the estimate so far, in 1/4096 tokens
  std::size_t bytes_ = 0;
  std::size_t chars_ = 0;
  bool count_chars_ = false;
  std::uint8_t last_byte_ = kStartByte;
};

// Tokens of `text` as the model sees it.
std::size_t estimate_tokens(std::string_view text) noexcept;

// Tokens of `value` serialized as minified JSON.
std::size_t estimate_json_tokens(const boost::json::value& value) noexcept;

}  // namespace ctxguard::budget
