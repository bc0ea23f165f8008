#include "telemetry/call_telemetry.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

using namespace ctxguard::telemetry;
using namespace std::chrono_literals;

namespace {

// Captures what is logged while it lives.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_pattern("%l %v");
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return out_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream out_;
};

CallEvent call(bool oversized) {
  CallEvent event;
  event.kind = CallKind::kCall;
  event.tool = "list";
  event.id = 3;
  event.budget = 4000;
  event.original_tokens = oversized ? 50000 : 100;
  event.final_tokens = oversized ? 3900 : 100;
  event.stages = oversized ? std::vector<std::string>{"paginate"} : std::vector<std::string>{};
  event.outcome = outcome_of(event.kind, event.stages);
  event.over_budget = oversized;
  return event;
}

}  // namespace

TEST_CASE("call telemetry: a record reaches the log, the counters and the file") {
  std::string written;
  std::mutex mutex;
  auto file = std::make_unique<RecordWriter>(
      [&](std::string_view batch) {
        std::lock_guard lock(mutex);
        written += batch;
        return std::error_code{};
      },
      WriterLimits{}, "test");
  const LogCapture log;
  {
    CallTelemetry telemetry(std::move(file));
    telemetry.record(call(true), OversizeAlarm::Clock::now());
    telemetry.record(call(false), OversizeAlarm::Clock::now());
    CHECK(telemetry.traffic().summary().tool_calls == 2);
    CHECK(telemetry.traffic().summary().paginated == 1);
  }  // the writer drains
  // One INFO line for the decision; the call passed through is DEBUG.
  CHECK(log.text().find("info call tool=list tokens=50000->3900 ") != std::string::npos);
  CHECK(log.text().find("outcome=paginated reduction=92.2% budget=4000 oversized id=3") !=
        std::string::npos);
  CHECK(log.text().find("tokens=100->100") == std::string::npos);
  std::lock_guard lock(mutex);
  CHECK(std::count(written.begin(), written.end(), '\n') == 2);
  CHECK(parse_call_event(written.substr(0, written.find('\n')))->outcome == Outcome::kPaginated);
}

TEST_CASE("call telemetry: oversized tool calls over 5% raise one warning per window") {
  const LogCapture log;
  CallTelemetry telemetry(nullptr, {.window = 300s, .threshold = 0.05, .min_calls = 20});
  const auto start = OversizeAlarm::Clock::time_point(100h);
  for (int i = 0; i < 19; ++i) telemetry.record(call(false), start + 1s * i);
  telemetry.record(call(true), start + 20s);
  telemetry.record(call(true), start + 21s);  // 2 of 21
  telemetry.record(call(true), start + 22s);  // same window: no second warning
  const std::string text = log.text();
  const std::string warning = "warning oversized answers: 2 of the last 21 tool calls (9.5%)";
  CHECK(text.find(warning) != std::string::npos);
  CHECK(text.find("oversized answers:", text.find(warning) + warning.size()) == std::string::npos);
  CHECK(telemetry.alarm().alerts() == 1);
}

TEST_CASE("call telemetry: fetches do not count towards the oversize alarm") {
  const LogCapture log;
  CallTelemetry telemetry(nullptr, {.window = 300s, .threshold = 0.05, .min_calls = 1});
  CallEvent fetch;
  fetch.kind = CallKind::kFetch;
  fetch.outcome = Outcome::kFetched;
  fetch.over_budget = true;  // never set by the interceptor; the alarm must not look anyway
  telemetry.record(std::move(fetch), OversizeAlarm::Clock::time_point(1h));
  CHECK(telemetry.alarm().current(OversizeAlarm::Clock::time_point(1h)).calls == 0);
}
