#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "budget/token_estimator.hpp"
#include "pipeline/text/text_cut.hpp"

using ctxguard::budget::estimate_tokens;
using ctxguard::pipeline::cut_text;

TEST_CASE("text cut: text that fits is taken whole") {
  REQUIRE(cut_text("short text", 0, {.tokens = 100}) == 10);
  REQUIRE(cut_text("short text", 6, {.tokens = 100}) == 10);
}

TEST_CASE("text cut: a piece ends after a line break and stays within its tokens") {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i) + " of the log\n";
  const std::size_t end = cut_text(text, 0, {.tokens = 300});
  REQUIRE(end < text.size());
  REQUIRE(text[end - 1] == '\n');
  REQUIRE(estimate_tokens(std::string_view(text).substr(0, end)) <= 300);
  REQUIRE(estimate_tokens(std::string_view(text).substr(0, end)) > 200);
}

TEST_CASE("text cut: never inside a UTF-8 sequence, and pieces cover the text exactly") {
  std::mt19937 random(11);
  const std::string words[] = {"漢字", "données ", "emoji 😀 ", "plain ", "Ελληνικά "};
  std::string text;
  while (text.size() < 50000) text += words[random() % 5];
  std::string rebuilt;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = cut_text(text, begin, {.tokens = 200});
    REQUIRE(end > begin);
    REQUIRE((end == text.size() || (static_cast<unsigned char>(text[end]) & 0xC0) != 0x80));
    REQUIRE(estimate_tokens(std::string_view(text).substr(begin, end - begin)) <= 200);
    rebuilt += text.substr(begin, end - begin);
    begin = end;
  }
  REQUIRE(rebuilt == text);
}

TEST_CASE("text cut: at least one character even when nothing fits") {
  REQUIRE(cut_text("漢字漢字", 0, {.tokens = 0}) == 3);
}

TEST_CASE("text cut: one character is at most 4 bytes even in invalid UTF-8") {
  // Found by tests/fuzz/chunker_fuzz: a character over the budget was taken together with every
  // stray continuation byte after it (the chunker stops after 3, as UTF-8 allows).
  REQUIRE(cut_text("\xf0\x9f\x98\x80\x80\x80", 0, {.tokens = 0}) == 4);
  REQUIRE(cut_text("a" + std::string(8, '\x80') + "b", 1, {.tokens = 0}) == 5);
}
