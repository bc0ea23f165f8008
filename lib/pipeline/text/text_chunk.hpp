#pragma once
// Chunking long plain text at semantic boundaries.
//
// A text over the chunk size is split once, when it is cached, into consecutive chunks that
// cover it exactly (concatenated, they are the text byte for byte). Each chunk costs at most
// `max_tokens` estimated tokens and ends at the strongest boundary the window offers:
//   1. in a log (most lines start with a timestamp or a level), before the next entry's first
//      line: an entry keeps its continuation lines (stack traces, indented lines, "Caused by");
//   2. after a blank line (a paragraph);
//   3. after a line break;
//   4. after a sentence end (". ", "! ", "? " and the like);
//   5. at a word boundary (a single line longer than a chunk);
//   6. at a UTF-8 character boundary (never inside a sequence).
// CRLF line ends count as one break and are never split. Pure functions, no I/O, no throwing
// except std::bad_alloc.

#include <cstddef>
#include <string_view>
#include <vector>

#include "budget/answer_size.hpp"
#include "pipeline/text/log_entry.hpp"

namespace ctxguard::pipeline {

// Where each line of a text starts, and whether the text is a log (looks_like_log, read once
// with its lines: the chunker, the digest and a search of the text all ask). Line numbers are
// 1-based. A line is the bytes up to and including its '\n'; a last line without '\n' counts;
// "" has 0 lines, "a\n" has 1, "a\nb" 2.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);

  bool is_log() const { return is_log_; }

  std::size_t lines() const { return starts_.size(); }
  // The line holding byte `offset` (offset < text size); lines() + 1 for offset == text size.
  std::size_t line_of(std::size_t offset) const;
  // Bytes [line_begin(n), line_end(n)) are line n (1 <= n <= lines()).
  std::size_t line_begin(std::size_t line) const;
  std::size_t line_end(std::size_t line) const;
  // Memory held, for the cache's accounting.
  std::size_t memory_bytes() const { return starts_.capacity() * sizeof(std::size_t); }

 private:
  std::vector<std::size_t> starts_;
  std::size_t size_ = 0;
  bool is_log_ = false;
};

struct TextChunk {
  std::size_t begin = 0;  // bytes [begin, end) of the text
  std::size_t end = 0;
  std::size_t first_line = 0;  // 1-based, inclusive: the lines the chunk touches
  std::size_t last_line = 0;
};

// Splits `text` into chunks of at most `limits.tokens` estimated tokens (budget::estimate_tokens
// of the chunk's bytes) and within its characters, bytes and lines when set, by the boundary
// rules above. A chunk is never empty; only a single UTF-8 character over a limit makes a chunk
// exceed it. Text that fits is one chunk; "" gives none. Runs in time linear in the text (the
// 10 MiB log of bench/chunk_bench.cpp).
std::vector<TextChunk> chunk_text(std::string_view text, const budget::FitBudget& limits,
                                  const LineIndex& lines);

}  // namespace ctxguard::pipeline
