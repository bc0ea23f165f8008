#pragma once
// The size of an answer in every unit a client may limit it in, and the limits themselves
// (docs/protocol.md section 1.1, docs/clients.md).
//
// Clients cut tool results by their own rule: Claude Code in tokens, VS Code, Cline and Gemini
// CLI in characters, Copilot CLI and Claude Desktop in bytes, Codex in bytes of JSON, older Codex
// in lines. ctxguard measures what they measure, the text of a result's `text` content items
// joined by '\n' (the way they show it to the model):
//   - tokens: the estimate of budget::TokenCounter over the text items and structuredContent;
//   - chars: UTF-16 code units, as JavaScript's `string.length` counts (a character outside the
//     Basic Multilingual Plane is two), so a limit in code points is met too;
//   - bytes: UTF-8 bytes;
//   - lines: '\n' plus one per item, as `text.split("\n").length` counts ("a\n" is 2 lines);
//   - json_bytes: what Codex puts before the model, serialized as minified JSON: structuredContent
//     when the result has one (not null), else the text items as a `content` array of
//     {"type":"text","text":...} (other items are not text to it).
// Tokens are an estimate; the other units are exact.

#include <cstddef>
#include <string_view>

#include "config/settings.hpp"

namespace ctxguard::budget {

enum class SizeUnit { kTokens, kChars, kBytes, kLines, kJsonBytes };

// "tokens", "chars", "bytes", "lines", "json_bytes": the names the log, telemetry and /metrics
// use.
std::string_view to_string(SizeUnit unit);

// What an answer takes, measured.
struct AnswerSize {
  std::size_t tokens = 0;
  std::size_t chars = 0;
  std::size_t bytes = 0;
  std::size_t lines = 0;
  std::size_t json_bytes = 0;

  friend bool operator==(const AnswerSize&, const AnswerSize&) = default;
};

// What an answer may take: `tokens` always, the other units when not 0.
//
// `json_bytes` is planned through `bytes`: the JSON of a text is never shorter than the text, so
// of() makes `bytes` no larger than `json_bytes`, and what the escapes and the JSON around the
// text add is corrected once an answer is written and measured (the fit engine's rounds); only
// prefix_within counts JSON bytes as it goes, so a text cut once (a chunk) is exact too.
struct FitBudget {
  std::size_t tokens = 0;
  std::size_t chars = 0;
  std::size_t bytes = 0;
  std::size_t lines = 0;
  std::size_t json_bytes = 0;

  // The budget of `settings`: tokenBudget and the client's limits.
  static FitBudget of(const config::BudgetSettings& settings);
  // The hard cap of `settings`: hardCap and the same limits (they are a client's, so hard).
  static FitBudget cap_of(const config::BudgetSettings& settings);
  // Whether a unit other than tokens is limited.
  bool limits_text() const { return chars != 0 || bytes != 0 || lines != 0 || json_bytes != 0; }
};

// Whether `size` is within every limit of `budget`.
bool fits(const AnswerSize& size, const FitBudget& budget);

// The limit `size` is furthest over (or closest to), relative to the limit, and the share of it
// `size` takes (1.0: exactly at the limit). For an original, the limit that bound the answer cut
// from it; for an answer, how much of the room it uses: its fill (docs/telemetry.md). Tokens on
// a tie.
struct LimitShare {
  SizeUnit unit = SizeUnit::kTokens;
  double share = 0.0;
};
LimitShare tightest_limit(const AnswerSize& size, const FitBudget& budget);

// Text measured as clients measure it (above); `tokens` is left 0, to be estimated by the caller,
// and `json_bytes` is that of the text items alone (a result with structuredContent is measured
// on that instead: pipeline::result_size).
class TextMeasure {
 public:
  // Adds one text item: items after the first are joined with '\n'.
  void add_item(std::string_view text);
  const AnswerSize& size() const { return size_; }

 private:
  AnswerSize size_;
  bool any_ = false;
};

// UTF-16 code units of UTF-8 `text` (continuation bytes add none, 4-byte characters two).
std::size_t utf16_length(std::string_view text);

// The bytes {"type":"text","text":...} adds around a text's JSON string in a `content` array.
inline constexpr std::size_t kJsonTextItemBytes = 23;

// The end of the longest prefix of text[begin, ...) within `chars` UTF-16 code units, `bytes`,
// `lines` lines (fewer than `lines` line breaks) and `json_bytes` bytes once written as a JSON
// string (its escapes; the quotes are the caller's), 0 meaning no limit for each, never inside a
// UTF-8 sequence. Tokens are not looked at.
std::size_t prefix_within(std::string_view text, std::size_t begin, const FitBudget& limits);

}  // namespace ctxguard::budget
