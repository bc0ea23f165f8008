#include "support/text_scan.hpp"

#include <algorithm>
#include <cstddef>
#include <random>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "support/most_that_fit.hpp"

using ctxguard::most_that_fit;
using ctxguard::text::past_closing_marks;
using ctxguard::text::sentence_stop_at;

TEST_CASE("text scan: a sentence stop is '.', '!', '?' or a CJK full stop") {
  constexpr std::string_view text = "a. b! c? d。e！f？g、h";
  CHECK(sentence_stop_at(text, 1).length == 1);
  CHECK_FALSE(sentence_stop_at(text, 1).wide);
  CHECK(sentence_stop_at(text, 4).length == 1);
  CHECK(sentence_stop_at(text, 7).length == 1);
  const std::size_t full_stop = text.find("。");
  CHECK(sentence_stop_at(text, full_stop).length == 3);
  CHECK(sentence_stop_at(text, full_stop).wide);
  CHECK(sentence_stop_at(text, text.find("！")).length == 3);
  CHECK(sentence_stop_at(text, text.find("？")).length == 3);
  // The ideographic comma shares the full stop's lead byte and stops nothing.
  CHECK(sentence_stop_at(text, text.find("、")).length == 0);
  CHECK(sentence_stop_at(text, 0).length == 0);
  CHECK(sentence_stop_at(text, text.size()).length == 0);
  // A stop cut short at the end of the text is none.
  CHECK(sentence_stop_at("\xE3\x80", 0).length == 0);
}

TEST_CASE("text scan: closing marks after a stop are skipped up to the caller's count") {
  constexpr std::string_view text = "end.\")] next";
  CHECK(past_closing_marks(text, 4, "\"')]", 1) == 5);
  CHECK(past_closing_marks(text, 4, "\"')]", 2) == 6);
  CHECK(past_closing_marks(text, 4, "\"')]", std::string_view::npos) == 7);
  CHECK(past_closing_marks(text, 4, ")", std::string_view::npos) == 4);  // '"' is not one
  CHECK(past_closing_marks(text, text.size(), "\"", 5) == text.size());
}

TEST_CASE("most that fit: the largest count a monotone test accepts, above the floor") {
  std::mt19937 random(3);
  for (int round = 0; round < 2000; ++round) {
    const std::size_t low = random() % 50;
    const std::size_t high = low + random() % 200;
    const std::size_t last_fitting = random() % 300;  // fits(n) for every n <= last_fitting
    std::vector<std::size_t> asked;
    const std::size_t found = most_that_fit(low, high, [&](std::size_t n) {
      asked.push_back(n);
      return n <= last_fitting;
    });
    CAPTURE(low, high, last_fitting);
    CHECK(found == std::clamp(last_fitting, low, high));
    // Never asks about the floor or past the ceiling; each try lies above every one that fit
    // and below every one that did not (callers build a try on the last one that fit).
    std::size_t fit_so_far = low;
    std::size_t failed_so_far = high + 1;
    for (const std::size_t n : asked) {
      CHECK(n > fit_so_far);
      CHECK(n < failed_so_far);
      (n <= last_fitting ? fit_so_far : failed_so_far) = n;
    }
    CHECK(asked.size() <= 9);  // ceil(log2(200)) + 1
  }
}
