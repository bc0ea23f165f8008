#pragma once
// What handling one line gathers on its way through the Interceptor and its parts: its clocks,
// the call records of the answers it carries (complete once its verdict is known), and the
// discovery it starts, if it holds an initialize or server/discover result (toolList compact).
// Made for each line and gone with it: no line's state outlives its handling.

#include <chrono>
#include <optional>
#include <vector>

#include "config/profile.hpp"
#include "mcp/protocol_state.hpp"
#include "telemetry/call_event.hpp"

namespace ctxguard::proxy {

struct LineContext {
  using Clock = std::chrono::steady_clock;
  using WallClock = std::chrono::system_clock;

  // An initialize / server/discover result held while ctxguard lists the server's tools.
  struct DiscoveryStart {
    mcp::Era era = mcp::Era::kLegacy;
    config::ProfilePtr profile;  // the one the request came under
  };

  LineContext(Clock::time_point line_now, WallClock::time_point line_wall_now)
      : now(line_now), wall_now(line_wall_now) {}

  Clock::time_point now;  // the session's clock when the line came
  WallClock::time_point wall_now;
  Clock::time_point started = Clock::now();  // when ctxguard began to handle it
  std::vector<telemetry::CallEvent> events;  // of the answers it carries
  std::optional<DiscoveryStart> discovery_start;

  // What handling the line has cost so far: a record's proxy latency.
  Clock::duration elapsed() const { return Clock::now() - started; }
};

}  // namespace ctxguard::proxy
