#include "pipeline/text_chunk.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "budget/token_estimator.hpp"

// How a chunk's end is chosen (chunk_end below). The window is the longest stretch from the
// chunk's start that fits max_tokens; it is scanned once, line by line, remembering only the
// last candidate of each kind (the last one is the one that fills the chunk best):
//   - log text (looks_like_log): the last entry start in the window, wherever it is. A short
//     chunk is better than an entry cut in two; only when the window holds no entry start (one
//     entry alone exceeds a chunk) do the rules below split that entry.
//   - otherwise, and for such an entry, in this order:
//       1. the last paragraph end (after a blank line, or before a Markdown heading) in the
//          latter half of the window,
//       2. the last line break in the latter half,
//       3. the last sentence end in the latter half (". ", "! ", "? ", optionally with a closing
//          quote or bracket, before a line break, or after a CJK full stop),
//       4. the last word boundary (after a space or tab) in the latter half,
//       5. the last line break anywhere, then the last sentence end, then the last word
//          boundary anywhere,
//       6. the last UTF-8 character boundary that fits (never between \r and \n).
// "Latter half" means that the chunk would cost more than half of max_tokens: so every chunk
// but the last of a non-log text is at least half full, and on prose and Markdown, where
// paragraphs and lines are much shorter than a chunk, the last such boundary is near the end of
// the window (about 85% full at 500 tokens and more above, text_chunk_test.cpp). Sentence and
// word ends rank below any line break in the latter half, but above a line break in the first
// half: a long line is better cut between two sentences than left for a half-empty chunk.
// Sentence and word ends are only looked for in the last line of the window, the one that did
// not fit: when the latter half holds no line break, it lies wholly inside that line.
//
// Cost: every line of the window is priced once with a TokenCounter (counting pieces one after
// another equals counting their concatenation); the line that overflows is advanced in blocks
// sized by the tokens left, and its limit found by halving the block that did not fit. A chunk
// takes at least half its window except in the fallbacks, which leave a long line or entry for
// the next window, so every byte is scanned a small constant number of times: linear time.

namespace ctxguard::pipeline {

namespace {

using budget::TokenCounter;

// A guess of bytes per token for the first block tried in a line (prose costs about 0.25 token
// a byte; denser text fails the block, which is then halved).
constexpr std::size_t kBytesPerToken = 4;
constexpr std::size_t kMinBlock = 16;
// The lines looks_like_log reads, and the share of them that must start an entry (1 in 5).
constexpr std::size_t kLogSampleLines = 1000;
constexpr std::size_t kLogShare = 5;
// A UTF-8 sequence has at most 3 continuation bytes: backing off or stepping over more means
// the text is not valid UTF-8, and a chunk must not grow or shrink by more for it.
constexpr std::size_t kMaxContinuation = 3;

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_blank_byte(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// A line without its line break ("\n" or "\r\n").
std::string_view content_of(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), is_blank_byte);
}

// "# Title" ... "###### Title": a paragraph boundary before it, blank line or not.
bool is_heading(std::string_view line) {
  std::size_t hashes = 0;
  while (hashes < line.size() && hashes < 7 && line[hashes] == '#') ++hashes;
  return hashes >= 1 && hashes <= 6 && hashes < line.size() &&
         (line[hashes] == ' ' || line[hashes] == '\t');
}

// ---- log entries -------------------------------------------------------------------------------

// The value of `count` digits at `at`, or -1 when they are not all digits.
int digits_at(std::string_view line, std::size_t at, std::size_t count) {
  if (at + count > line.size()) return -1;
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (!is_digit(line[i])) return -1;
    value = value * 10 + (line[i] - '0');
  }
  return value;
}

// Not followed by one more digit (so 2024-05-011 or 12:30:456 are no dates or times).
bool ends_number(std::string_view line, std::size_t at) {
  return at >= line.size() || !is_digit(line[at]);
}

// 2024-05-01 or 2024/05/01 (the same separator twice, a month and a day in range).
bool date_at(std::string_view line, std::size_t at) {
  if (digits_at(line, at, 4) < 0 || at + 10 > line.size()) return false;
  const char separator = line[at + 4];
  if ((separator != '-' && separator != '/') || line[at + 7] != separator) return false;
  const int month = digits_at(line, at + 5, 2);
  const int day = digits_at(line, at + 8, 2);
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && ends_number(line, at + 10);
}

