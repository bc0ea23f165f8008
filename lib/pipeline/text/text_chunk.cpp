#include "pipeline/text/text_chunk.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "budget/token_estimator.hpp"
#include "pipeline/text/log_entry.hpp"
#include "support/most_that_fit.hpp"
#include "support/text_scan.hpp"

// How a chunk's end is chosen (chunk_end below). The window is the longest stretch from the
// chunk's start that fits max_tokens; the candidates are its line starts (found walking back
// from the window's end), then the sentence and word ends of its last line, and the last one of
// the strongest kind that qualifies is taken (the last one fills the chunk best):
//   - log text (looks_like_log): the last entry start in the window, wherever it is. A short
//     chunk is better than an entry cut in two; only when the window holds no entry start (one
//     entry alone exceeds a chunk) do the rules below split that entry.
//   - otherwise, and for such an entry, in this order:
//       1. the last paragraph end (after a blank line, or before a Markdown heading) in the
//          latter half of the window,
//       2. the last line break in the latter half,
//       3. the last sentence end in the latter half (". ", "! ", "? ", optionally with a closing
//          quote or bracket, before a line break, or after a CJK 。！？),
//       4. the last word boundary (after a space or tab) in the latter half,
//       5. the last line break anywhere, then the last sentence end, then the last word
//          boundary anywhere,
//       6. the last UTF-8 character boundary that fits (never between \r and \n); when not even
//          one character fits, that character alone (or a CRLF).
// "Latter half" means that the chunk would cost more than half of max_tokens: so every chunk
// but the last of a non-log text is at least half full, and on prose and Markdown, where
// paragraphs and lines are much shorter than a chunk, the last such boundary is near the end of
// the window (80-99% full on average from 200 to 3,000 tokens, text_chunk_test.cpp). Sentence
// and word ends rank below any line break in the latter half, but above a line break in the
// first half: a long line is better cut between two sentences than left for a half-empty chunk.
// They are only looked for in the line that holds the window's end: when the latter half holds
// no line break, it lies wholly inside that line.
//
// Cost: the window is counted once with one TokenCounter, in blocks of many lines sized by the
// tokens left (advance_within), its end found by halving the one block that did not fit; line
// starts come from the LineIndex, and the walk back stops at the first candidate that
// qualifies. A chunk takes at least half its window except in the fallbacks, which leave a long
// line or entry for the next window, so each byte is counted about once and read a small
// constant number of times: linear time, about 1-2x one estimate_tokens of the text
// (bench/chunk_bench.cpp).

