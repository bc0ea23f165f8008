#include "budget/answer_size.hpp"

#include <algorithm>
#include <cstring>

#include "support/json_writer.hpp"

namespace ctxguard::budget {

namespace {

// UTF-16 code units a UTF-8 byte starts: none for a continuation byte, two for the lead of a
// 4-byte sequence (a surrogate pair), one otherwise.
constexpr std::size_t units_of(unsigned char byte) {
  if ((byte & 0xC0) == 0x80) return 0;
  return byte >= 0xF0 ? 2 : 1;
}

// `size` / `limit` as a fraction, 0 for no limit.
double share(std::size_t size, std::size_t limit) {
  return limit == 0 ? 0.0 : static_cast<double>(size) / static_cast<double>(limit);
}

}  // namespace

std::string_view to_string(SizeUnit unit) {
  switch (unit) {
    case SizeUnit::kTokens:
      return "tokens";
    case SizeUnit::kChars:
      return "chars";
    case SizeUnit::kBytes:
      return "bytes";
    case SizeUnit::kLines:
      return "lines";
    case SizeUnit::kJsonBytes:
      return "json_bytes";
  }
  return "tokens";
}

FitBudget FitBudget::of(const config::BudgetSettings& settings) {
  const std::size_t json_bytes = settings.max_json_bytes;
  const std::size_t bytes = settings.max_bytes == 0 || json_bytes == 0
                                ? std::max(settings.max_bytes, json_bytes)
                                : std::min(settings.max_bytes, json_bytes);
  return {.tokens = settings.token_budget,
          .chars = settings.max_chars,
          .bytes = bytes,
          .lines = settings.max_lines,
          .json_bytes = json_bytes};
}

FitBudget FitBudget::cap_of(const config::BudgetSettings& settings) {
  FitBudget cap = of(settings);
  cap.tokens = settings.hard_cap;
  return cap;
}

bool fits(const AnswerSize& size, const FitBudget& budget) {
  return size.tokens <= budget.tokens && (budget.chars == 0 || size.chars <= budget.chars) &&
         (budget.bytes == 0 || size.bytes <= budget.bytes) &&
         (budget.lines == 0 || size.lines <= budget.lines) &&
         (budget.json_bytes == 0 || size.json_bytes <= budget.json_bytes);
}

LimitShare tightest_limit(const AnswerSize& size, const FitBudget& budget) {
  LimitShare tightest{.unit = SizeUnit::kTokens, .share = share(size.tokens, budget.tokens)};
  const auto consider = [&](SizeUnit candidate, std::size_t measured, std::size_t limit) {
    const double ratio = share(measured, limit);
    if (ratio > tightest.share) tightest = {.unit = candidate, .share = ratio};
  };
  consider(SizeUnit::kChars, size.chars, budget.chars);
  consider(SizeUnit::kBytes, size.bytes, budget.bytes);
  consider(SizeUnit::kLines, size.lines, budget.lines);
  consider(SizeUnit::kJsonBytes, size.json_bytes, budget.json_bytes);
  return tightest;
}

void TextMeasure::add_item(std::string_view text) {
  // The '\n' joining this item to the one before is one more character, byte and line.
  const std::size_t join = any_ ? 1 : 0;
  any_ = true;
  size_.chars += utf16_length(text) + join;
  size_.bytes += text.size() + join;
  size_.lines += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  // [item] or [item,item...]: the brackets come with the first item, a comma with each other.
  size_.json_bytes += json_string_size(text) + kJsonTextItemBytes + (join == 0 ? 2 : 1);
}

std::size_t utf16_length(std::string_view text) {
  std::size_t units = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* const end = p + text.size();
  // ASCII runs 8 bytes at a time: most text is ASCII, and every byte of it is one unit.
  constexpr std::uint64_t kHigh = 0x8080808080808080;
  while (end - p >= 8) {
    std::uint64_t block;
    std::memcpy(&block, p, sizeof block);
    if ((block & kHigh) == 0) {
      units += 8;
      p += 8;
      continue;
    }
    for (int i = 0; i < 8; ++i) units += units_of(p[i]);
    p += 8;
  }
  for (; p != end; ++p) units += units_of(*p);
  return units;
}

std::size_t prefix_within(std::string_view text, std::size_t begin, const FitBudget& limits) {
  begin = std::min(begin, text.size());
  std::size_t end = text.size();
  if (limits.bytes != 0) end = std::min(end, begin + limits.bytes);
  if (limits.lines != 0) {
    // Fewer than `lines` line breaks: the prefix ends before the lines-th.
    std::size_t breaks = 0;
    for (std::size_t at = begin; at < end; ++at) {
      if (text[at] == '\n' && ++breaks == limits.lines) {
        end = at;
        break;
      }
    }
  }
  if (limits.chars != 0) {
    std::size_t units = 0;
    for (std::size_t at = begin; at < end; ++at) {
      units += units_of(static_cast<unsigned char>(text[at]));
      if (units > limits.chars) {
        end = at;
        break;
      }
    }
  }
  if (limits.json_bytes != 0) {
    std::size_t written = 0;
    for (std::size_t at = begin; at < end; ++at) {
      const char escape = kJsonEscapes[static_cast<unsigned char>(text[at])];
      written += escape == 0 ? 1 : escape == 'u' ? 6 : 2;
      if (written > limits.json_bytes) {
        end = at;
        break;
      }
    }
  }
  // Never inside a UTF-8 sequence: back to the start of the character the limit fell in.
  while (end > begin && end < text.size() &&
         (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  return end;
}

}  // namespace ctxguard::budget
