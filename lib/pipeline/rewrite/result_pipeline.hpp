#pragma once
// The context budget pipeline for one tools/call result (docs/protocol.md, sections 1-4).
//
// A result whose estimated tokens are at or under the budget is not touched: the caller forwards
// the server's bytes. Above it, stages run in order until the result fits: lossless compaction
// (JSON text re-written minified), then pagination of long arrays with cursors into the cache.
// Whatever still exceeds the hard cap (or any result over the cap when rewriting is off for the
// tool, or an isError result) is cut as text, with a cursor to the rest. Nothing the server said
// becomes unreachable: every cut is one ctxguard_fetch away while its cache entry lives.
//
// Pure: no I/O, no clock reads (times come in the CallContext), never throws on bad input.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>

#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "mcp/tool_list.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/json_parts.hpp"

namespace ctxguard::pipeline {

struct CallContext {
  std::string_view tool;
  bool rewrite = true;  // false: only the hard cap applies to this tool
  std::chrono::steady_clock::time_point now;
  std::chrono::system_clock::time_point wall_now;
  // observe mode: the rewrite is computed for the log only: nothing is cached or spilled.
  bool dry_run = false;
};

// What one rewritten call did, for its telemetry::CallEvent (no payloads); the interceptor adds
// what only it knows: the request id, bytes on the wire and latencies.
struct CallRecord {
  std::string tool;
  std::size_t original_tokens = 0;
  std::size_t final_tokens = 0;
  std::size_t items_total = 0;  // items in the arrays that were cut
  std::size_t items_shown = 0;
  // "chunk", "compact", "paginate", "summarize", "project", "tables", "hard-cap"; "fetch" or
  // "fetch-error" for fetches
  std::vector<std::string_view> stages;
  std::uint64_t cache_entry = 0;  // 0 when nothing was cached
  // Failed fetches: why, in one word ("expired", "forged", "malformed", "evicted", "mismatch",
  // "missing", "search-off", "argument"); empty otherwise.
  std::string_view error;
  // The client's limit the answer was held to: for a first answer the one its original was
  // furthest over, for a fetch the one its answer came closest to.
  std::optional<budget::SizeUnit> limit;
  // The share of the budget the answer takes in the unit it comes closest to (1.0: all of it).
  // Rewritten first answers and fetches.
  std::optional<double> fill;
};

struct RewrittenResult {
  boost::json::object result;
  CallRecord record;
};

// What ResultPipeline::process made of a result.
struct ProcessedResult {
  std::optional<RewrittenResult> rewritten;  // none: the server's bytes go out as they came
  // The estimate of the result as it came (0 when it is not a CallToolResult): a call forwarded
  // unchanged is measured too.
  std::size_t original_tokens = 0;
};

// The settings for calls of a tool (the configuration's per-tool rules resolved).
using SettingsFor = std::function<const config::BudgetSettings&(std::string_view tool)>;

class ResultPipeline {
 public:
  // `names`: ctxguard's tools as the client knows them (mcp::ToolListEditor keeps them); hints
  // name its fetch tool, prefixed when the server has one of that name.
  ResultPipeline(const cursor::CursorCodec& codec, ResultCache& cache,
                 const mcp::OwnToolNames& names)
      : codec_(codec), cache_(cache), names_(names) {}

  // What to send for `result`: `rewritten`, or the server's bytes when it is empty. `result` may
  // be moved from when a rewrite is returned. `budget`: the settings of context.tool.
  ProcessedResult process(boost::json::object& result, const config::BudgetSettings& budget,
                          const CallContext& context);

  // A resources/read result (docs/protocol.md, section 2.6): text contents over the chunk size
  // become their first chunk followed by a contents item (same uri, application/json) holding
  // {"_ctxguard": ...}; blobs and short texts pass. nullopt when nothing changed. `context.tool`
  // names the resource in logs.
  std::optional<RewrittenResult> process_resource(boost::json::object& result,
                                                  const config::BudgetSettings& budget,
                                                  const CallContext& context);

  // --spill-dir: writes a part's full text; returns the file (its owner and path), or nullopt
  // when it could not (the answer then names no file). Set by the proxy (I/O lives
  // there); unset, nothing is spilled.
  using SpillWriter = std::function<std::optional<SpilledFile>(
      std::string_view tool, std::string_view extension, std::string_view content)>;
  void set_spill_writer(SpillWriter writer) { spill_ = std::move(writer); }

 private:
  // process() for a CallToolResult whose estimate is `tokens`.
  std::optional<RewrittenResult> rewrite_call(boost::json::object& result,
                                              const ResultTokens& tokens,
                                              const config::BudgetSettings& budget,
                                              const CallContext& context);

  // Whether `result` holds plain text over the chunk size (chunked even within the budget).
  bool has_text_to_chunk(const boost::json::object& result, const ResultTokens& tokens,
                         const config::BudgetSettings& budget) const;

  const cursor::CursorCodec& codec_;
  ResultCache& cache_;
  const mcp::OwnToolNames& names_;
  SpillWriter spill_;
};

}  // namespace ctxguard::pipeline
