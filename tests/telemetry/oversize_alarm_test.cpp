#include "telemetry/oversize_alarm.hpp"

#include <catch2/catch.hpp>

using namespace ctxguard::telemetry;
using namespace std::chrono_literals;
using Clock = OversizeAlarm::Clock;

namespace {

const Clock::time_point kStart = Clock::time_point(1000h);

}  // namespace

TEST_CASE("oversize_alarm: 5% oversized is not enough, more is") {
  OversizeAlarm alarm({.window = 300s, .threshold = 0.05, .min_calls = 20});
  // 1 oversized in 20 calls is exactly 5%: no alert.
  for (int i = 0; i < 19; ++i) CHECK_FALSE(alarm.add(kStart + 1s * i, false).has_value());
  CHECK_FALSE(alarm.add(kStart + 19s, true).has_value());
  // A second one makes 2 in 21 (9.5%).
  const auto alert = alarm.add(kStart + 20s, true);
  REQUIRE(alert.has_value());
  CHECK(alert->calls == 21);
  CHECK(alert->oversized == 2);
  CHECK(alert->share() == Approx(2.0 / 21));
  CHECK(alarm.alerts() == 1);
}

TEST_CASE("oversize_alarm: too few calls in the window raise nothing") {
  OversizeAlarm alarm({.window = 300s, .threshold = 0.05, .min_calls = 20});
  for (int i = 0; i < 19; ++i) CHECK_FALSE(alarm.add(kStart + 1s * i, true).has_value());
  CHECK(alarm.add(kStart + 19s, true).has_value());  // the 20th: 100%
}

TEST_CASE("oversize_alarm: the call that brings the window to min_calls may be a small one") {
  OversizeAlarm alarm({.window = 300s, .threshold = 0.05, .min_calls = 20});
  CHECK_FALSE(alarm.add(kStart, true).has_value());
  CHECK_FALSE(alarm.add(kStart + 1s, true).has_value());
  for (int i = 0; i < 17; ++i) CHECK_FALSE(alarm.add(kStart + 2s + 1s * i, false).has_value());
  // The 20th call: 2 oversized of 20 (10%).
  const auto alert = alarm.add(kStart + 19s, false);
  REQUIRE(alert.has_value());
  CHECK(alert->calls == 20);
  CHECK(alert->oversized == 2);
  // Once per window, small or oversized calls alike.
  CHECK_FALSE(alarm.add(kStart + 20s, false).has_value());
  CHECK_FALSE(alarm.add(kStart + 21s, true).has_value());
  CHECK(alarm.alerts() == 1);
}

TEST_CASE("oversize_alarm: a share that falls to 5% or below raises nothing") {
  OversizeAlarm alarm({.window = 300s, .threshold = 0.05, .min_calls = 20});
  CHECK_FALSE(alarm.add(kStart, true).has_value());
  for (int i = 1; i < 40; ++i) CHECK_FALSE(alarm.add(kStart + 1s * i, false).has_value());
  CHECK(alarm.alerts() == 0);
}

TEST_CASE("oversize_alarm: at most one alert per window, another after it") {
  OversizeAlarm alarm({.window = 60s, .threshold = 0.05, .min_calls = 4});
  int alerts = 0;
  // Every call oversized, one per second for three minutes.
  for (int i = 0; i < 180; ++i) alerts += alarm.add(kStart + 1s * i, true).has_value() ? 1 : 0;
  // At seconds 3, 63 and 123.
  CHECK(alerts == 3);
  CHECK(alarm.alerts() == 3);
}

TEST_CASE("oversize_alarm: calls older than the window no longer count") {
  OversizeAlarm alarm({.window = 60s, .threshold = 0.05, .min_calls = 1});
  for (int i = 0; i < 30; ++i) alarm.add(kStart + 1s * i, false);
  CHECK(alarm.current(kStart + 30s).calls == 30);
  CHECK(alarm.current(kStart + 88s).calls == 1);  // the window is seconds 29..88
  CHECK(alarm.current(kStart + 89s).calls == 0);
  // A burst after a quiet hour counts alone: 1 oversized of 1.
  const auto alert = alarm.add(kStart + 3600s, true);
  REQUIRE(alert.has_value());
  CHECK(alert->calls == 1);
}
