#include "proxy/status_report.hpp"

#include "proxy/telemetry_edges.hpp"

namespace ctxguard::proxy {

StatusReport::StatusReport(const Interceptor& interceptor, const ConfigReloader& reloader,
                           const telemetry::CallTelemetry& telemetry)
    : interceptor_(interceptor), reloader_(reloader), telemetry_(telemetry) {}

telemetry::ProcessStatus StatusReport::process_status(
    const SessionStatus& session, std::chrono::steady_clock::time_point now) const {
  telemetry::ProcessStatus status;
  status.version = CTXGUARD_VERSION;
  status.started = started_wall_;
  status.uptime = now - started_;
  status.server_pid = session.server_pid;
  status.server_running = !session.server_exit.has_value();
  if (session.server_exit) status.server_exit = session.server_exit->describe();
  status.client_connected = session.client_connected;
  status.cache = interceptor_.cache().stats();
  status.cache_max_bytes = interceptor_.cache().max_bytes();
  status.reloads_applied = reloader_.reloads_applied();
  status.reloads_refused = reloader_.reloads_refused();
  if (telemetry_.file() != nullptr) status.telemetry_file = telemetry_.file()->counters();
  if (telemetry_.sampler() != nullptr)
    status.answer_samples = telemetry_.sampler()->file_counters();
  status.messages_from_client = session.messages_from_client;
  status.messages_from_server = session.messages_from_server;
  status.oversized_lines_dropped = session.oversized_lines_dropped;
  status.non_protocol_lines_dropped = interceptor_.non_protocol_lines_dropped();
  status.client_requests_in_flight =
      interceptor_.router().in_flight(session::Direction::kClientToServer);
  status.server_requests_in_flight =
      interceptor_.router().in_flight(session::Direction::kServerToClient);
  status.queued_to_client_bytes = session.queued_to_client_bytes;
  status.queued_to_server_bytes = session.queued_to_server_bytes;
  status.oversize_alarm = telemetry_.alarm().options();
  status.oversize_window = telemetry_.alarm().current(now);
  status.oversize_alerts = telemetry_.alarm().alerts();
  return status;
}

HttpAnswer StatusReport::answer(std::string_view target, const SessionStatus& session) const {
  return answer_status_request(target, telemetry_.traffic(),
                               process_status(session, std::chrono::steady_clock::now()));
}

}  // namespace ctxguard::proxy
