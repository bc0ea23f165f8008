#include "budget/answer_size.hpp"

#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "budget/token_estimator.hpp"

using ctxguard::budget::AnswerSize;
using ctxguard::budget::FitBudget;
using ctxguard::budget::LimitShare;
using ctxguard::budget::prefix_within;
using ctxguard::budget::SizeUnit;
using ctxguard::budget::TextMeasure;
using ctxguard::budget::utf16_length;

namespace {

// Random text of ASCII, newlines, 2-, 3- and 4-byte characters.
std::string random_text(std::mt19937& random, std::size_t pieces) {
  static const char* const kPieces[] = {"a", "Z", " ", "\n", "\"", "é", "漢", "😀", "0", "{"};
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kPieces) - 1);
  std::string text;
  for (std::size_t i = 0; i < pieces; ++i) text += kPieces[pick(random)];
  return text;
}

}  // namespace

TEST_CASE("answer size: characters are UTF-16 code units, as JavaScript counts them") {
  REQUIRE(utf16_length("") == 0);
  REQUIRE(utf16_length("abc") == 3);
  REQUIRE(utf16_length("é") == 1);   // 2 bytes
  REQUIRE(utf16_length("漢") == 1);  // 3 bytes
  REQUIRE(utf16_length("😀") == 2);   // 4 bytes: a surrogate pair
  // Long ASCII runs go 8 bytes at a time; a character across a block boundary still counts once.
  REQUIRE(utf16_length(std::string(13, 'x') + "é" + std::string(20, 'y')) == 34);
}

TEST_CASE("answer size: text items are measured joined by newlines") {
  TextMeasure measure;
  measure.add_item("a\nb");  // 2 lines
  measure.add_item("😀");     // joined: one more character, byte and line
  const AnswerSize& size = measure.size();
  REQUIRE(size.chars == 3 + 1 + 2);
  REQUIRE(size.bytes == 3 + 1 + 4);
  REQUIRE(size.lines == 3);
  TextMeasure trailing;
  trailing.add_item("a\n");  // split("\n") gives two lines
  REQUIRE(trailing.size().lines == 2);
}

TEST_CASE("answer size: JSON bytes are the text items' content array, serialized") {
  TextMeasure measure;
  measure.add_item("say \"hi\"\n");
  // [{"type":"text","text":"say \"hi\"\n"}]
  const std::string one = R"([{"type":"text","text":"say \"hi\"\n"}])";
  REQUIRE(measure.size().json_bytes == one.size());
  measure.add_item(std::string("\x01\xC3\xA9", 3));  // a control byte is \u0001, é is as is
  const std::string two = one.substr(0, one.size() - 1) + R"(,{"type":"text","text":"\u0001é"}])";
  REQUIRE(measure.size().json_bytes == two.size());
}

