#include "telemetry/call_telemetry.hpp"

#include "telemetry/call_log.hpp"

namespace ctxguard::telemetry {

CallTelemetry::CallTelemetry(std::unique_ptr<RecordWriter> file, OversizeAlarmOptions alarm,
                             std::unique_ptr<AnswerSampler> sampler)
    : file_(std::move(file)), sampler_(std::move(sampler)), alarm_(alarm) {}

void CallTelemetry::record(CallEvent&& event, OversizeAlarm::Clock::time_point now) {
  log_call_event(event);
  // The oversize alert is about the server's answers to tool calls, whatever the mode.
  if (event.kind == CallKind::kCall || event.kind == CallKind::kTask) {
    if (const auto alert = alarm_.add(now, event.over_budget)) {
      log_oversize_alert(*alert, alarm_.options());
    }
  }
  traffic_.add(event);
  if (file_) file_->push(to_json_line(event));
}

}  // namespace ctxguard::telemetry
