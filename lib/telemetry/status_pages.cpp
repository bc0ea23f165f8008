#include "telemetry/status_pages.hpp"

#include <cmath>

#include <boost/json/object.hpp>

#include "support/json_writer.hpp"

namespace ctxguard::telemetry {

namespace json = boost::json;

namespace {

// Rates and averages to four decimals: enough for a dashboard, stable to read in tests.
double rounded(double value) { return std::round(value * 10000.0) / 10000.0; }

std::string_view health_status(const ProcessStatus& process) {
  if (!process.server_running) return "down";
  return process.client_connected ? "ok" : "stopping";
}

void write_process_metrics(PrometheusText& out, const ProcessStatus& process) {
  out.family("ctxguard_build_info", MetricType::kGauge, "The running ctxguard's version.");
  out.sample("ctxguard_build_info", {{"version", process.version}}, 1);
  out.family("ctxguard_start_time_seconds", MetricType::kGauge,
             "When ctxguard started, in seconds since 1970.");
  out.sample("ctxguard_start_time_seconds", {},
             std::chrono::duration<double>(process.started.time_since_epoch()).count());
  out.family("ctxguard_server_up", MetricType::kGauge,
             "1 while the MCP server ctxguard started is running.");
  out.sample("ctxguard_server_up", {}, process.server_running ? 1 : 0);
}

// What the relay holds and has passed: lines, requests in flight, queues, alerts.
void write_relay_metrics(PrometheusText& out, const ProcessStatus& process) {
  out.family("ctxguard_messages_total", MetricType::kCounter,
             "JSON-RPC lines relayed, by the peer that sent them.");
  out.sample("ctxguard_messages_total", {{"from", "client"}}, process.messages_from_client);
  out.sample("ctxguard_messages_total", {{"from", "server"}}, process.messages_from_server);
  out.family("ctxguard_oversized_lines_dropped_total", MetricType::kCounter,
             "Lines longer than --max-message-bytes: never forwarded (the sender, or the peer "
             "awaiting that answer, gets an error when the line's id can be read).");
  out.sample("ctxguard_oversized_lines_dropped_total", {}, process.oversized_lines_dropped);
  out.family("ctxguard_non_protocol_lines_dropped_total", MetricType::kCounter,
             "Lines from the server that were not JSON-RPC messages (a banner, a stray print, "
             "a line cut off by a crash): never forwarded, since the client's stdout carries "
             "only protocol.");
  out.sample("ctxguard_non_protocol_lines_dropped_total", {}, process.non_protocol_lines_dropped);
  out.family("ctxguard_requests_in_flight", MetricType::kGauge,
             "Requests relayed and not yet answered (or cancelled), by the peer that sent them.");
  out.sample("ctxguard_requests_in_flight", {{"from", "client"}},
             process.client_requests_in_flight);
  out.sample("ctxguard_requests_in_flight", {{"from", "server"}},
             process.server_requests_in_flight);
  out.family("ctxguard_queued_bytes", MetricType::kGauge,
             "Bytes waiting for a slow reader, by the peer that will read them (bounded: "
             "backpressure).");
  out.sample("ctxguard_queued_bytes", {{"to", "client"}}, process.queued_to_client_bytes);
  out.sample("ctxguard_queued_bytes", {{"to", "server"}}, process.queued_to_server_bytes);
  out.family("ctxguard_oversize_alerts_total", MetricType::kCounter,
             "Warnings that oversized answers exceeded the alert share of tool calls.");
  out.sample("ctxguard_oversize_alerts_total", {}, process.oversize_alerts);
}

void write_cache_metrics(PrometheusText& out, const ProcessStatus& process) {
  out.family("ctxguard_cache_entries", MetricType::kGauge,
             "Original results held for ctxguard_fetch.");
  out.sample("ctxguard_cache_entries", {}, process.cache.entries);
  out.family("ctxguard_cache_bytes", MetricType::kGauge, "Memory charged to the cache.");
  out.sample("ctxguard_cache_bytes", {}, process.cache.bytes);
  out.family("ctxguard_cache_max_bytes", MetricType::kGauge, "The cache's limit (cacheSize).");
  out.sample("ctxguard_cache_max_bytes", {}, process.cache_max_bytes);
  const struct {
    std::string_view name;
    std::string_view help;
    std::uint64_t value;
  } cache_counters[] = {
      {"ctxguard_cache_hits_total", "Cursor lookups that found their result.", process.cache.hits},
      {"ctxguard_cache_misses_total", "Cursor lookups whose result was gone.",
       process.cache.misses},
      {"ctxguard_cache_evictions_total", "Results dropped to stay under the cache size.",
       process.cache.evictions},
      {"ctxguard_cache_expirations_total", "Results dropped after the cursor lifetime.",
       process.cache.expirations},
      {"ctxguard_cache_rejected_total", "Results too large for the cache on their own.",
       process.cache.rejected},
  };
  for (const auto& counter : cache_counters) {
    out.family(counter.name, MetricType::kCounter, counter.help);
    out.sample(counter.name, {}, counter.value);
  }
}

// Reloads, and the telemetry file's records when there is one.
void write_side_metrics(PrometheusText& out, const ProcessStatus& process) {
  out.family("ctxguard_config_reloads_total", MetricType::kCounter,
             "Configuration reloads, by result (refused: the running configuration was kept).");
  out.sample("ctxguard_config_reloads_total", {{"result", "applied"}}, process.reloads_applied);
  out.sample("ctxguard_config_reloads_total", {{"result", "refused"}}, process.reloads_refused);

  if (process.telemetry_file) {
    out.family("ctxguard_telemetry_records_total", MetricType::kCounter,
               "Call records for --telemetry-file, by fate (dropped: the queue was full; "
               "failed: the write failed).");
    out.sample("ctxguard_telemetry_records_total", {{"result", "written"}},
               process.telemetry_file->written);
    out.sample("ctxguard_telemetry_records_total", {{"result", "dropped"}},
               process.telemetry_file->dropped);
    out.sample("ctxguard_telemetry_records_total", {{"result", "failed"}},
               process.telemetry_file->failed);
  }
  if (process.answer_samples) {
    out.family("ctxguard_answer_samples_total", MetricType::kCounter,
               "Answers sampled for --sample-answers, by fate (dropped: the queue was full; "
               "failed: the write failed).");
    out.sample("ctxguard_answer_samples_total", {{"result", "written"}},
               process.answer_samples->written);
    out.sample("ctxguard_answer_samples_total", {{"result", "dropped"}},
               process.answer_samples->dropped);
    out.sample("ctxguard_answer_samples_total", {{"result", "failed"}},
               process.answer_samples->failed);
  }
}

}  // namespace

std::string metrics_page(const TrafficMetrics& traffic, const ProcessStatus& process) {
  PrometheusText out;
  write_process_metrics(out, process);
  traffic.write(out);
  write_relay_metrics(out, process);
  write_cache_metrics(out, process);
  write_side_metrics(out, process);
  return out.take();
}

HealthPage health_page(const TrafficMetrics& traffic, const ProcessStatus& process) {
  const TrafficSummary& calls = traffic.summary();
  json::object server{{"pid", process.server_pid},
                      {"state", process.server_running ? "running" : "exited"}};
  if (!process.server_running) server["exit"] = process.server_exit;
  const OversizeAlert& window = process.oversize_window;
  json::object body{
      {"status", health_status(process)},
      {"version", process.version},
      {"uptimeSeconds", rounded(std::chrono::duration<double>(process.uptime).count())},
      {"server", std::move(server)},
      {"clientConnected", process.client_connected},
      {"toolCalls", calls.tool_calls},
      {"rewritten", calls.rewritten},
      {"rewriteRate", rounded(calls.rate(calls.rewritten))},
      {"paginationAdoptionRate", rounded(calls.rate(calls.paginated))},
      {"summarizationRate", rounded(calls.rate(calls.summarized))},
      {"chunkingRate", rounded(calls.rate(calls.chunked))},
      {"oversizeRate", rounded(calls.rate(calls.oversized))},
      {"averageAnswerBytes", rounded(calls.average(calls.answer_bytes))},
      {"averageAnswerTokens", rounded(calls.average(calls.answer_tokens))},
      {"averageOriginalTokens", rounded(calls.average(calls.original_tokens))},
      {"fetches", calls.fetches},
      {"fetchErrors", calls.fetch_errors},
      {"observedCalls", calls.observed_calls},
      {"oversizeAlert",
       json::object{{"windowSeconds", process.oversize_alarm.window.count()},
                    {"threshold", process.oversize_alarm.threshold},
                    {"callsInWindow", window.calls},
                    {"oversizedInWindow", window.oversized},
                    {"active", window.calls >= process.oversize_alarm.min_calls &&
                                   window.share() > process.oversize_alarm.threshold},
                    {"alerts", process.oversize_alerts}}},
      {"cache", json::object{{"entries", process.cache.entries},
                             {"bytes", process.cache.bytes},
                             {"maxBytes", process.cache_max_bytes}}},
      {"requestsInFlight", json::object{{"fromClient", process.client_requests_in_flight},
                                        {"fromServer", process.server_requests_in_flight}}},
      {"configReloads",
       json::object{{"applied", process.reloads_applied}, {"refused", process.reloads_refused}}},
      {"nonProtocolLinesDropped", process.non_protocol_lines_dropped},
  };
  if (process.telemetry_file) {
    body["telemetryFile"] = json::object{{"written", process.telemetry_file->written},
                                         {"dropped", process.telemetry_file->dropped},
                                         {"failed", process.telemetry_file->failed},
                                         {"queued", process.telemetry_file->queued}};
  }
  return HealthPage{process.server_running ? 200U : 503U, to_json(body)};
}

}  // namespace ctxguard::telemetry
