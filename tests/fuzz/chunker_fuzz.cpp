// Fuzz target: the text splitters, pipeline::chunk_text (chunks at semantic boundaries, cached
// once per text) and pipeline::cut_text (the hard cap's cut and the byte ranges of fetch).
//
// Input: 2 bytes of token limit (1..1024), then the text.
// Invariants, as text_chunk.hpp and text_cut.hpp state them:
//   - the chunks cover the text exactly: consecutive, none empty, concatenated they are the
//     text; "" gives none;
//   - each chunk costs at most the limit (budget::estimate_tokens of its bytes), unless it is a
//     single character (one UTF-8 sequence, or a CRLF) that alone costs more;
//   - no chunk ends between '\r' and '\n', nor, in valid UTF-8, inside a character;
//   - each chunk's first_line/last_line are the lines (LineIndex) of its first and last byte;
//   - cut_text, applied from the start (up to kMaxCuts times), always advances, ends at a character
//     boundary in valid UTF-8, and each piece costs at most the limit unless it is one character.

#include <string>
#include <vector>

#include "budget/token_estimator.hpp"
#include "fuzz_support.hpp"
#include "pipeline/text/text_chunk.hpp"
#include "pipeline/text/text_cut.hpp"
#include "support/text_scan.hpp"

namespace {

using ctxguard::budget::estimate_tokens;
using ctxguard::fuzz::excerpt;
using ctxguard::fuzz::FuzzInput;
using ctxguard::fuzz::require;
using ctxguard::text::is_continuation;

// Structurally valid UTF-8: each lead byte followed by as many continuation bytes as it says.
// (Overlong forms and surrogates do not matter to where characters begin.)
bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80             ? 1
                               : (lead & 0xE0) == 0xC0 ? 2
                               : (lead & 0xF0) == 0xE0 ? 3
                               : (lead & 0xF8) == 0xF0 ? 4
                                                       : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if (!is_continuation(text[i + k])) return false;
    }
    i += length;
  }
  return true;
}

// What may exceed the limit on its own: one character (a byte and the continuation bytes after
// it, at most 3 even in invalid UTF-8), or a CRLF.
bool is_single_unit(std::string_view piece) {
  if (piece == "\r\n") return true;
  if (piece.empty() || piece.size() > 4) return false;
  for (std::size_t i = 1; i < piece.size(); ++i) {
    if (!is_continuation(piece[i])) return false;
  }
  return true;
}

std::string where(std::size_t begin, std::size_t end, std::size_t max_tokens,
                  std::string_view text) {
  return "bytes [" + std::to_string(begin) + ", " + std::to_string(end) + ") of " +
         std::to_string(text.size()) + ", limit " + std::to_string(max_tokens) + ", tokens " +
         std::to_string(estimate_tokens(text.substr(begin, end - begin))) + ": \"" +
         excerpt(text.substr(begin, end - begin)) + "\"";
}

void check_chunks(std::string_view text, std::size_t max_tokens, bool utf8) {
  const ctxguard::pipeline::LineIndex lines(text);
  const std::vector<ctxguard::pipeline::TextChunk> chunks =
      ctxguard::pipeline::chunk_text(text, {.tokens = max_tokens}, lines);
  require(text.empty() == chunks.empty(), "\"\" gives no chunks, any other text some");
  std::size_t expected_begin = 0;
  for (const auto& chunk : chunks) {
    const auto at = [&] { return where(chunk.begin, chunk.end, max_tokens, text); };
    require(chunk.begin == expected_begin, "chunks are consecutive", at);
    require(chunk.end > chunk.begin && chunk.end <= text.size(), "no chunk is empty", at);
    const std::string_view piece = text.substr(chunk.begin, chunk.end - chunk.begin);
    require(estimate_tokens(piece) <= max_tokens || is_single_unit(piece),
            "a chunk costs at most the limit unless it is one character", at);
    if (chunk.end < text.size()) {
      require(!(text[chunk.end - 1] == '\r' && text[chunk.end] == '\n'),
              "no chunk ends between \\r and \\n", at);
      require(!utf8 || !is_continuation(text[chunk.end]), "no chunk ends inside a UTF-8 character",
              at);
    }
    require(chunk.first_line == lines.line_of(chunk.begin) &&
                chunk.last_line == lines.line_of(chunk.end - 1),
            "a chunk's lines are those of its first and last byte", [&] {
              return at() + ": lines " + std::to_string(chunk.first_line) + ".." +
                     std::to_string(chunk.last_line);
            });
    expected_begin = chunk.end;
  }
  require(expected_begin == text.size(), "the chunks concatenate to the text",
          "covered " + std::to_string(expected_begin) + " of " + std::to_string(text.size()));
}

// Each cut estimates the rest of the text first, so cutting a whole text in one-token pieces
// would be quadratic: the first kMaxCuts pieces show as much.
constexpr std::size_t kMaxCuts = 64;

void check_cuts(std::string_view text, std::size_t max_tokens, bool utf8) {
  std::size_t cuts = 0;
  for (std::size_t begin = 0; begin < text.size() && cuts < kMaxCuts; ++cuts) {
    const std::size_t end = ctxguard::pipeline::cut_text(text, begin, {.tokens = max_tokens});
    require(end > begin && end <= text.size(), "cut_text advances within the text",
            [&] { return "from " + std::to_string(begin) + " to " + std::to_string(end); });
    const auto at = [&] { return where(begin, end, max_tokens, text); };
    const std::string_view piece = text.substr(begin, end - begin);
    require(estimate_tokens(piece) <= max_tokens || is_single_unit(piece),
            "a cut piece costs at most the limit unless it is one character", at);
    require(!utf8 || end == text.size() || !is_continuation(text[end]),
            "cut_text ends at a character boundary", at);
    begin = end;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput input(data, size);
  const std::size_t max_tokens = input.in_range(1, 1024);
  const std::string_view text = input.rest();
  const bool utf8 = is_utf8(text);
  check_chunks(text, max_tokens, utf8);
  check_cuts(text, max_tokens, utf8);
  return 0;
}
