#pragma once
// Telemetry's two edges to the outside, opened at start-up: the --telemetry-file writer and the
// --metrics-listen endpoint, and the routing of the endpoint's requests to the status pages.

#include <memory>
#include <optional>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "config/settings.hpp"
#include "proxy/listen_address.hpp"
#include "proxy/metrics_server.hpp"
#include "telemetry/answer_sampler.hpp"
#include "telemetry/record_writer.hpp"
#include "telemetry/status_pages.hpp"

namespace ctxguard::proxy {

struct TelemetryEdges {
  std::unique_ptr<telemetry::RecordWriter> record_file;  // null without --telemetry-file
  std::unique_ptr<telemetry::AnswerSampler> sampler;     // null without --sample-answers
  std::unique_ptr<MetricsServer> metrics;                // null without --metrics-listen
};

// Opens what `settings` asks for, the metrics endpoint on `metrics` (parse_listen_address of
// settings.metrics_listen, checked first: a malformed one is a usage error). A file or an address
// that cannot be opened is the problem that keeps ctxguard from starting the server.
Checked<TelemetryEdges> open_telemetry_edges(const config::TelemetrySettings& settings,
                                             const std::optional<ListenAddress>& metrics,
                                             boost::asio::io_context& io, HttpHandler handler);

// GET `target`: /metrics, /health, an index at /, 404 for the rest (a query is ignored).
HttpAnswer answer_status_request(std::string_view target, const telemetry::TrafficMetrics& traffic,
                                 const telemetry::ProcessStatus& process);

}  // namespace ctxguard::proxy
