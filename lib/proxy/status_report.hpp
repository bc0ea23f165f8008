#pragma once
// What the --metrics-listen endpoint reports: the session's own status, and the figures that
// live elsewhere (the interceptor's cache, requests in flight and dropped lines, the reloader's
// counts, the call telemetry), gathered into one telemetry::ProcessStatus per request.
//
// Executor: the io thread, like everything it reads.

#include <chrono>
#include <string_view>

#include "proxy/config_reloader.hpp"
#include "proxy/interceptor.hpp"
#include "proxy/metrics_server.hpp"
#include "proxy/session.hpp"
#include "telemetry/call_telemetry.hpp"
#include "telemetry/status_pages.hpp"

namespace ctxguard::proxy {

class StatusReport {
 public:
  // All three outlive the report. The process's start is taken as now.
  StatusReport(const Interceptor& interceptor, const ConfigReloader& reloader,
               const telemetry::CallTelemetry& telemetry);

  // The figures of the process at `now`, the session's among them.
  telemetry::ProcessStatus process_status(const SessionStatus& session,
                                          std::chrono::steady_clock::time_point now) const;

  // GET `target` on the endpoint: /metrics, /health, 404 for the rest (answer_status_request).
  HttpAnswer answer(std::string_view target, const SessionStatus& session) const;

 private:
  const Interceptor& interceptor_;
  const ConfigReloader& reloader_;
  const telemetry::CallTelemetry& telemetry_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  const std::chrono::system_clock::time_point started_wall_ = std::chrono::system_clock::now();
};

}  // namespace ctxguard::proxy
