#pragma once
// `ctxguard_fetch`: the tool ctxguard answers itself, from the cache, never forwarding it.
//
// Input: {cursor (required), limit?, fields?, path?, startLine?, endLine?, query?}.
//   - array cursors give {"items": [...], "_ctxguard": {...}} pages within the token budget
//     (nested long arrays cut, then long strings and deep values cut, then records projected,
//     then fewer items; `fields` projects explicitly);
//   - `path` (with any cursor of a JSON result, typically _ctxguard.resultCursor) gives the value
//     there: a string as text, an array as pages, an object laid out like a page;
//   - `query` finds items of a cached array, or lines of a cached text (paginated);
//   - text cursors give the next chunk, or the next piece of the text; `startLine`/`endLine`
//     give exactly those lines (1-based, inclusive) within the budget;
// always with a trailing {"_ctxguard": {...}} item for text. Problems the caller can fix (bad
// arguments, a malformed, tampered, expired or evicted cursor) are tool results with isError and
// one line saying what happened — never protocol errors.

#include <chrono>
#include <string>

#include <boost/json/object.hpp>

#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/fetch/fetch_request.hpp"
#include "pipeline/rewrite/result_pipeline.hpp"

namespace ctxguard::pipeline {

struct FetchAnswer {
  boost::json::object result;  // a CallToolResult
  CallRecord record;           // tool = the fetch tool; stages = {"fetch"} or {"fetch-error"}
};

class FetchTool {
 public:
  // `names`: ctxguard's tools as the client knows them (mcp::ToolListEditor keeps them).
  FetchTool(const cursor::CursorCodec& codec, ResultCache& cache, const mcp::OwnToolNames& names)
      : codec_(codec), cache_(cache), names_(names) {}

  const std::string& name() const { return names_.fetch; }

  // Answers one call; `arguments` is the call's `arguments` (null when absent). A page of a
  // tool's result is laid out with `settings_for` that tool (its budget, page sizes, switches).
  FetchAnswer answer(const boost::json::value& arguments, const SettingsFor& settings_for,
                     std::chrono::steady_clock::time_point now,
                     std::chrono::system_clock::time_point wall_now);

 private:
  // The answer refusing a call: `tool` names it in telemetry.
  FetchAnswer refused(std::string tool, const FetchRefusal& refusal) const;

  const cursor::CursorCodec& codec_;
  ResultCache& cache_;
  const mcp::OwnToolNames& names_;
};

}  // namespace ctxguard::pipeline
