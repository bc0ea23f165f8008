#pragma once
// `ctxguard stats`: call records filtered by time, tool, outcome and kind, summed
// overall, per tool, per outcome and per (tool, outcome), and formatted as a table, JSON or CSV.
//
// StatsAccumulator streams: it keeps sums and the latency samples of each (tool, outcome) group,
// never the records, so a million-line file costs a few doubles per line. Nothing here does I/O
// but read_call_records, which reads the std::istream it is given.
//
// Observe-mode records (CallEvent::observed) are what enforce *would* have sent: they are summed
// apart (StatsReport::observe) and are in none of the enforce groups, so they never count as
// savings.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/call_event.hpp"

namespace ctxguard::telemetry {

using TimePoint = std::chrono::system_clock::time_point;

// Which records count. Empty lists and unset bounds let everything through.
struct StatsFilter {
  std::optional<TimePoint> since;       // inclusive
  std::optional<TimePoint> until;       // exclusive
  std::vector<std::string> tool_globs;  // any may match (glob_matches: '*' and '?')
  // Any may match the client's name; a record without one has the empty name ("*" matches it).
  std::vector<std::string> client_globs;
  std::vector<Outcome> outcomes;
  std::vector<CallKind> kinds;

  bool matches(const CallEvent& event) const;
};

// A --since/--until value: a duration back from `now` ("30s", "15m", "2h", "7d": a whole number
// and one unit), an RFC 3339 time, or a date (midnight UTC). nullopt for anything else.
std::optional<TimePoint> parse_time_bound(std::string_view text, TimePoint now);

// Nearest-rank percentiles of one latency series, in milliseconds; all absent without samples.
struct LatencySummary {
  std::size_t samples = 0;
  std::optional<double> p50_ms;
  std::optional<double> p95_ms;
  std::optional<double> max_ms;
};

// The nearest-rank percentile: the smallest sample with at least p% of the samples at or below
// it, i.e. the ceil(p/100 * n)-th smallest (1-based; the smallest one for p = 0). nullopt when
// there are no samples. Reorders `samples`.
std::optional<double> nearest_rank(std::vector<double>& samples, double percent);

// How much of the budget the answers the fit sized used (CallEvent::fill_pct of the paginated and
// summarized records), in percent; nearest-rank, the low end because that is where room is left
// unused. All absent without samples.
struct FillSummary {
  std::size_t samples = 0;
  std::optional<double> p50_pct;
  std::optional<double> p10_pct;
  std::optional<double> min_pct;
};

// The enforce-mode numbers of one group of records.
struct GroupStats {
  std::size_t calls = 0;
  std::size_t server_calls = 0;  // kinds call, task and resource: the ones ctxguard may rewrite
  std::size_t rewritten = 0;     // server calls whose outcome is neither passthrough nor error
  std::size_t over_budget = 0;   // oversized originals
  std::uint64_t tokens_in = 0;   // sum of original_tokens
  std::uint64_t tokens_out = 0;  // sum of final_tokens
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::size_t fetches = 0;
  std::size_t fetch_errors = 0;
  std::map<std::string, std::size_t> fetch_errors_by_reason;  // "unknown" when a record has none
  LatencySummary proxy;                                       // proxy_ms of every record
  LatencySummary server;  // server_ms of the records that have it
  FillSummary fill;

  // Negative when the answers grew (metadata on small results).
  std::int64_t tokens_saved() const;
  // 100 * saved / tokens_in; 0 without tokens in.
  double saved_percent() const;
  // Of server_calls; 0 without any.
  double rewritten_percent() const;
  double over_budget_percent() const;
  // tokens_out / calls; 0 without calls.
  double average_tokens_out() const;
};

// Observe-mode records: what enforce would have done.
struct ObserveStats {
  std::size_t calls = 0;
  std::uint64_t tokens_in = 0;
  std::uint64_t tokens_out = 0;

