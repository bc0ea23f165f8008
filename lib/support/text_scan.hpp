#pragma once
// Byte-level helpers for scanning text: ASCII classes (locale-free, unlike <cctype>), UTF-8
// character counts and boundaries, and line shapes. Shared by the stages that read text
// (chunking, digests, field ranking, log and date detection) so each spells them once.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ctxguard::text {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
inline bool is_letter(char c) { return is_lower(c) || is_upper(c); }
inline char lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
// Equal but for the case of ASCII letters.
inline bool equal_folded(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

// The value of the `count` digits at `at`, or -1 when they are not all digits (or not there).
[[gnu::always_inline]] inline int digits_at(std::string_view text, std::size_t at,
                                            std::size_t count) {
  if (at + count > text.size()) return -1;
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (!is_digit(text[i])) return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// A byte inside a UTF-8 sequence (never the first byte of a character).
inline bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }
// A UTF-8 sequence has at most 3 continuation bytes: backing off or stepping over more means
// the text is not valid UTF-8, and a cut must not move further for it.
inline constexpr std::size_t kMaxContinuation = 3;

// Characters as Unicode code points (for valid UTF-8; invalid bytes count as one each).
inline std::size_t char_count(std::string_view text) {
  std::size_t count = 0;
  for (const char c : text) count += is_continuation(c) ? 0 : 1;
  return count;
}

// The byte length of the first `chars` characters of `text` (all of it when shorter).
inline std::size_t prefix_bytes(std::string_view text, std::size_t chars) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_continuation(text[i]) && seen++ == chars) return i;
  }
  return text.size();
}

// The length of `text` without a UTF-8 sequence cut short at its end (a prefix taken by bytes).
inline std::size_t whole_characters(std::string_view text) {
  std::size_t trailing = 0;
  while (trailing < kMaxContinuation && trailing < text.size() &&
         is_continuation(text[text.size() - 1 - trailing])) {
    ++trailing;
  }
  if (trailing == text.size()) return text.size();
  const auto lead = static_cast<unsigned char>(text[text.size() - 1 - trailing]);
  const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return length > trailing + 1 ? text.size() - trailing - 1 : text.size();
}

// The words of a name or a text, lower-cased (ASCII letters; other UTF-8 bytes are kept as they
// are, so words of other scripts stay whole). A word ends at any other ASCII character, before
// an upper-case letter that follows a lower-case letter or a digit ("guestName", "v2Name"), and
// before the last capital of a run followed by a lower-case letter ("HTTPStatus": http, status).
// Tool search and field ranking read names and descriptions with it.
inline std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  const auto word_byte = [](char c) {
    return is_letter(c) || is_digit(c) || static_cast<unsigned char>(c) >= 0x80;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!word_byte(c)) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
      continue;
    }
    if (!word.empty() && is_upper(c)) {
      const char before = text[i - 1];
      const bool after_lower = is_lower(before) || is_digit(before);
      const bool acronym_end = is_upper(before) && i + 1 < text.size() && is_lower(text[i + 1]);
      if (after_lower || acronym_end) {
        words.push_back(std::move(word));
        word.clear();
      }
    }
    word += lower(c);
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// A Markdown ATX heading: "# Title" ... "###### Title" (1 to 6 '#', then a space or a tab).
inline bool is_markdown_heading(std::string_view line) {
  std::size_t hashes = 0;
  while (hashes < line.size() && hashes < 7 && line[hashes] == '#') ++hashes;
  return hashes >= 1 && hashes <= 6 && hashes < line.size() &&
         (line[hashes] == ' ' || line[hashes] == '\t');
}

// A line without its line break ("\n" or "\r\n").
inline std::string_view without_line_break(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

inline bool is_blank_byte(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
inline bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), is_blank_byte);
}

// Sentence stops: '.', '!', '?' and the CJK full stop, exclamation and question marks 。！？
// (U+3002, U+FF01, U+FF1F). Readers of sentences (the chunker, tool compaction) share what a stop
// and its closing marks are; each has its own rule for what must follow them.
struct SentenceStop {
  std::size_t length = 0;  // bytes of the stop; 0 when no stop starts there
  bool wide = false;       // a CJK stop, which needs no blank space after it
};
inline SentenceStop sentence_stop_at(std::string_view text, std::size_t at) {
  if (at >= text.size()) return {};
  const char c = text[at];
  if (c == '.' || c == '!' || c == '?') return {1, false};
  const std::string_view mark = text.substr(at, 3);
  if (mark == "\xE3\x80\x82" || mark == "\xEF\xBC\x81" || mark == "\xEF\xBC\x9F") return {3, true};
  return {};
}

// Past the closing marks (quotes, brackets: bytes of `closing`, at most `most` of them) that
// follow a stop ending at `at`.
inline std::size_t past_closing_marks(std::string_view text, std::size_t at,
                                      std::string_view closing, std::size_t most) {
  std::size_t next = at;
  while (next < text.size() && next - at < most &&
         closing.find(text[next]) != std::string_view::npos) {
    ++next;
  }
  return next;
}

// Equal texts. Keys and category values are short: compared with two overlapping loads when they
// can be, since a call to memcmp (or a byte loop) per key was a fifth of the digest's time.
[[gnu::always_inline]] inline bool same_bytes(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  const std::size_t size = a.size();
  if (size < 4) {  // the first, middle and last bytes are all of them
    return size == 0 || (a[0] == b[0] && a[size / 2] == b[size / 2] && a[size - 1] == b[size - 1]);
  }
  if (size < 8) {  // two overlapping 4-byte loads
    std::uint32_t x = 0;
    std::uint32_t y = 0;
    std::memcpy(&x, a.data(), sizeof x);
    std::memcpy(&y, b.data(), sizeof y);
    if (x != y) return false;
    std::memcpy(&x, a.data() + size - 4, sizeof x);
    std::memcpy(&y, b.data() + size - 4, sizeof y);
    return x == y;
  }
  std::uint64_t x = 0;
  std::uint64_t y = 0;
  std::memcpy(&x, a.data(), sizeof x);
  std::memcpy(&y, b.data(), sizeof y);
  if (x != y) return false;
  if (size > 16) return std::memcmp(a.data() + 8, b.data() + 8, size - 8) == 0;
  std::memcpy(&x, a.data() + size - 8, sizeof x);
  std::memcpy(&y, b.data() + size - 8, sizeof y);
  return x == y;
}

}  // namespace ctxguard::text