// 12:30:45 or 9:30:45 (an hour, minutes and seconds in range).
bool time_at(std::string_view line, std::size_t at) {
  std::size_t hour_digits = 2;
  int hour = digits_at(line, at, 2);
  if (hour < 0) {
    hour_digits = 1;
    hour = digits_at(line, at, 1);
  }
  const std::size_t colon = at + hour_digits;
  if (hour < 0 || hour > 23 || colon + 6 > line.size()) return false;
  if (line[colon] != ':' || line[colon + 3] != ':') return false;
  const int minute = digits_at(line, colon + 1, 2);
  const int second = digits_at(line, colon + 4, 2);
  return minute >= 0 && minute <= 59 && second >= 0 && second <= 60 && ends_number(line, colon + 6);
}

// RFC 3164: "May  1 12:30:45" or "May 15 12:30:45".
bool syslog_date_at(std::string_view line, std::size_t at) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (at + 6 > line.size() || line[at + 3] != ' ') return false;
  const std::string_view month = line.substr(at, 3);
  if (std::find(kMonths.begin(), kMonths.end(), month) == kMonths.end()) return false;
  std::size_t day = at + 4;
  if (line[day] == ' ') ++day;  // a one-digit day is padded with a space
  std::size_t day_end = day;
  while (day_end < line.size() && day_end < day + 2 && is_digit(line[day_end])) ++day_end;
  if (day_end == day || day_end >= line.size() || line[day_end] != ' ') return false;
  return time_at(line, day_end + 1);
}

