#include "telemetry/traffic_metrics.hpp"

#include <array>
#include <chrono>

namespace ctxguard::telemetry {

namespace {

// Seconds: ctxguard's own work is micro- to milliseconds, the server's milliseconds to minutes.
const std::vector<double> kProxyLatencyBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
const std::vector<double> kServerLatencyBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                   0.5,   1,     2.5,  5,     10,   30,  60};
// Estimated tokens: around the default budget (4000) and the sizes that overflow a context.
const std::vector<double> kTokenBuckets = {100,   250,   500,   1000,   2000,   4000,   8000,
                                           16000, 32000, 64000, 128000, 256000, 1000000};

// Reasons that are about the cursor itself (ctxguard_cursor_errors_total); argument mistakes
// show as outcome="fetch-error" in ctxguard_calls_total only.
constexpr std::array<std::string_view, 6> kCursorReasons = {"missing", "malformed", "forged",
                                                            "expired", "evicted",   "mismatch"};

double seconds(std::chrono::nanoseconds value) {
  return std::chrono::duration<double>(value).count();
}

std::string_view mode_of(bool observed) { return observed ? "observe" : "enforce"; }

}  // namespace

TrafficMetrics::TrafficMetrics(std::size_t max_tools)
    : max_tools_(max_tools),
      proxy_latency_(kProxyLatencyBuckets),
      server_latency_(kServerLatencyBuckets),
      original_tokens_(kTokenBuckets),
      answer_tokens_(kTokenBuckets) {}

std::string_view TrafficMetrics::label_of(Labels& known, std::string_view name, std::size_t max) {
  if (const auto found = known.find(name); found != known.end()) return *found;
  if (known.size() >= max) return kOtherTool;
  return *known.emplace(name).first;
}

void TrafficMetrics::add(const CallEvent& event) {
  if (event.kind == CallKind::kToolsList) {  // not a call: the latest listing, as gauges
    tool_list_ = ToolListGauges{.listings = tool_list_.listings + 1,
                                .tools = event.items_total,
                                .tokens = event.final_tokens,
                                .instructions_tokens = event.instructions_tokens.value_or(0)};
    return;
  }
  const std::string_view client = event.client.empty() ? kUnknownClient : event.client;
  ++by_client_[{label_of(clients_, client, kMaxClients), event.outcome}];
  // Looked up by view: a call of a known tool allocates nothing.
  const std::string_view tool = label_of(tools_, event.tool, max_tools_);
  auto found = by_call_.find(KeyView{tool, event.outcome, event.observed});
  if (found == by_call_.end()) {
    found = by_call_.emplace(Key{std::string(tool), event.outcome, event.observed}, Totals{}).first;
  }
  Totals& totals = found->second;
  ++totals.calls;
  totals.oversized += event.over_budget ? 1 : 0;
  totals.original_tokens += event.original_tokens;
  totals.final_tokens += event.final_tokens;
  totals.original_bytes += event.original_bytes;
  totals.final_bytes += event.final_bytes;
  proxy_latency_.observe(seconds(event.proxy_latency));
  if (event.server_latency) server_latency_.observe(seconds(*event.server_latency));

  if (event.kind == CallKind::kFetch) {
    ++summary_.fetches;
    if (event.outcome == Outcome::kFetchFailed) {
      ++summary_.fetch_errors;
      for (const std::string_view reason : kCursorReasons) {
        if (event.error == reason) ++cursor_errors_[std::string(reason)];
      }
    }
    return;
  }
  if (event.kind == CallKind::kResource) {
    ++summary_.resources_chunked;
    return;
  }
  if (event.observed) {
    ++summary_.observed_calls;
    return;
  }
  ++summary_.tool_calls;
  summary_.oversized += event.over_budget ? 1 : 0;
  summary_.answer_bytes += event.final_bytes;
  summary_.answer_tokens += event.final_tokens;
  summary_.original_tokens += event.original_tokens;
  switch (event.outcome) {
    case Outcome::kPassthrough:
      break;
    case Outcome::kError:
      ++summary_.errors;
      break;
    default:
      ++summary_.rewritten;
      break;
  }
  summary_.paginated += event.outcome == Outcome::kPaginated ? 1 : 0;
  summary_.summarized += event.outcome == Outcome::kSummarized ? 1 : 0;
  summary_.chunked += event.outcome == Outcome::kChunked ? 1 : 0;
  if (event.outcome != Outcome::kError) {
    original_tokens_.observe(static_cast<double>(event.original_tokens));
    answer_tokens_.observe(static_cast<double>(event.final_tokens));
  }
}

