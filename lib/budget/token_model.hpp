#pragma once
// The model behind TokenCounter (internal to lib/budget; also used by its tests and by the
// calibration tool tests/budget/estimate_tokens_cli.cpp).
//
// A BPE tokenizer first splits text where the kind of character changes (letters, digits,
// punctuation, whitespace), then merges bytes inside each piece. So the model charges:
//   - a weight per byte of each ASCII class (long words and numbers take several tokens);
//   - a weight per class change, one per (previous group, next group) pair: where a token
//     starts, and how likely it is to start there (`" word` glues the space to the word, `\n`
//     before an indented line does not);
//   - a weight per multi-byte UTF-8 character of each script (Cyrillic costs about half a token
//     a character, Tamil two), read from the lead byte, or for 3-byte characters from the lead
//     and the second byte (one 64-code-point block);
//   - a weight per ASCII byte that repeats the byte before it, in place of its class's byte
//     weight: the tokenizer's vocabulary holds long runs of some characters and not of others
//     (2,000 '-' are 8 tokens, 2,000 'y' 500), so a run costs what that character's run costs.
// The weights come from scripts/calibrate-estimator.mjs (see token_estimator.cpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ctxguard::budget::detail {

// What a byte is, as far as the model cares. The first kAsciiClasses are the classes of ASCII
// bytes, each with its own byte weight; every class from kContinuation on belongs to the one
// transition group kNonAscii. The lead classes of 3-byte sequences are split so that the second
// byte can be priced by script.
enum ByteClass : std::uint8_t {
  kLower,         // a-z
  kUpper,         // A-Z
  kDigit,         // 0-9
  kSpace,         // ' '
  kNewline,       // \n \r
  kOtherSpace,    // tab, other control bytes, DEL
  kQuote,         // "
  kJsonPunct,     // { } [ ] , :
  kBackslash,     // the escape character of JSON strings
  kPunct,         // all other ASCII punctuation
  kContinuation,  // 0x80-0xBF
  kLead2,         // 0xC0-0xDF
  kLead3E0,       // U+0800-0FFF: Indic scripts, Thai, ...
  kLead3E1,       // U+1000-1FFF: Georgian, Khmer, Vietnamese Latin, ...
  kLead3E2,       // U+2000-2FFF: punctuation, symbols, arrows, box drawing
  kLead3E3,       // U+3000-3FFF: CJK punctuation, kana
  kLead3Cjk,      // U+4000-9FFF: CJK ideographs
  kLead3Hangul,   // U+A000-DFFF: Hangul syllables (and a few small scripts)
  kLead3Special,  // U+E000-FFFF: private use, compatibility and full-width forms
  kLead4,         // 0xF0-0xFF: emoji and other astral characters
  kByteClassCount,
};

inline constexpr std::size_t kAsciiClasses = kContinuation;
// Bytes that can have a run weight of their own: ASCII.
inline constexpr std::size_t kRepeatWeights = 128;
// Transition groups: the ASCII classes, then everything else as one group.
inline constexpr std::size_t kNonAscii = kAsciiClasses;
inline constexpr std::size_t kGroups = kAsciiClasses + 1;
// A text starts as if after a newline: its first piece starts a token.
inline constexpr std::uint8_t kStartByte = '\n';
inline constexpr ByteClass kStartClass = kNewline;

constexpr std::size_t group_of(unsigned byte_class) noexcept {
  return byte_class < kAsciiClasses ? byte_class : kNonAscii;
}

inline constexpr std::array<std::uint8_t, 256> kByteClass = [] {
  std::array<std::uint8_t, 256> table{};
  for (unsigned b = 0; b < 256; ++b) {
    ByteClass c = kPunct;
    if (b >= 'a' && b <= 'z') {
      c = kLower;
    } else if (b >= 'A' && b <= 'Z') {
      c = kUpper;
    } else if (b >= '0' && b <= '9') {
      c = kDigit;
    } else if (b == ' ') {
      c = kSpace;
    } else if (b == '\n' || b == '\r') {
      c = kNewline;
    } else if (b < 0x20 || b == 0x7f) {
      c = kOtherSpace;
    } else if (b == '"') {
      c = kQuote;
    } else if (b == '{' || b == '}' || b == '[' || b == ']' || b == ',' || b == ':') {
      c = kJsonPunct;
    } else if (b == '\\') {
      c = kBackslash;
    } else if (b < 0x80) {
      c = kPunct;
    } else if (b < 0xc0) {
      c = kContinuation;
    } else if (b < 0xe0) {
      c = kLead2;
    } else if (b == 0xe0) {
      c = kLead3E0;
    } else if (b == 0xe1) {
      c = kLead3E1;
    } else if (b == 0xe2) {
      c = kLead3E2;
    } else if (b == 0xe3) {
      c = kLead3E3;
    } else if (b <= 0xe9) {
      c = kLead3Cjk;
    } else if (b <= 0xed) {
      c = kLead3Hangul;
    } else if (b <= 0xef) {
      c = kLead3Special;
    } else {
      c = kLead4;
    }
    table[b] = c;
  }
  return table;
}();

