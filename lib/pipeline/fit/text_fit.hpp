#pragma once
// The text side of the fit engine (docs/protocol.md 2.5 and 5.3). An answer that shows text — a
// first answer cut at the hard cap, a range of lines, the matches of a search, a piece of a long
// value — takes what its budget leaves after what it sets aside (its `_ctxguard` items), is
// written and measured, and while it comes out over is written again with the correction the
// JSON levels use (overshoot_after) set aside too. Where the text is cut is the caller's (whole
// lines, whole matches, text_cut); how much room it has and when to stop are decided here.

#include <cstddef>
#include <functional>

#include "budget/answer_size.hpp"
#include "pipeline/fit/paginate.hpp"

namespace ctxguard::pipeline {

using budget::AnswerSize;
using budget::FitBudget;

// What a text answer sets aside in each unit for what is not its text.
struct TextReserve {
  Cost cost;  // tokens, characters, bytes
  std::size_t lines = 0;

  // For `items` trailing `_ctxguard` items of about `tokens` and `chars` each (characters and
  // bytes, with the '\n' joining each to the text before it, and a line each) and the way on
  // before the text, never more than half of a limit: a small budget still shows a useful piece.
  static TextReserve for_trailers(const FitBudget& budget, std::size_t tokens, std::size_t chars,
                                  std::size_t items = 1);
  // Sets aside what an answer measured `measured` came out over `budget`, in each unit it was
  // over: overshoot_after for the estimated and planned units, lines exactly (a cut removes
  // whole lines and a line is a line).
  void correct(const AnswerSize& measured, const FitBudget& budget);
};

// Below this a piece of text is not worth shrinking further: it goes out as it is.
inline constexpr std::size_t kSmallestTextTokens = 64;
inline constexpr std::size_t kSmallestTextChars = 256;
inline constexpr std::size_t kSmallestTextLines = 2;

// The room one piece of text has in `budget` after `reserve`: each limit less its reserve, but
// never below the kSmallestText* floor of its unit (or half the limit, when that is less).
// Limits not set stay 0.
FitBudget text_room(const FitBudget& budget, const TextReserve& reserve);

// Writes the answer with its text within what `reserve` leaves of the budget, and measures it.
using TextRender = std::function<AnswerSize(const TextReserve& reserve)>;

struct TextFitResult {
  AnswerSize size;  // of the answer last written (the one that goes out)
  bool fitted = false;
  int rounds = 0;  // answers written
};

// Writes the answer with `reserve` set aside, then while it comes out over `budget`, again with
// the correction set aside too: until it fits, a round writes the same answer as the one before
// (the text can shrink no further), or kPlanningRounds answers were written.
TextFitResult fit_text(const FitBudget& budget, TextReserve reserve, const TextRender& render);

}  // namespace ctxguard::pipeline
