#pragma once
// The log's view of a call record: one compact line per decision (the Observability NFR: every
// pagination, summarization and chunking decision at INFO), oversized originals with their
// original and final size and the reduction. Calls forwarded unchanged are DEBUG.
//
//   call tool=list_bookings tokens=52011->3871 bytes=180233->14020 items=41/500
//     stages=compact,paginate outcome=paginated reduction=92.6% budget=4000 oversized id=7
//     proxy_ms=1.234 server_ms=45.600
// (one line). Observe mode starts with "observe" instead of "call"; failed fetches add
// error=<reason>.

#include <spdlog/common.h>

#include <string>

#include "telemetry/call_event.hpp"
#include "telemetry/oversize_alarm.hpp"

namespace ctxguard::telemetry {

std::string format_call_line(const CallEvent& event);
// INFO for decisions and oversized originals, DEBUG for answers forwarded unchanged.
spdlog::level::level_enum call_log_level(const CallEvent& event);
void log_call_event(const CallEvent& event);

// The warning raised when oversized answers exceed the alarm's share of calls.
void log_oversize_alert(const OversizeAlert& alert, const OversizeAlarmOptions& options);

}  // namespace ctxguard::telemetry
