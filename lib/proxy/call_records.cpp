#include "proxy/call_records.hpp"

#include "telemetry/call_log.hpp"

namespace ctxguard::proxy {

telemetry::CallEvent CallRecords::make(telemetry::CallKind kind, std::string_view tool,
                                       const boost::json::value& id,
                                       WallClock::time_point wall_now) const {
  telemetry::CallEvent event;
  event.time = wall_now;
  event.id = id;
  event.kind = kind;
  event.tool = std::string(tool);
  // The client is the one stdio peer: the latest name it gave is the one that asked.
  event.client = std::string(protocol_.client_name());
  return event;
}

void CallRecords::emit(telemetry::CallEvent&& event) const {
  if (sink_) {
    sink_(std::move(event));
  } else {
    telemetry::log_call_event(event);
  }
}

void take_record(telemetry::CallEvent& event, pipeline::CallRecord&& record) {
  event.original_tokens = record.original_tokens;
  event.final_tokens = record.final_tokens;
  event.items_total = record.items_total;
  event.items_shown = record.items_shown;
  event.stages.assign(record.stages.begin(), record.stages.end());
  event.error = std::string(record.error);
  if (record.limit) event.limit = std::string(budget::to_string(*record.limit));
  if (record.fill) event.fill_pct = 100.0 * *record.fill;
  event.outcome = telemetry::outcome_of(event.kind, event.stages);
}

}  // namespace ctxguard::proxy
