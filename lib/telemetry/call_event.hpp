#pragma once
// One record per tools/call, tasks/result, resources/read rewrite and ctxguard_fetch
// (docs/telemetry.md), as ctxguard writes it to --telemetry-file, counts it for
// /metrics and reads it back for `ctxguard stats`. It holds sizes, timings and decisions, never
// a byte of any payload.
//
// One JSON object per line (docs/telemetry.md has the field reference):
//   {"time":"2026-11-22T10:04:05.123Z","id":7,"kind":"call","tool":"list_bookings",
//    "client":"claude-code","mode":"enforce","outcome":"paginated","stages":["compact","paginate"],"budget":4000,
//    "original_tokens":52011,"final_tokens":3871,"reduction_pct":92.56,"original_bytes":180233,
//    "final_bytes":14020,"items_total":500,"items_shown":41,"fill_pct":96.78,"over_budget":true,
//    "pagination_used":true,"summarization_used":false,"chunking_used":false,
//    "compaction_used":true,"proxy_ms":1.234,"server_ms":45.6}
// `server_ms` is absent for fetches (the server is not asked), `client` when the client gave no
// name, `limit` (the client's limit an answer was held to: "tokens", "chars", "bytes" or
// "lines") and `fill_pct` when nothing was rewritten, and `error` present on failed fetches. The
// *_used flags are derived from `stages`; readers may ignore them.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "support/error.hpp"

namespace ctxguard::telemetry {

// A duration as records, logs and reports write it: fractional milliseconds.
inline double milliseconds(std::chrono::nanoseconds value) {
  return std::chrono::duration<double, std::milli>(value).count();
}

enum class CallKind {
  kCall,       // a tools/call answered by the server
  kTask,       // the tasks/result of a task-augmented tools/call
  kResource,   // a resources/read (only long texts are touched)
  kFetch,      // ctxguard_fetch, answered by ctxguard
  kToolsList,  // a whole tools/list (all its pages): what the tools take before any call
};

// The one word a record is filed under (its "outcome"); see outcome_of.
enum class Outcome {
  kPassthrough,  // forwarded as the server sent it
  kCompacted,    // only lossless changes (whitespace, tables)
  kSummarized,   // long values cut, records projected, or the hard cap applied
  kPaginated,    // a long array cut to a page
  kChunked,      // long text served in chunks
  kError,        // the server answered with a JSON-RPC error
  kFetched,      // a ctxguard_fetch answered from the cache
  kFetchFailed,  // a ctxguard_fetch refused: bad cursor or arguments (see CallEvent::error)
};

inline constexpr Outcome kAllOutcomes[] = {
    Outcome::kPassthrough, Outcome::kCompacted, Outcome::kSummarized, Outcome::kPaginated,
    Outcome::kChunked,     Outcome::kError,     Outcome::kFetched,    Outcome::kFetchFailed};

std::string_view to_string(CallKind kind);
std::string_view to_string(Outcome outcome);
std::optional<CallKind> parse_call_kind(std::string_view text);
std::optional<Outcome> parse_outcome(std::string_view text);

// Stage names as the pipeline reports them ("compact", "paginate", "summarize", "project",
// "tables", "hard-cap", "chunk"; "fetch"/"fetch-error" for fetches).
bool used_pagination(const std::vector<std::string>& stages);
bool used_summarization(const std::vector<std::string>& stages);
bool used_chunking(const std::vector<std::string>& stages);
bool used_compaction(const std::vector<std::string>& stages);

// The most telling stage wins: chunked, then paginated, then summarized, then compacted.
Outcome outcome_of(CallKind kind, const std::vector<std::string>& stages);

struct CallEvent {
  std::chrono::system_clock::time_point time;  // when the answer was decided
  boost::json::value id;  // the JSON-RPC request id, as the client sent it (number or string)
  CallKind kind = CallKind::kCall;
  std::string tool;    // fetches: "ctxguard_fetch:<tool of the cached result>" when known
  std::string client;  // the clientInfo.name of the client that asked; empty when unknown
  // The client's limit a rewritten answer was held to ("tokens", "chars", "bytes", "lines"):
  // the one its original was furthest over; empty when nothing was rewritten.
  std::string limit;
  bool observed = false;  // observe mode: final_* are what enforce would have sent
  Outcome outcome = Outcome::kPassthrough;
  std::vector<std::string> stages;
  std::size_t budget = 0;  // the tool's token budget
  std::size_t original_tokens = 0;
  std::size_t final_tokens = 0;
  std::size_t original_bytes = 0;  // the server's line
  std::size_t final_bytes = 0;     // the line sent to the client
  std::size_t items_total = 0;     // items in the arrays that were cut
  std::size_t items_shown = 0;
  // How much of the budget the answer uses, in percent of the limit it comes closest to (the
  // token budget or a client's limit): rewritten first answers and fetches. Absent when nothing
  // was rewritten.
  std::optional<double> fill_pct;
  bool over_budget = false;  // the original exceeded the budget (an oversized attempt)
  std::chrono::nanoseconds proxy_latency{0};               // time spent in ctxguard
  std::optional<std::chrono::nanoseconds> server_latency;  // request in -> response out
  std::string error;  // failed fetches: "expired", "forged", "malformed", ... (see fetch_tool)
  // kToolsList: items_total is the tool count, budget toolListBudget, original_* the server's
  // listing and final_* the client's; the costliest tools as sent, most first, and the
  // instructions' tokens (initialize or server/discover, as sent).
  struct ToolTokens {
    std::string name;
    std::size_t tokens = 0;
  };
  std::vector<ToolTokens> largest_tools;
  std::optional<std::size_t> instructions_tokens;

  // 100 * (1 - final / original) in tokens; 0 when nothing was saved.
  double reduction_percent() const;
};

// The record as one line of JSON, without the newline.
std::string to_json_line(const CallEvent& event);

// A line written by to_json_line (or by hand: only time, kind, tool and outcome are required;
// unknown fields are ignored, so newer files stay readable). Errors: Error::kInvalidJson for a
// line that is not a JSON object, Error::kInvalidRecord for one that is not a record.
Result<CallEvent> parse_call_event(std::string_view line);

// RFC 3339 in UTC with milliseconds ("2026-11-22T10:04:05.123Z").
std::string format_time(std::chrono::system_clock::time_point time);
// RFC 3339 with any offset, or a date alone (midnight UTC); nullopt for anything else.
std::optional<std::chrono::system_clock::time_point> parse_time(std::string_view text);

}  // namespace ctxguard::telemetry