  std::int64_t tokens_saved() const;
  double saved_percent() const;
};

struct ToolStats {
  std::string tool;
  GroupStats stats;
};
struct ClientStats {
  std::string client;  // clientInfo.name; empty for records of a client that gave none
  GroupStats stats;
};
struct LimitStats {
  std::string limit;  // "tokens", "chars", "bytes" or "lines": what the answers were held to
  GroupStats stats;
};
struct OutcomeStats {
  Outcome outcome = Outcome::kPassthrough;
  GroupStats stats;
};
struct GroupKey {
  std::string tool;
  Outcome outcome = Outcome::kPassthrough;
};
struct ToolOutcomeStats {
  GroupKey key;
  GroupStats stats;
};
struct ToolObserveStats {
  std::string tool;
  ObserveStats stats;
};

// Lines that were not call records.
struct SkippedLines {
  std::size_t count = 0;
  std::string first;  // "file.jsonl:17: not a ctxguard call record"; empty when count is 0
};

// Listings of tools (kind tools_list): what the tools take before any call. Not calls: in none
// of the totals.
struct ToolListStats {
  std::size_t listings = 0;
  std::optional<CallEvent> latest;   // the latest listing
  std::optional<CallEvent> largest;  // the listing that took the most tokens (as sent)
};

struct StatsReport {
  std::size_t records_read = 0;     // call records seen, before the filter
  std::size_t records_matched = 0;  // of those, the ones the filter let through (both modes)
  SkippedLines skipped;
  std::optional<TimePoint> first_time;  // earliest and latest matched record
  std::optional<TimePoint> last_time;
  GroupStats total;  // enforce mode only
  ObserveStats observe;
  std::vector<ToolStats> tools;            // by tokens saved, most first; then by name
  std::vector<ClientStats> clients;        // likewise; empty when no record names a client
  std::vector<LimitStats> limits;          // rewritten answers by limit, most tokens saved first
  std::vector<OutcomeStats> outcomes;      // in kAllOutcomes order; only outcomes seen
  std::vector<ToolOutcomeStats> groups;    // by tool name, then outcome
  std::vector<ToolObserveStats> observed;  // observe mode per tool, by tokens saved
  ToolListStats tool_lists;
};

class StatsAccumulator {
 public:
  explicit StatsAccumulator(StatsFilter filter = {});

  // Counts the record if the filter lets it through; returns whether it did.
  bool add(const CallEvent& event);
  // A line that is not a record; `where` is "file:line", `reason` why.
  void skip(std::string_view where, std::string_view reason);

  // The report of everything added so far. Reorders the latency samples; the accumulator stays
  // usable.
  StatsReport report();

 private:
  // One (tool, outcome) group: the sums, and the samples its percentiles and those of every
  // coarser group are taken from.
  struct Bucket {
    GroupStats sums;  // proxy, server and fill left empty
    std::vector<double> proxy_ms;
    std::vector<double> server_ms;
    std::vector<double> fill_pct;
  };
  // Indexed by Outcome; a bucket without calls was not seen.
  using ToolBuckets = std::array<Bucket, std::size(kAllOutcomes)>;

  // Adds the event's sums and latency samples to `bucket`.
  static void count(Bucket& bucket, const CallEvent& event);

  StatsFilter filter_;
  std::size_t records_read_ = 0;
  std::size_t records_matched_ = 0;
  SkippedLines skipped_;
  std::optional<TimePoint> first_time_;
  std::optional<TimePoint> last_time_;
  std::map<std::string, ToolBuckets, std::less<>> tools_;
  std::map<std::string, Bucket, std::less<>> clients_;  // enforce mode, summed over outcomes
  std::map<std::string, Bucket, std::less<>> limits_;   // the same, of records with a limit
  ToolListStats tool_lists_;
  std::map<std::string, ObserveStats, std::less<>> observed_;
};

// Feeds every line of `in` to `into`: records through add(), anything else through skip() with
// "name:line". Blank lines are ignored; a trailing '\r' is dropped. Returns false when the
// stream failed for another reason than its end (the caller reports it with `name`).
bool read_call_records(std::istream& in, std::string_view name, StatsAccumulator& into);

// The three formats of `ctxguard stats` (field and column names in docs/telemetry.md). Each ends
// with a newline.
std::string format_table(const StatsReport& report);
std::string format_json(const StatsReport& report);
std::string format_csv(const StatsReport& report);

}  // namespace ctxguard::telemetry
