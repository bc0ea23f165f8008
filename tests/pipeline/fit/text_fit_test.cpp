#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "budget/token_estimator.hpp"
#include "pipeline/fit/fitter.hpp"
#include "pipeline/fit/text_fit.hpp"
#include "pipeline/text/text_cut.hpp"

using ctxguard::pipeline::AnswerSize;
using ctxguard::pipeline::Cost;
using ctxguard::pipeline::FitBudget;
using ctxguard::pipeline::TextReserve;

namespace {

// Lines of prose-like text, about 10 tokens each.
std::string lines_of_text(std::size_t lines) {
  std::string text;
  for (std::size_t line = 0; line < lines; ++line) {
    text += "line " + std::to_string(line) + " holds item" + std::to_string(line * 7919 % 10007) +
            " and a few words\n";
  }
  return text;
}

// An answer showing a piece of `text` cut to the room it is given, with a trailer that costs
// `trailer_tokens` (whatever was reserved for it), measured for real.
struct PieceAnswer {
  PieceAnswer(std::string whole, FitBudget limits, std::size_t trailer)
      : text(std::move(whole)), budget(limits), trailer_tokens(trailer) {}

  std::string text;
  FitBudget budget;
  std::size_t trailer_tokens = 0;
  std::vector<TextReserve> reserves;  // what each round was given
  std::vector<AnswerSize> sizes;      // what each round measured
  std::size_t end = 0;

  AnswerSize operator()(const TextReserve& reserve) {
    reserves.push_back(reserve);
    end = ctxguard::pipeline::cut_text(text, 0, ctxguard::pipeline::text_room(budget, reserve));
    const std::string_view piece = std::string_view(text).substr(0, end);
    const auto breaks = static_cast<std::size_t>(std::count(piece.begin(), piece.end(), '\n'));
    // The text ends its last line: its lines and the trailer's, as a client counts them.
    return sizes.emplace_back(
        AnswerSize{.tokens = ctxguard::budget::estimate_tokens(piece) + trailer_tokens,
                   .chars = piece.size() + 400,
                   .bytes = piece.size() + 400,
                   .lines = breaks + 2});
  }
};

}  // namespace

TEST_CASE("text fit: a trailer is reserved in every unit limited, never more than half") {
  const FitBudget budget{.tokens = 4000, .chars = 8000, .bytes = 0, .lines = 100};
  const TextReserve reserve = TextReserve::for_trailers(budget, 160, 700);
  using ctxguard::pipeline::kWayOnChars;
  using ctxguard::pipeline::kWayOnTokens;
  // The trailer and the way on before the text.
  REQUIRE(reserve.cost.tokens == 160 + kWayOnTokens);
  // The newline joining each to the text is one more character, and a line.
  REQUIRE(reserve.cost.chars == 701 + kWayOnChars + 1);
  REQUIRE(reserve.cost.bytes == 0);
  REQUIRE(reserve.lines == 2);
  // Three trailers, three times as much, and one way on.
  REQUIRE(TextReserve::for_trailers(budget, 160, 700, 3).cost.tokens == 480 + kWayOnTokens);
  // A small budget keeps half for the text.
  REQUIRE(TextReserve::for_trailers({.tokens = 200}, 160, 700).cost.tokens == 100);
  const FitBudget room = ctxguard::pipeline::text_room(budget, reserve);
  REQUIRE(room.tokens == 4000 - 160 - kWayOnTokens);
  REQUIRE(room.chars == 8000 - 701 - kWayOnChars - 1);
  REQUIRE(room.bytes == 0);
  REQUIRE(room.lines == 98);
}

TEST_CASE("text fit: the room never falls below the smallest piece worth showing") {
  const FitBudget budget{.tokens = 4000, .chars = 8000, .bytes = 300, .lines = 100};
  const TextReserve everything{.cost = Cost{.tokens = 1e6, .chars = 1e6, .bytes = 1e6},
                               .lines = 1000};
  const FitBudget room = ctxguard::pipeline::text_room(budget, everything);
  REQUIRE(room.tokens == ctxguard::pipeline::kSmallestTextTokens);
  REQUIRE(room.chars == ctxguard::pipeline::kSmallestTextChars);
  REQUIRE(room.bytes == 150);  // half the limit, when that is less
  REQUIRE(room.lines == ctxguard::pipeline::kSmallestTextLines);
}

TEST_CASE("text fit: an answer within the budget is written once") {
  PieceAnswer answer(lines_of_text(50), {.tokens = 4000}, 150);
  const auto result = ctxguard::pipeline::fit_text(
      answer.budget, TextReserve::for_trailers(answer.budget, 160, 700), std::ref(answer));
  REQUIRE(result.fitted);
  REQUIRE(result.rounds == 1);
  REQUIRE(answer.end == answer.text.size());
}

TEST_CASE("text fit: a trailer larger than reserved is corrected as the JSON levels correct") {
  // 300 tokens reserved (a trailer's 160, the way on's 140), 840 taken: the first answer is
  // over by about 540.
  PieceAnswer answer(lines_of_text(2000), {.tokens = 2000}, 840);
  const TextReserve first = TextReserve::for_trailers(answer.budget, 160, 700);
  const auto result = ctxguard::pipeline::fit_text(answer.budget, first, std::ref(answer));
  REQUIRE(result.fitted);
  REQUIRE(result.rounds == 2);
  REQUIRE(result.size.tokens <= 2000);
  // The second round set aside what the first came out over, by overshoot_after's rule.
  REQUIRE(answer.sizes.front().tokens > 2000 + 500);
  const Cost expected =
      ctxguard::pipeline::overshoot_after(first.cost, answer.sizes.front(), answer.budget);
  REQUIRE(answer.reserves.back().cost.tokens == expected.tokens);
  // Not cut to nothing: the text takes most of what the trailer leaves.
  REQUIRE(result.size.tokens > 2000 * 3 / 4);
}

TEST_CASE("text fit: lines over are set aside exactly, the other units stand") {
  PieceAnswer answer(lines_of_text(500), {.tokens = 100'000, .lines = 40}, 100);
  // The trailer's line is not reserved: the first answer is one line over.
  const auto result = ctxguard::pipeline::fit_text(answer.budget, TextReserve{}, std::ref(answer));
  REQUIRE(result.fitted);
  REQUIRE(result.size.lines == 40);
  REQUIRE(answer.reserves.back().lines == 1);
  REQUIRE(answer.reserves.back().cost.tokens == 0);
}

TEST_CASE("text fit: a piece that can shrink no further stands; the rounds are bounded") {
  int writes = 0;
  // Always the same answer, over: the second round changes nothing, and the fit stops there.
  const FitBudget budget{.tokens = 1000};
  const auto same = ctxguard::pipeline::fit_text(budget, TextReserve{}, [&](const TextReserve&) {
    ++writes;
    return AnswerSize{.tokens = 1500};
  });
  REQUIRE_FALSE(same.fitted);
  REQUIRE(same.rounds == 2);
  REQUIRE(writes == 2);
  REQUIRE(same.size.tokens == 1500);
  // Always a little smaller, never within: kPlanningRounds answers at most.
  std::size_t tokens = 2000;
  const auto shrinking = ctxguard::pipeline::fit_text(
      budget, TextReserve{}, [&](const TextReserve&) { return AnswerSize{.tokens = tokens--}; });
  REQUIRE_FALSE(shrinking.fitted);
  REQUIRE(shrinking.rounds == ctxguard::pipeline::kPlanningRounds);
}