// Scripts of multi-byte characters, each with its own weight per character. The groups without
// measurements in the corpus are charged one token per UTF-8 byte, the most a byte-level BPE
// tokenizer can spend.
enum Script : std::uint8_t {
  kLatin1,           // U+0080-00FF (lead C2-C3): accented Latin, ©, ±, no-break space
  kLatinExtended,    // U+0100-02FF (C4-CB)
  kCombining,        // U+0300-036F (CC-CD): combining diacritics
  kGreek,            // CE-CF
  kCyrillic,         // D0-D4
  kArmenian,         // D5-D6
  kHebrew,           // D7
  kArabic,           // D8-DB
  kOther2,           // DC-DF (Syriac, Thaana, N'Ko), and the invalid leads C0-C1
  kDevanagari,       // E0 A4-A5
  kBengali,          // E0 A6-A7
  kGurmukhi,         // E0 A8-A9
  kGujarati,         // E0 AA-AB
  kTamil,            // E0 AE-AF
  kTelugu,           // E0 B0-B1
  kKannada,          // E0 B2-B3
  kMalayalam,        // E0 B4-B5
  kSinhala,          // E0 B6-B7
  kThai,             // E0 B8-B9
  kOtherE0,          // the rest of U+0800-0FFF (Oriya, Lao, Tibetan, ...)
  kMyanmar,          // E1 80-81
  kGeorgian,         // E1 82-83
  kEthiopic,         // E1 88-8D
  kKhmer,            // E1 9E-9F
  kLatinAdditional,  // E1 B8-BB: Vietnamese
  kOtherE1,          // the rest of U+1000-1FFF
  kGeneralPunct,     // E2 80-81: ’ “ ” … • and friends
  kSymbols,          // E2 82-BF: currency, arrows, math, box drawing, dingbats
  kCjkPunct,         // E3 80: 、。「」
  kKana,             // E3 81-83
  kOtherE3,          // E3 84-BF
  kCjk,              // E4-E9
  kHangul,           // EA-ED
  kSpecial,          // EE-EF
  kAstral,           // F0-FF
  kScriptCount,
};

// The script of a 2- or 4-byte character from its lead byte.
inline constexpr std::array<std::uint8_t, 256> kLeadScript = [] {
  std::array<std::uint8_t, 256> table{};
  for (unsigned b = 0; b < 256; ++b) {
    Script s = kOther2;
    if (b >= 0xc2 && b <= 0xc3) {
      s = kLatin1;
    } else if (b >= 0xc4 && b <= 0xcb) {
      s = kLatinExtended;
    } else if (b >= 0xcc && b <= 0xcd) {
      s = kCombining;
    } else if (b >= 0xce && b <= 0xcf) {
      s = kGreek;
    } else if (b >= 0xd0 && b <= 0xd4) {
      s = kCyrillic;
    } else if (b >= 0xd5 && b <= 0xd6) {
      s = kArmenian;
    } else if (b == 0xd7) {
      s = kHebrew;
    } else if (b >= 0xd8 && b <= 0xdb) {
      s = kArabic;
    } else if (b >= 0xf0) {
      s = kAstral;
    }
    table[b] = s;
  }
  return table;
}();

// The script of a 3-byte character from its lead class and second byte.
constexpr Script script_of_3byte(unsigned lead_class, unsigned second) noexcept {
  const auto in = [second](unsigned lo, unsigned hi) { return second >= lo && second <= hi; };
  switch (lead_class) {
    case kLead3E0:
      if (in(0xa4, 0xa5)) return kDevanagari;
      if (in(0xa6, 0xa7)) return kBengali;
      if (in(0xa8, 0xa9)) return kGurmukhi;
      if (in(0xaa, 0xab)) return kGujarati;
      if (in(0xae, 0xaf)) return kTamil;
      if (in(0xb0, 0xb1)) return kTelugu;
      if (in(0xb2, 0xb3)) return kKannada;
      if (in(0xb4, 0xb5)) return kMalayalam;
      if (in(0xb6, 0xb7)) return kSinhala;
      if (in(0xb8, 0xb9)) return kThai;
      return kOtherE0;
    case kLead3E1:
      if (in(0x80, 0x81)) return kMyanmar;
      if (in(0x82, 0x83)) return kGeorgian;
      if (in(0x88, 0x8d)) return kEthiopic;
      if (in(0x9e, 0x9f)) return kKhmer;
      if (in(0xb8, 0xbb)) return kLatinAdditional;
      return kOtherE1;
    case kLead3E2:
      return in(0x80, 0x81) ? kGeneralPunct : kSymbols;
    case kLead3E3:
      if (second == 0x80) return kCjkPunct;
      if (in(0x81, 0x83)) return kKana;
      return kOtherE3;
    case kLead3Cjk:
      return kCjk;
    case kLead3Hangul:
      return kHangul;
    default:
      return kSpecial;
  }
}