void TrafficMetrics::write_tool_list_gauges(PrometheusText& out) const {
  if (tool_list_.listings == 0) return;
  out.family("ctxguard_tool_list_tools", MetricType::kGauge,
             "Tools in the latest tools/list the client got (all pages, ctxguard's included).");
  out.sample("ctxguard_tool_list_tools", {}, tool_list_.tools);
  out.family("ctxguard_tool_list_tokens", MetricType::kGauge,
             "Estimated tokens of the latest tools/list the client got: what the tools take in "
             "every conversation.");
  out.sample("ctxguard_tool_list_tokens", {}, tool_list_.tokens);
  out.family("ctxguard_instructions_tokens", MetricType::kGauge,
             "Estimated tokens of the instructions the client got (initialize, server/discover).");
  out.sample("ctxguard_instructions_tokens", {}, tool_list_.instructions_tokens);
}

void TrafficMetrics::write(PrometheusText& out) const {
  out.family("ctxguard_calls_total", MetricType::kCounter,
             "Answered tool calls, chunked resource reads and ctxguard_fetch calls, by tool, "
             "outcome and mode (observe: nothing was changed).");
  for (const auto& [key, totals] : by_call_) {
    const auto& [tool, outcome, observed] = key;
    out.sample("ctxguard_calls_total",
               {{"tool", tool}, {"outcome", to_string(outcome)}, {"mode", mode_of(observed)}},
               totals.calls);
  }
  // Per tool and mode, summed over outcomes.
  std::map<std::pair<std::string_view, bool>, Totals> by_tool;
  for (const auto& [key, totals] : by_call_) {
    Totals& sum = by_tool[{std::get<0>(key), std::get<2>(key)}];
    sum.calls += totals.calls;
    sum.oversized += totals.oversized;
    sum.original_tokens += totals.original_tokens;
    sum.final_tokens += totals.final_tokens;
    sum.original_bytes += totals.original_bytes;
    sum.final_bytes += totals.final_bytes;
  }
  const struct {
    std::string_view name;
    std::string_view help;
    std::uint64_t Totals::*field;
  } families[] = {
      {"ctxguard_oversized_calls_total",
       "Answers whose original exceeded the tool's token budget (oversized attempts).",
       &Totals::oversized},
      {"ctxguard_original_tokens_total", "Estimated tokens in the server's answers.",
       &Totals::original_tokens},
      {"ctxguard_final_tokens_total",
       "Estimated tokens in the answers sent to the client (observe mode: would have sent).",
       &Totals::final_tokens},
      {"ctxguard_original_bytes_total", "Bytes of the server's answer lines.",
       &Totals::original_bytes},
      {"ctxguard_final_bytes_total",
       "Bytes of the answer lines sent to the client (observe mode: would have sent).",
       &Totals::final_bytes},
  };
  for (const auto& family : families) {
    out.family(family.name, MetricType::kCounter, family.help);
    for (const auto& [key, totals] : by_tool) {
      out.sample(family.name, {{"tool", key.first}, {"mode", mode_of(key.second)}},
                 totals.*family.field);
    }
  }
  out.family("ctxguard_client_calls_total", MetricType::kCounter,
             "Calls as ctxguard_calls_total counts them, by the client's name (clientInfo.name; "
             "unknown when it gave none) and outcome.");
  for (const auto& [key, calls] : by_client_) {
    out.sample("ctxguard_client_calls_total",
               {{"client", key.first}, {"outcome", to_string(key.second)}}, calls);
  }
  write_tool_list_gauges(out);
  out.family("ctxguard_cursor_errors_total", MetricType::kCounter,
             "ctxguard_fetch calls refused for their cursor, by reason.");
  for (const std::string_view reason : kCursorReasons) {
    const auto found = cursor_errors_.find(reason);
    out.sample("ctxguard_cursor_errors_total", {{"reason", reason}},
               found == cursor_errors_.end() ? std::uint64_t{0} : found->second);
  }
  out.family("ctxguard_proxy_latency_seconds", MetricType::kHistogram,
             "Time ctxguard spent on an answer (parse, rewrite, serialize).");
  out.histogram("ctxguard_proxy_latency_seconds", {}, proxy_latency_);
  out.family("ctxguard_server_latency_seconds", MetricType::kHistogram,
             "Time from a tool call passing to the server until its answer arrived.");
  out.histogram("ctxguard_server_latency_seconds", {}, server_latency_);
  out.family("ctxguard_original_answer_tokens", MetricType::kHistogram,
             "Estimated tokens of the server's tool call answers (enforce mode).");
  out.histogram("ctxguard_original_answer_tokens", {}, original_tokens_);
  out.family("ctxguard_answer_tokens", MetricType::kHistogram,
             "Estimated tokens of the tool call answers sent to the client (enforce mode).");
  out.histogram("ctxguard_answer_tokens", {}, answer_tokens_);
}

}  // namespace ctxguard::telemetry