// ERROR, WARN, ... followed by a non-letter (or the end of the line).
bool level_at(std::string_view line, std::size_t at) {
  // WARNING before WARN: "WARN" followed by "ING" is followed by a letter.
  static constexpr std::array<std::string_view, 8> kLevels = {
      "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "TRACE", "FATAL", "CRITICAL"};
  const std::string_view rest = line.substr(std::min(at, line.size()));
  for (const std::string_view level : kLevels) {
    if (rest.starts_with(level) &&
        (rest.size() == level.size() || !is_letter(rest[level.size()]))) {
      return true;
    }
  }
  return false;
}

// ---- the chunker -------------------------------------------------------------------------------

// Advances `counter` over text[from, to) as far as it stays within `limit` tokens and returns
// where it stopped. Blocks sized by the tokens left are added while they fit (a short line is
// one block); the first block that does not fit is then searched by halving, so the work is the
// bytes advanced plus one block, in O(log block) calls once the limit is near.
std::size_t advance_within(TokenCounter& counter, std::string_view text, std::size_t from,
                           std::size_t to, std::size_t limit) {
  std::size_t at = from;
  std::size_t failed = 0;  // the size of the block that did not fit
  while (at < to) {
    const std::size_t used = counter.tokens();
    const std::size_t left = used < limit ? limit - used : 0;
    const std::size_t span = to - at;
    const std::size_t block =
        left >= span / kBytesPerToken ? span : std::max(kMinBlock, left * kBytesPerToken);
    const std::size_t size = std::min(block, span);
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
  // The longest prefix of the failed block that fits is shorter than it: binary lifting over
  // [0, failed - 1], each step kept when the prefix still fits (estimates grow with length).
  std::size_t reached = 0;
  for (std::size_t step = std::bit_floor(failed - 1); step > 0; step >>= 1) {
    if (reached + step > failed - 1) continue;
    TokenCounter trial = counter;
    trial.add(text.substr(at + reached, step));
    if (trial.tokens() <= limit) {
      counter = trial;
      reached += step;
    }
  }
  return at + reached;
}

// Whether a chunk ending at `at` (the next one starting there) ends a sentence.
bool sentence_end_at(std::string_view text, std::size_t at) {
  const auto is_stop = [](char c) { return c == '.' || c == '!' || c == '?'; };
  const auto is_closing = [](char c) { return c == '"' || c == '\'' || c == ')' || c == ']'; };
  if (at == 0) return false;
  const char last = text[at - 1];
  if (last == ' ' || last == '\t') {
    if (at < 2) return false;
    std::size_t mark = at - 2;
    if (is_closing(text[mark]) && mark > 0) --mark;
    return is_stop(text[mark]);
  }
  if (at < text.size() && (text[at] == '\n' || text[at] == '\r')) return is_stop(last);
  // CJK full stop, exclamation and question marks: 。！？ (U+3002, U+FF01, U+FF1F).
  if (at >= 3) {
    const std::string_view mark = text.substr(at - 3, 3);
    return mark == "\xE3\x80\x82" || mark == "\xEF\xBC\x81" || mark == "\xEF\xBC\x9F";
  }
  return false;
}

// The last sentence end and the last word boundary in (from, to], 0 when there is none.
struct InLine {
  std::size_t sentence = 0;
  std::size_t word = 0;
};

InLine last_in_line(std::string_view text, std::size_t from, std::size_t to) {
  InLine found;
  for (std::size_t at = to; at > from; --at) {
    if (found.word == 0 && (text[at - 1] == ' ' || text[at - 1] == '\t')) found.word = at;
    if (sentence_end_at(text, at)) {
      found.sentence = at;
      if (found.word == 0) found.word = at;  // a sentence end is as good a word boundary
      break;
    }
  }
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

// The end of the chunk starting at `start` (see the rules at the top of this file).
std::size_t chunk_end(std::string_view text, std::size_t start, std::size_t max_tokens,
                      const LineIndex& lines, bool log) {
  constexpr std::size_t kNone = 0;  // every candidate lies after `start`, so 0 is none
  TokenCounter counter;
  const std::size_t half_tokens = max_tokens / 2;
  std::size_t half = kNone;  // where the window passes half of max_tokens
  std::size_t last_line = kNone;
  std::size_t last_paragraph = kNone;
  std::size_t last_entry = kNone;
  std::size_t part_begin = start;  // the part of the overflowing line inside the window
  std::size_t limit = start;       // the end of the window
  const std::size_t line_count = lines.lines();
  for (std::size_t line = lines.line_of(start); line <= line_count; ++line) {
    const std::size_t begin = std::max(start, lines.line_begin(line));
    const std::size_t end = lines.line_end(line);
    const TokenCounter before = counter;
    const std::size_t stop = advance_within(counter, text, begin, end, max_tokens);
    if (half == kNone && counter.tokens() > half_tokens) {
      TokenCounter probe = before;
      half = std::max(advance_within(probe, text, begin, stop, half_tokens), start + 1);
    }
    if (stop < end) {
      part_begin = begin;
      limit = stop;
      break;
    }
    if (end == text.size()) return end;  // the rest fits
    // The line ends with '\n' (only the text's last line may lack one).
    last_line = end;
    const std::size_t next_end = lines.line_end(line + 1);
    const std::string_view next = content_of(text.substr(end, next_end - end));
    if (is_blank(text.substr(lines.line_begin(line), end - lines.line_begin(line))) ||
        is_heading(next)) {
      last_paragraph = end;
    }
    if (log && starts_log_entry(next)) last_entry = end;
  }
  if (half == kNone) half = limit;  // the first byte past the window already costs half

  if (log && last_entry != kNone) return last_entry;
  const auto latter = [half](std::size_t at) { return at != kNone && at >= half; };
  if (latter(last_paragraph)) return last_paragraph;
  if (latter(last_line)) return last_line;
  const InLine in_line = last_in_line(text, part_begin, limit);
  if (latter(in_line.sentence)) return in_line.sentence;
  if (latter(in_line.word)) return in_line.word;
  if (last_line != kNone) return last_line;
  if (in_line.sentence != kNone) return in_line.sentence;
  if (in_line.word != kNone) return in_line.word;
  return character_end(text, start, limit);
}

}  // namespace

// ---- LineIndex ---------------------------------------------------------------------------------

LineIndex::LineIndex(std::string_view text) : size_(text.size()) {
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

// ---- log detection -----------------------------------------------------------------------------

bool starts_log_entry(std::string_view line) {
  std::size_t at = 0;
  if (line.starts_with('[')) {
    at = 1;
  } else if (line.starts_with('<')) {  // a syslog priority, <13>, maybe with RFC 5424's version
    std::size_t close = 1;
    while (close < line.size() && close < 5 && is_digit(line[close])) ++close;
    if (close == 1 || close >= line.size() || line[close] != '>') return false;
    at = close + 1;
    if (at + 1 < line.size() && line[at] == '1' && line[at + 1] == ' ') at += 2;
  }
  return date_at(line, at) || time_at(line, at) || syslog_date_at(line, at) || level_at(line, at);
}

bool looks_like_log(std::string_view text) {
  std::size_t sampled = 0;
  std::size_t entries = 0;
  std::size_t at = 0;
  while (at < text.size() && sampled < kLogSampleLines) {
    const std::size_t newline = text.find('\n', at);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    const std::string_view line = content_of(text.substr(at, end - at));
    at = end;
    if (is_blank(line)) continue;
    ++sampled;
    if (starts_log_entry(line)) ++entries;
  }
  return entries >= 2 && entries * kLogShare >= sampled;
}

// ---- chunking ----------------------------------------------------------------------------------

std::vector<TextChunk> chunk_text(std::string_view text, std::size_t max_tokens,
                                  const LineIndex& lines) {
  std::vector<TextChunk> chunks;
  if (text.empty()) return chunks;
  const bool log = looks_like_log(text);
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = chunk_end(text, start, max_tokens, lines, log);
    chunks.push_back({start, end, lines.line_of(start), lines.line_of(end - 1)});
    start = end;
  }
  return chunks;
}

}  // namespace ctxguard::pipeline