constexpr bool is_lead3(unsigned byte_class) noexcept {
  return byte_class >= kLead3E0 && byte_class <= kLead3Special;
}

// ---- invalid UTF-8 (fixed, not calibrated) ----------------------------------------------------
// A character is charged at one byte (its lead, or the second byte of a 3-byte one), so bytes
// that belong to no character would cost nothing: a megabyte of stray continuation bytes, or of
// 3-byte leads, would be estimated at 0 tokens and pass any budget. The client
// decodes each such byte to U+FFFD, at least a token. Two cases are told by the byte pair alone:
//  - a continuation byte after an ASCII byte, or a byte other than a continuation after a 3-byte
//    lead: certainly invalid, kStrayByteWeight;
//  - a continuation byte after a continuation byte: the third (or fourth) byte of a valid
//    character, or a stray one in a run. Each is charged kContinuationRunWeight, and valid
//    characters give it back at the byte that carries their weight (3-byte characters once,
//    4-byte ones twice), so valid text costs exactly what the calibration fitted.
inline constexpr double kStrayByteWeight = 1.0;
inline constexpr double kContinuationRunWeight = 0.25;  // at most the smallest 3-byte weight

// Continuation bytes that follow a continuation byte in a valid character of `script`.
constexpr unsigned continuation_runs_in(std::size_t script) noexcept {
  if (script <= kOther2) return 0;
  return script == kAstral ? 2 : 1;
}

// Names used by `estimate_tokens_cli --counts` and scripts/calibrate-estimator.mjs.
inline constexpr std::array<std::string_view, kGroups> kGroupNames = {
    "lower", "upper",      "digit",     "space", "newline",  "other_space",
    "quote", "json_punct", "backslash", "punct", "non_ascii"};
inline constexpr std::array<std::string_view, kScriptCount> kScriptNames = {
    "latin1",           "latin_extended", "combining",     "greek",
    "cyrillic",         "armenian",       "hebrew",        "arabic",
    "other_2byte",      "devanagari",     "bengali",       "gurmukhi",
    "gujarati",         "tamil",          "telugu",        "kannada",
    "malayalam",        "sinhala",        "thai",          "other_e0",
    "myanmar",          "georgian",       "ethiopic",      "khmer",
    "latin_additional", "other_e1",       "general_punct", "symbols",
    "cjk_punct",        "kana",           "other_e3",      "cjk",
    "hangul",           "special",        "astral"};

// The model's inputs for a text: what the calibration fits and TokenCounter prices.
struct Features {
  std::uint64_t bytes = 0;
  std::array<std::uint64_t, kAsciiClasses> ascii_bytes{};  // bytes per ASCII class
  // Per ASCII byte with a repeat weight, the times it follows itself (not in ascii_bytes then).
  std::array<std::uint64_t, kRepeatWeights> repeats{};
  std::array<std::array<std::uint64_t, kGroups>, kGroups> runs{};  // [from][to] group changes
  std::array<std::uint64_t, kScriptCount> chars{};                 // multi-byte characters
  std::uint64_t stray_bytes = 0;        // invalid UTF-8 told by the pair (see kStrayByteWeight)
  std::uint64_t continuation_runs = 0;  // continuation bytes after continuation bytes

  // Counts `text` as the continuation of whatever was counted before; `last_byte` is the byte
  // before `text` (kStartByte at the start) and is updated.
  void add(std::string_view text, std::uint8_t& last_byte) noexcept;
};

// Fixed-point token units: TokenCounter sums weights in 1/kUnit tokens.
inline constexpr std::uint64_t kUnit = 4096;

// The calibrated weight of `features` in 1/kUnit tokens: exactly what TokenCounter sums over
// the same text (both round each coefficient to the unit the same way).
std::uint64_t weight_of(const Features& features) noexcept;

}  // namespace ctxguard::budget::detail
