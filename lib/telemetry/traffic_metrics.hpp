#pragma once
// The running totals behind /metrics and /health, fed with every call record: counters by tool,
// outcome and mode, histograms of latencies and answer sizes, fetch failures by reason. Memory
// is bounded whatever the traffic: at most `max_tools` tool names get their own label, later
// ones are counted under tool="other" (a client may call tools by any name), and at most
// kMaxClients client names (clientInfo.name) theirs, later ones under client="other".
//
// Thread: one owner (the io thread); the /metrics handler reads on the same thread.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "telemetry/call_event.hpp"
#include "telemetry/prometheus_text.hpp"

namespace ctxguard::telemetry {

// What /health reports: the pagination adoption rate, the average response size and the
// oversize rate, over enforced tool calls (kinds call and task; docs/telemetry.md).
struct TrafficSummary {
  std::uint64_t tool_calls = 0;  // enforced tools/call and tasks/result answers
  std::uint64_t rewritten = 0;   // of them, not passed through (nor errors)
  std::uint64_t paginated = 0;
  std::uint64_t summarized = 0;
  std::uint64_t chunked = 0;
  std::uint64_t errors = 0;         // JSON-RPC errors from the server
  std::uint64_t oversized = 0;      // originals over the budget
  std::uint64_t answer_bytes = 0;   // sent to the client
  std::uint64_t answer_tokens = 0;  // estimated, sent to the client
  std::uint64_t original_tokens = 0;
  std::uint64_t fetches = 0;  // ctxguard_fetch calls
  std::uint64_t fetch_errors = 0;
  std::uint64_t observed_calls = 0;  // observe mode: counted apart, nothing was changed
  std::uint64_t resources_chunked = 0;

  double rate(std::uint64_t part) const {
    return tool_calls == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(tool_calls);
  }
  double average(std::uint64_t total) const {
    return tool_calls == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(tool_calls);
  }
};

class TrafficMetrics {
 public:
  static constexpr std::size_t kDefaultMaxTools = 200;
  static constexpr std::string_view kOtherTool = "other";
  // One process serves one client, whose name may change only between requests of the 2026-07-28
  // era (each names its client): a few names are plenty.
  static constexpr std::size_t kMaxClients = 8;
  static constexpr std::string_view kUnknownClient = "unknown";

  explicit TrafficMetrics(std::size_t max_tools = kDefaultMaxTools);
  // The counters keep views of the names in their label sets: moved, never copied.
  TrafficMetrics(TrafficMetrics&&) = default;
  TrafficMetrics& operator=(TrafficMetrics&&) = default;
  TrafficMetrics(const TrafficMetrics&) = delete;
  TrafficMetrics& operator=(const TrafficMetrics&) = delete;

  void add(const CallEvent& event);
  const TrafficSummary& summary() const { return summary_; }
  // The call families (ctxguard_calls_total, ..._tokens_total, latency histograms, ...).
  void write(PrometheusText& out) const;

 private:
  struct Totals {
    std::uint64_t calls = 0;
    std::uint64_t oversized = 0;
    std::uint64_t original_tokens = 0;
    std::uint64_t final_tokens = 0;
    std::uint64_t original_bytes = 0;
    std::uint64_t final_bytes = 0;
  };
  using Key = std::tuple<std::string, Outcome, bool>;  // tool, outcome, observed
  using KeyView = std::tuple<std::string_view, Outcome, bool>;
  // Orders Key and KeyView alike, so a call of a known tool is looked up without a copy of its
  // name (comparing tuples of string and string_view directly is not portable to clang).
  struct KeyLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) < view(b);
    }
    template <class K>
    static KeyView view(const K& key) {
      return {std::get<0>(key), std::get<1>(key), std::get<2>(key)};
    }
  };

  using Labels = std::set<std::string, std::less<>>;
  // The label `name` is counted under: its own (kept in `known`) while fewer than `max` names
  // have one, "other" after; a view that lives as long as `known`.
  static std::string_view label_of(Labels& known, std::string_view name, std::size_t max);

  std::size_t max_tools_;
  Labels tools_;
  std::map<Key, Totals, KeyLess> by_call_;
  std::map<std::string, std::uint64_t, std::less<>> cursor_errors_;
  Labels clients_;
  std::map<std::pair<std::string_view, Outcome>, std::uint64_t> by_client_;  // views of clients_
  Histogram proxy_latency_;
  Histogram server_latency_;
  Histogram original_tokens_;
  Histogram answer_tokens_;
  // The latest tools/list, as gauges (present once one was seen).
  void write_tool_list_gauges(PrometheusText& out) const;

  TrafficSummary summary_;
  // The latest tools/list (CallKind::kToolsList).
  struct ToolListGauges {
    std::uint64_t listings = 0;
    std::size_t tools = 0;
    std::size_t tokens = 0;
    std::size_t instructions_tokens = 0;
  };
  ToolListGauges tool_list_;
};

}  // namespace ctxguard::telemetry