TEST_CASE("answer size: an answer fits when it is within every limit set") {
  const FitBudget budget{.tokens = 100, .chars = 400, .bytes = 0, .lines = 10};
  REQUIRE(fits(AnswerSize{.tokens = 100, .chars = 400, .bytes = 99'999, .lines = 10}, budget));
  REQUIRE_FALSE(fits(AnswerSize{.tokens = 101, .chars = 1, .bytes = 1, .lines = 1}, budget));
  REQUIRE_FALSE(fits(AnswerSize{.tokens = 1, .chars = 401, .bytes = 1, .lines = 1}, budget));
  REQUIRE_FALSE(fits(AnswerSize{.tokens = 1, .chars = 1, .bytes = 1, .lines = 11}, budget));
  // The limit that bound: the one furthest over, relative to itself; tokens on a tie.
  REQUIRE(tightest_limit({.tokens = 200, .chars = 1200, .lines = 5}, budget).unit ==
          SizeUnit::kChars);
  REQUIRE(tightest_limit({.tokens = 200, .chars = 800, .lines = 5}, budget).unit ==
          SizeUnit::kTokens);
  const LimitShare lines = tightest_limit({.tokens = 10, .chars = 10, .lines = 50}, budget);
  REQUIRE(lines.unit == SizeUnit::kLines);
  REQUIRE(lines.share == 5.0);
  // An answer's fill: the share of the limit it comes closest to.
  const LimitShare fill = tightest_limit({.tokens = 90, .chars = 380, .lines = 4}, budget);
  REQUIRE(fill.unit == SizeUnit::kChars);
  REQUIRE(fill.share == 0.95);
  REQUIRE(to_string(SizeUnit::kBytes) == "bytes");
}

TEST_CASE("answer size: a prefix within limits stops at the first limit, on a character") {
  const std::string text = "ab\ncd\nef😀gh";
  REQUIRE(prefix_within(text, 0, {}) == text.size());
  REQUIRE(prefix_within(text, 0, {.bytes = 4}) == 4);
  REQUIRE(prefix_within(text, 0, {.lines = 2}) == 5);  // before the second line break
  REQUIRE(prefix_within(text, 3, {.lines = 1}) == 5);
  // The emoji takes bytes 8-11 and 2 units: 9 units end before it, a byte cut backs off to it.
  REQUIRE(prefix_within(text, 0, {.chars = 9}) == 8);
  REQUIRE(prefix_within(text, 0, {.chars = 10}) == 12);
  REQUIRE(prefix_within(text, 0, {.bytes = 10}) == 8);
  // As JSON each line break is two bytes: the 7 bytes "ab\ncd\ne" are 9, and the emoji after
  // "ef" (10) takes 4 more.
  REQUIRE(prefix_within(text, 0, {.json_bytes = 9}) == 7);
  REQUIRE(prefix_within(text, 0, {.json_bytes = 13}) == 8);
  REQUIRE(prefix_within(text, 0, {.json_bytes = 14}) == 12);
}

TEST_CASE("answer size: a JSON byte limit is planned as bytes, and binds on its own") {
  ctxguard::config::BudgetSettings settings;
  settings.max_json_bytes = 12000;
  REQUIRE(FitBudget::of(settings).bytes == 12000);
  REQUIRE(FitBudget::of(settings).json_bytes == 12000);
  settings.max_bytes = 9000;
  REQUIRE(FitBudget::of(settings).bytes == 9000);
  settings.max_bytes = 30000;
  REQUIRE(FitBudget::of(settings).bytes == 12000);
  const FitBudget budget = FitBudget::of(settings);
  REQUIRE(fits(AnswerSize{.tokens = 1, .bytes = 11000, .json_bytes = 12000}, budget));
  REQUIRE_FALSE(fits(AnswerSize{.tokens = 1, .bytes = 11000, .json_bytes = 12001}, budget));
  REQUIRE(tightest_limit({.tokens = 1, .bytes = 11000, .json_bytes = 13000}, budget).unit ==
          SizeUnit::kJsonBytes);
  REQUIRE(to_string(SizeUnit::kJsonBytes) == "json_bytes");
}

TEST_CASE("answer size: property: the estimator's character count is the exact one") {
  std::mt19937 random(19);
  for (int round = 0; round < 300; ++round) {
    const std::string text = random_text(random, 1 + round * 3);
    ctxguard::budget::TokenCounter counter(true);
    counter.add(text);
    REQUIRE(counter.chars() == utf16_length(text));
    ctxguard::budget::TokenCounter estimate_only;
    estimate_only.add(text);
    REQUIRE(estimate_only.tokens() == counter.tokens());
    REQUIRE(counter.bytes() == text.size());
    // A prefix within random limits is within them, and one character more is not.
    const FitBudget limits{.tokens = 0,
                           .chars = 1 + random() % 60,
                           .bytes = 1 + random() % 90,
                           .lines = 1 + random() % 8,
                           .json_bytes = 1 + random() % 90};
    const std::size_t end = prefix_within(text, 0, limits);
    TextMeasure measure;
    measure.add_item(std::string_view(text).substr(0, end));
    REQUIRE(measure.size().chars <= limits.chars);
    REQUIRE(measure.size().bytes <= limits.bytes);
    REQUIRE(measure.size().lines <= limits.lines);
    // JSON bytes of the text alone: the measure's less the item around it.
    const std::size_t around = ctxguard::budget::kJsonTextItemBytes + 2 + 2;
    REQUIRE(measure.size().json_bytes - around <= limits.json_bytes);
    if (end < text.size()) {  // one more character passes some limit
      std::size_t next = end + 1;
      while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
      TextMeasure more;
      more.add_item(std::string_view(text).substr(0, next));
      const AnswerSize& size = more.size();
      REQUIRE((size.chars > limits.chars || size.bytes > limits.bytes ||
               size.lines > limits.lines || size.json_bytes - around > limits.json_bytes));
    }
  }
}