namespace ctxguard::pipeline {

namespace {

using budget::TokenCounter;

// Block sizes of advance_within: before kMinSample bytes are counted, a block is one byte per
// token left (text rarely costs more; prose costs about a quarter token a byte, logs a third);
// then kFillShare of the bytes the tokens left are worth at the rate so far.
constexpr double kFirstBytesPerToken = 1.0;
constexpr std::size_t kMinSample = 64;
constexpr double kFillShare = 0.9;
constexpr std::size_t kMinBlock = 16;
using text::is_blank;
using text::is_continuation;
using text::kMaxContinuation;
using text::without_line_break;

// ---- the chunker -------------------------------------------------------------------------------

// Advances `counter` over text[from, to) as far as it stays within `limit` tokens and returns
// where it stopped. Blocks of many lines are added while they fit, each sized to about 90% of
// the tokens left at the rate (bytes per token) counted so far; the first block that does not
// fit is searched by halving. So a window costs its bytes plus at most one block, in a few dozen
// calls, whatever its lines.
std::size_t advance_within(TokenCounter& counter, std::string_view text, std::size_t from,
                           std::size_t to, std::size_t limit) {
  std::size_t at = from;
  std::size_t failed = 0;  // the size of the block that did not fit
  while (at < to) {
    const std::size_t used = counter.tokens();
    const double left = used < limit ? static_cast<double>(limit - used) : 0.0;
    const double counted = counter.fractional_tokens();
    const double bytes_per_token = counter.bytes() >= kMinSample && counted > 0
                                       ? kFillShare * static_cast<double>(counter.bytes()) / counted
                                       : kFirstBytesPerToken;
    const double wanted = left * bytes_per_token;
    const std::size_t span = to - at;
    const std::size_t size =
        wanted >= static_cast<double>(span)
            ? span
            : std::min(span, std::max(kMinBlock, static_cast<std::size_t>(wanted)));
    TokenCounter trial = counter;
    trial.add(text.substr(at, size));
    if (trial.tokens() > limit) {
      failed = size;
      break;
    }
    counter = trial;
    at += size;
  }
  if (failed <= 1) return at;
  // The longest prefix of the failed block that fits is shorter than it (estimates grow with
  // length); each try adds to the counter of the last one that fit.
  std::size_t reached = 0;
  return at + most_that_fit(0, failed - 1, [&](std::size_t bytes) {
           TokenCounter trial = counter;
           trial.add(text.substr(at + reached, bytes - reached));
           if (trial.tokens() > limit) return false;
           counter = trial;
           reached = bytes;
           return true;
         });
}

// Where a chunk may end after the sentence stop at `at`, npos when it may not there: after the
// stop, at most one closing quote or bracket and one blank (". ", ".) "); right before a line
// break that follows the stop itself; right after a CJK stop that no line break follows.
std::size_t chunk_sentence_end(std::string_view text, std::size_t at) {
  constexpr std::size_t npos = std::string_view::npos;
  const auto is_line_break = [&](std::size_t i) {
    return i < text.size() && (text[i] == '\n' || text[i] == '\r');
  };
  const text::SentenceStop stop = text::sentence_stop_at(text, at);
  if (stop.length == 0) return npos;
  const std::size_t after = at + stop.length;
  if (stop.wide) return is_line_break(after) ? npos : after;
  if (is_line_break(after)) return after;
  const std::size_t closed = text::past_closing_marks(text, after, "\"')]", 1);
  return closed < text.size() && (text[closed] == ' ' || text[closed] == '\t') ? closed + 1 : npos;
}

// The last sentence end and the last word boundary in (from, to], 0 when there is none.
struct InLine {
  std::size_t sentence = 0;
  std::size_t word = 0;
};

// Whether any of the 8 bytes of `word` is `byte` (the usual SWAR test for a zero byte).
constexpr std::uint64_t has_byte(std::uint64_t word, unsigned char byte) {
  constexpr std::uint64_t kOnes = 0x0101010101010101;
  constexpr std::uint64_t kHigh = 0x8080808080808080;
  const std::uint64_t x = word ^ (kOnes * byte);
  return (x - kOnes) & ~x & kHigh;
}

// The bytes before a word boundary, and the bytes a sentence end is found from: ASCII stops and
// the lead bytes of the CJK stops (a sentence end lies 1 to 3 bytes after one of them); each
// tested one at a time and 8 at a time.
struct IsBlank {
  bool operator()(unsigned char byte) const { return byte == ' ' || byte == '\t'; }
  std::uint64_t any(std::uint64_t word) const { return has_byte(word, ' ') | has_byte(word, '\t'); }
};
struct IsStopMark {
  bool operator()(unsigned char byte) const {
    return byte == '.' || byte == '!' || byte == '?' || byte == 0xE3 || byte == 0xEF;
  }
  std::uint64_t any(std::uint64_t word) const {
    return has_byte(word, '.') | has_byte(word, '!') | has_byte(word, '?') | has_byte(word, 0xE3) |
           has_byte(word, 0xEF);
  }
};

// The last position in [from, to) whose byte matches, or `to` when there is none. Blocks of 16
// bytes are tested with one branch: a line of words without stops, or of CJK text without
// blanks, is skipped several bytes a cycle instead of a mispredicted branch per candidate.
template <class Match>
std::size_t find_last_in(std::string_view text, std::size_t from, std::size_t to, Match match) {
  constexpr std::size_t kWord = sizeof(std::uint64_t);
  std::size_t at = to;
  while (at - from >= 2 * kWord) {
    std::uint64_t low;
    std::uint64_t high;
    std::memcpy(&low, text.data() + at - 2 * kWord, kWord);
    std::memcpy(&high, text.data() + at - kWord, kWord);
    if ((match.any(low) | match.any(high)) != 0) break;
    at -= 2 * kWord;
  }
  while (at > from) {
    --at;
    if (match(static_cast<unsigned char>(text[at]))) return at;
  }
  return to;
}

InLine last_in_line(std::string_view text, std::size_t from, std::size_t to) {
  InLine found;
  const std::size_t blank = find_last_in(text, from, to, IsBlank{});
  if (blank != to) found.word = blank + 1;
  // Every sentence end at `p` has its mark at p - 3 (a CJK stop, or a stop and a closing quote),
  // p - 2 (". ") or p - 1 (before a line break); marks are searched down from the end until none
  // below can give a later end than the best one found.
  std::size_t below = to;
  while (true) {
    const std::size_t mark = find_last_in(text, from > 2 ? from - 2 : 0, below, IsStopMark{});
    if (mark == below || (found.sentence != 0 && mark + 3 <= found.sentence)) break;
    const std::size_t end = chunk_sentence_end(text, mark);
    if (end != std::string_view::npos && end > from && end <= to) {
      found.sentence = std::max(found.sentence, end);
    }
    below = mark;
  }
  if (found.sentence > found.word) found.word = found.sentence;  // as good a word boundary
  return found;
}

// The last character boundary at or before `limit` after `start`, never between \r and \n; or,
// when not even one character fits, the end of the first one (or of a CRLF).
std::size_t character_end(std::string_view text, std::size_t start, std::size_t limit) {
  std::size_t at = limit;
  for (std::size_t back = 0; back < kMaxContinuation && at > start && is_continuation(text[at]);
       ++back) {
    --at;
  }
  if (at > start && text[at - 1] == '\r' && text[at] == '\n') --at;
  if (at > start) return at;
  at = start + 1;
  if (text[start] == '\r' && at < text.size() && text[at] == '\n') return at + 1;
  for (std::size_t step = 0;
       step < kMaxContinuation && at < text.size() && is_continuation(text[at]); ++step) {
    ++at;
  }
  return at;
}

// The line holding `offset`, searched forward from `line` (which starts at or before it): steps
// doubling, then halving, so the cost grows with the lines of a window and stays in its part of
// the index (LineIndex::line_of searches the whole index, which misses the cache on big texts).
// lines() + 1 for the end of the text.
std::size_t line_from(const LineIndex& lines, std::size_t line, std::size_t offset) {
  const std::size_t past = lines.lines() + 1;  // line_begin(past) is the text's size > offset
  std::size_t low = line;                      // line_begin(low) <= offset
  std::size_t step = 1;
  while (low + step < past && lines.line_begin(low + step) <= offset) {
    low += step;
    step *= 2;
  }
  std::size_t high = std::min(low + step, past);  // line_begin(high) > offset
  while (high - low > 1) {
    const std::size_t middle = low + (high - low) / 2;
    if (lines.line_begin(middle) <= offset) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return offset >= lines.line_end(lines.lines()) ? past : low;
}

// Line `line` of `text` without its line break.
std::string_view line_content(std::string_view text, const LineIndex& lines, std::size_t line) {
  const std::size_t begin = lines.line_begin(line);
  return without_line_break(text.substr(begin, lines.line_end(line) - begin));
}

// A chunk's end and the line that holds it (lines() + 1 at the end of the text): the next
// chunk's first line, known without a search when the end is a line start.
struct Boundary {
  std::size_t end = 0;
  std::size_t line = 0;
};

// The end of the chunk starting at `start`, in line `first_line` (see the rules at the top of
// this file).
Boundary chunk_end(std::string_view text, std::size_t start, std::size_t first_line,
                   const budget::FitBudget& limits, const LineIndex& lines, bool log) {
  // The window: `half` ends the longest stretch within half of the limits, `limit` the longest
  // within them (tokens counted on from `half`, so the window is counted once; characters, bytes
  // and lines are exact and cut it shorter when they are set).
  TokenCounter counter;
  const std::size_t max_tokens = limits.tokens;
  std::size_t half = advance_within(counter, text, start, text.size(), max_tokens / 2);
  std::size_t limit = advance_within(counter, text, half, text.size(), max_tokens);
  if (limits.limits_text()) {
    const budget::FitBudget halved{.tokens = 0,
                                   .chars = (limits.chars + 1) / 2,
                                   .bytes = (limits.bytes + 1) / 2,
                                   .lines = (limits.lines + 1) / 2};
    limit = std::min(limit, budget::prefix_within(text, start, limits));
    half = std::min({half, limit, budget::prefix_within(text, start, halved)});
  }
  if (limit == text.size()) return {limit, lines.lines() + 1};  // the rest fits

  // Line boundaries are line starts after `start` and at most `limit`, found walking back from
  // the line that holds `limit`; the last one that qualifies fills the chunk best.
  const std::size_t limit_line = line_from(lines, first_line, limit);
  const std::size_t last_break = lines.line_begin(limit_line);  // > start when a line break fits
  if (log) {
    for (std::size_t line = limit_line; line > first_line; --line) {
      if (starts_log_entry(line_content(text, lines, line))) return {lines.line_begin(line), line};
    }
  }
  for (std::size_t line = limit_line; line > first_line && lines.line_begin(line) >= half; --line) {
    if (is_blank(line_content(text, lines, line - 1)) ||
        text::is_markdown_heading(line_content(text, lines, line))) {
      return {lines.line_begin(line), line};
    }
  }
  if (last_break > start && last_break >= half) return {last_break, limit_line};
  // No line break in the latter half: it lies inside the line that holds `limit`, and so do the
  // sentence and word ends found there. The part of the line in the first half is only read
  // when neither the latter half nor a line break offers a boundary.
  const std::size_t part = std::max(start, last_break);
  const std::size_t latter_part = std::max(part, half == 0 ? 0 : half - 1);
  InLine in_line = last_in_line(text, latter_part, limit);
  if (in_line.sentence != 0) return {in_line.sentence, limit_line};
  if (in_line.word != 0) return {in_line.word, limit_line};
  if (last_break > start) return {last_break, limit_line};
  in_line = last_in_line(text, part, latter_part);
  if (in_line.sentence != 0) return {in_line.sentence, limit_line};
  if (in_line.word != 0) return {in_line.word, limit_line};
  const std::size_t end = character_end(text, start, limit);
  // Past `limit` when one character over the budget ends a line.
  return {end, line_from(lines, first_line, end)};
}

}  // namespace

// ---- LineIndex ---------------------------------------------------------------------------------

LineIndex::LineIndex(std::string_view text) : size_(text.size()), is_log_(looks_like_log(text)) {
  if (text.empty()) return;
  starts_.push_back(0);
  const char* const data = text.data();
  const char* const end = data + text.size();
  const char* at = data;
  while (at < end) {
    const void* newline = std::memchr(at, '\n', static_cast<std::size_t>(end - at));
    if (newline == nullptr) break;
    at = static_cast<const char*>(newline) + 1;
    if (at < end) starts_.push_back(static_cast<std::size_t>(at - data));
  }
  starts_.shrink_to_fit();  // the index lives in the cache, which charges its capacity
}

std::size_t LineIndex::line_of(std::size_t offset) const {
  if (offset >= size_) return lines() + 1;
  return static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) -
                                  starts_.begin());
}

// Out of range: line 0 is the empty range [0, 0), lines past the last the empty range at the end.
std::size_t LineIndex::line_begin(std::size_t line) const {
  if (line == 0) return 0;
  return line <= lines() ? starts_[line - 1] : size_;
}

std::size_t LineIndex::line_end(std::size_t line) const {
  if (line == 0) return 0;
  return line < lines() ? starts_[line] : size_;
}

// ---- chunking ----------------------------------------------------------------------------------

std::vector<TextChunk> chunk_text(std::string_view text, const budget::FitBudget& limits,
                                  const LineIndex& lines) {
  std::vector<TextChunk> chunks;
  if (text.empty()) return chunks;
  const bool log = lines.is_log();
  std::size_t start = 0;
  std::size_t line = 1;
  while (start < text.size()) {
    const Boundary boundary = chunk_end(text, start, line, limits, lines, log);
    // The last line touched is the one before the end's when the end starts a line.
    const std::size_t last_line =
        boundary.end == lines.line_begin(boundary.line) ? boundary.line - 1 : boundary.line;
    chunks.push_back({start, boundary.end, line, last_line});
    start = boundary.end;
    line = boundary.line;
  }
  return chunks;
}

}  // namespace ctxguard::pipeline
