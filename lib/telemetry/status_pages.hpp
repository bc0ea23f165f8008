#pragma once
// What the loopback endpoint serves, as text built from plain figures: /metrics in the
// Prometheus text format and /health as JSON. Pure; the proxy gathers the figures and serves
// the text (proxy/metrics_server).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "cache/expiring_lru_cache.hpp"
#include "telemetry/oversize_alarm.hpp"
#include "telemetry/record_writer.hpp"
#include "telemetry/traffic_metrics.hpp"

namespace ctxguard::telemetry {

// The figures of the running process besides the calls.
struct ProcessStatus {
  std::string version;
  std::chrono::system_clock::time_point started;
  std::chrono::steady_clock::duration uptime{};
  std::int64_t server_pid = 0;
  bool server_running = true;
  std::string server_exit;  // how it ended ("exited with status 1", "was killed by SIGKILL")
  bool client_connected = true;
  cache::CacheStats cache;
  std::size_t cache_max_bytes = 0;
  std::uint64_t reloads_applied = 0;
  std::uint64_t reloads_refused = 0;
  std::optional<WriterCounters> telemetry_file;  // when --telemetry-file is on
  std::optional<WriterCounters> answer_samples;  // when --sample-answers is on
  std::uint64_t messages_from_client = 0;
  std::uint64_t messages_from_server = 0;
  std::uint64_t oversized_lines_dropped = 0;     // lines over --max-message-bytes
  std::uint64_t non_protocol_lines_dropped = 0;  // server lines that were not JSON-RPC
  std::size_t client_requests_in_flight = 0;     // sent by the client, not yet answered
  std::size_t server_requests_in_flight = 0;     // sent by the server, not yet answered
  std::size_t queued_to_client_bytes = 0;        // written when the client reads
  std::size_t queued_to_server_bytes = 0;        // written when the server reads
  OversizeAlert oversize_window;                 // calls in the alarm's window now
  OversizeAlarmOptions oversize_alarm;
  std::uint64_t oversize_alerts = 0;
};

std::string metrics_page(const TrafficMetrics& traffic, const ProcessStatus& process);

struct HealthPage {
  unsigned status = 200;  // 503 once the server is gone
  std::string body;       // JSON
};
HealthPage health_page(const TrafficMetrics& traffic, const ProcessStatus& process);

}  // namespace ctxguard::telemetry
