#pragma once
// The oversize alert (docs/telemetry.md): a warning when answers over the budget ("oversized
// attempts") exceed 5% of tool calls over a sliding window, at most once per window. Memory is one
// counter pair per second of the window, whatever the call rate.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ctxguard::telemetry {

struct OversizeAlarmOptions {
  std::chrono::seconds window{300};
  double threshold = 0.05;     // the share of oversized calls that is too much
  std::size_t min_calls = 20;  // fewer calls in the window say nothing yet
};

struct OversizeAlert {
  std::size_t calls = 0;      // in the window
  std::size_t oversized = 0;  // of them
  double share() const {
    return calls == 0 ? 0.0 : static_cast<double>(oversized) / static_cast<double>(calls);
  }
};

class OversizeAlarm {
 public:
  using Clock = std::chrono::steady_clock;

  explicit OversizeAlarm(OversizeAlarmOptions options = {});

  // Counts one tool call at `now`; the alert to raise, when one is due.
  std::optional<OversizeAlert> add(Clock::time_point now, bool oversized);
  // The calls and oversized calls in the window ending at `now`.
  OversizeAlert current(Clock::time_point now) const;
  std::uint64_t alerts() const { return alerts_; }
  const OversizeAlarmOptions& options() const { return options_; }

 private:
  struct Second {
    std::int64_t index = -1;  // seconds since the clock's epoch; -1: unused
    std::uint32_t calls = 0;
    std::uint32_t oversized = 0;
  };

  OversizeAlarmOptions options_;
  std::vector<Second> seconds_;  // a ring: second i lives at i % size
  std::optional<Clock::time_point> last_alert_;
  std::uint64_t alerts_ = 0;
};

}  // namespace ctxguard::telemetry
