#include "telemetry/oversize_alarm.hpp"

#include <algorithm>

namespace ctxguard::telemetry {

namespace {

std::int64_t second_of(OversizeAlarm::Clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
}

}  // namespace

OversizeAlarm::OversizeAlarm(OversizeAlarmOptions options)
    : options_(options),
      seconds_(static_cast<std::size_t>(std::max<std::int64_t>(options.window.count(), 1))) {}

std::optional<OversizeAlert> OversizeAlarm::add(Clock::time_point now, bool oversized) {
  const std::int64_t index = second_of(now);
  Second& second = seconds_[static_cast<std::size_t>(index) % seconds_.size()];
  if (second.index != index) second = Second{index, 0, 0};
  ++second.calls;
  if (oversized) ++second.oversized;

  // Any call may be the one that makes the window count: 2 oversized calls followed by 18 small
  // ones are 10% of 20 at the 20th, a small one. (Once the count is reached, only an oversized
  // call raises the share, but checking every call costs one pass over the ring.)
  if (last_alert_ && now - *last_alert_ < options_.window) return std::nullopt;
  const OversizeAlert alert = current(now);
  if (alert.calls < options_.min_calls || alert.share() <= options_.threshold) return std::nullopt;
  last_alert_ = now;
  ++alerts_;
  return alert;
}

OversizeAlert OversizeAlarm::current(Clock::time_point now) const {
  const std::int64_t newest = second_of(now);
  const auto size = static_cast<std::int64_t>(seconds_.size());
  OversizeAlert alert;
  for (const Second& second : seconds_) {
    if (second.index < 0 || second.index > newest || newest - second.index >= size) continue;
    alert.calls += second.calls;
    alert.oversized += second.oversized;
  }
  return alert;
}

}  // namespace ctxguard::telemetry
