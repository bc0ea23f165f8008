#include "proxy/telemetry_edges.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace ctxguard::proxy {

Checked<TelemetryEdges> open_telemetry_edges(const config::TelemetrySettings& settings,
                                             const std::optional<ListenAddress>& metrics,
                                             boost::asio::io_context& io, HttpHandler handler) {
  TelemetryEdges edges;
  if (settings.file) {
    auto opened = telemetry::open_record_file(*settings.file, {.max_lines = settings.queue_lines});
    if (!opened) {
      return Problem{fmt::format("cannot open the telemetry file {}: {}", *settings.file,
                                 opened.error().message())};
    }
    edges.record_file = std::move(*opened);
    spdlog::info("writing call records to {}", *settings.file);
  }
  if (settings.sample_file) {
    const std::string& path = *settings.sample_file;
    auto opened = telemetry::open_record_file(path, {.max_lines = settings.queue_lines});
    if (!opened) {
      return Problem{fmt::format("cannot open the answer samples file {}: {}", path,
                                 opened.error().message())};
    }
    // It holds payloads: the owner's alone, even when it existed with a wider mode.
    if (::chmod(path.c_str(), 0600) != 0) {
      return Problem{fmt::format("cannot make the answer samples file {} private (mode 0600): {}",
                                 path, std::strerror(errno))};
    }
    edges.sampler =
        std::make_unique<telemetry::AnswerSampler>(std::move(*opened), settings.sample_percent);
    spdlog::info("writing {}% of the answers to {}", settings.sample_percent, path);
  }
  if (metrics) {
    const ListenAddress& listen = *metrics;
    auto started = MetricsServer::start(io, listen, std::move(handler),
                                        {.loopback_hosts_only = listen.address.is_loopback()});
    if (!started) {
      return Problem{fmt::format("cannot serve metrics on {}: {}",
                                 settings.metrics_listen.value_or(""), started.error().message())};
    }
    edges.metrics = std::move(*started);
    const std::string where = to_string(edges.metrics->local_endpoint());
    spdlog::info("metrics endpoint: http://{}/metrics and /health", where);
    if (!listen.address.is_loopback()) {
      spdlog::warn(
          "the metrics endpoint listens on {}, beyond this machine: it names the server's tools "
          "and has no authentication",
          where);
    }
  }
  return edges;
}

HttpAnswer answer_status_request(std::string_view target, const telemetry::TrafficMetrics& traffic,
                                 const telemetry::ProcessStatus& process) {
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/metrics") {
    return {200, "text/plain; version=0.0.4; charset=utf-8",
            telemetry::metrics_page(traffic, process)};
  }
  if (path == "/health") {
    telemetry::HealthPage page = telemetry::health_page(traffic, process);
    return {page.status, "application/json", std::move(page.body)};
  }
  // Nothing else is served, not even an index at "/": the endpoint's whole surface is these two
  // pages (docs/security.md). The body is fixed: it never echoes the target.
  return {404, "text/plain; charset=utf-8", "not found: try /metrics or /health\n"};
}

}  // namespace ctxguard::proxy
