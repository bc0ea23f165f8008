#pragma once
// `ctxguard_fetch`: the tool ctxguard answers itself, from the cache, never forwarding it.
//
// Input: {cursor (required), limit?, fields?}. Array cursors give {"items": [...],
// "_ctxguard": {...}} pages within the token budget (fewer items when a page would be too large,
// nested long arrays cut with cursors of their own); text cursors give the next piece of the
// text and a trailing {"_ctxguard": {...}} item. Problems the caller can fix (bad arguments, a
// malformed, tampered, expired or evicted cursor) are tool results with isError and one line
// saying what happened — never protocol errors.

#include <chrono>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/result_pipeline.hpp"

namespace ctxguard::pipeline {

struct FetchAnswer {
  boost::json::object result;  // a CallToolResult
  CallRecord record;           // tool = the fetch tool; stages = {"fetch"} or {"fetch-error"}
};

class FetchTool {
 public:
  FetchTool(const config::BudgetSettings& budget, const cursor::CursorCodec& codec,
            ResultCache& cache)
      : budget_(budget), codec_(codec), cache_(cache) {}

  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& name() const { return name_; }

  // Answers one call; `arguments` is the call's `arguments` (null when absent).
  FetchAnswer answer(const boost::json::value& arguments, std::chrono::steady_clock::time_point now,
                     std::chrono::system_clock::time_point wall_now) const;

 private:
  // Fills `answer` with the piece of `text` from byte `begin` that fits the budget and a trailing
  // {"_ctxguard": ...} item (with `extra` members) whose cursor continues at the piece's end.
  void answer_text(FetchAnswer& answer, std::string_view text, std::size_t begin, std::size_t part,
                   const std::string& path, const CursorIssuer& issuer,
                   boost::json::object extra) const;

  const config::BudgetSettings& budget_;
  const cursor::CursorCodec& codec_;
  ResultCache& cache_;
  std::string name_{"ctxguard_fetch"};
};

}  // namespace ctxguard::pipeline
