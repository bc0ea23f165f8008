// What telemetry costs a call (issue 6): "telemetry never slows or fails a call".
//
// The Interceptor handles tool calls as the proxy does (a tools/call request, then its answer:
// every other one a ~1 KB answer passed through, every other one a ~100 KB answer that gets
// paginated), with three call sinks in interleaved rounds:
//   off   - records are dropped on the floor (the cost of building them is still paid);
//   file  - CallTelemetry: the log line (to a null sink at INFO: formatting, not I/O), the alarm,
//           the counters and a RecordWriter appending to a real file;
//   stuck - the same with a writer whose sink never returns: its queue fills and then every
//           record is dropped. A call must cost the same as with the file.
// Printed: per-call p50/p99 of each, the ratios, how many records each writer wrote or dropped,
// and the time to render /metrics and /health with 200 tools.
//
//   telemetry_bench [--calls N] [--rounds R]

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "config/profile.hpp"
#include "percentile.hpp"
#include "proxy/interceptor.hpp"
#include "telemetry/call_telemetry.hpp"
#include "telemetry/status_pages.hpp"

using Clock = std::chrono::steady_clock;
using ctxguard::session::Direction;
namespace telemetry = ctxguard::telemetry;

namespace {

double us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

std::string answer_line(int id, int rows) {
  std::string items = "[";
  for (int i = 0; i < rows; ++i) {
    if (i > 0) items += ',';
    items += "{\\\"id\\\":" + std::to_string(i) + ",\\\"status\\\":\\\"confirmed\\\"}";
  }
  items += ']';
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"rows\\\":" + items +
         "}\"}]}}";
}

std::string request_line(int id) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"method\":\"tools/call\",\"params\":{\"name\":\"list_bookings\",\"arguments\":{}}}";
}

// A sink that blocks until the bench ends: the writer's queue fills, then drops.
struct StuckSink {
  std::mutex mutex;
  std::condition_variable released;
  bool open = false;
  std::error_code operator()(std::string_view) {
    std::unique_lock lock(mutex);
    released.wait(lock, [&] { return open; });
    return {};
  }
  void release() {
    std::lock_guard lock(mutex);
    open = true;
    released.notify_all();
  }
};

}  // namespace

int main(int argc, char** argv) {
  int calls = 1000;
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--calls") calls = std::atoi(argv[i + 1]);
    if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
  }
  // INFO lines are formatted as in production, then discarded.
  auto logger =
      std::make_shared<spdlog::logger>("bench", std::make_shared<spdlog::sinks::null_sink_mt>());
  logger->set_level(spdlog::level::info);
  spdlog::set_default_logger(logger);

  const auto codec = ctxguard::cursor::CursorCodec::with_random_key(std::chrono::seconds(600));
  ctxguard::proxy::Interceptor interceptor(ctxguard::config::Profile::of({}), codec);
  std::vector<std::string> answers;
  for (int i = 0; i < calls; ++i) answers.push_back(answer_line(i, i % 2 == 0 ? 20 : 2500));

  const auto path = std::filesystem::temp_directory_path() /
                    ("ctxguard-telemetry-bench-" + std::to_string(::getpid()) + ".jsonl");
  auto file = telemetry::open_record_file(path.string());
  if (!file) return 1;
  telemetry::CallTelemetry with_file(std::move(*file));
  StuckSink stuck_sink;
  telemetry::CallTelemetry stuck(std::make_unique<telemetry::RecordWriter>(
      [&](std::string_view batch) { return stuck_sink(batch); },
      telemetry::WriterLimits{.max_lines = 256}, "stuck"));

  // Latencies by answer size: [0] passed through, [1] paginated.
  using Latencies = std::array<std::vector<double>, 2>;
  const auto run = [&](telemetry::CallTelemetry* sink, Latencies& latency) {
    interceptor.set_call_sink([sink](telemetry::CallEvent&& event) {
      if (sink != nullptr) sink->record(std::move(event), Clock::now());
    });
    for (int i = 0; i < calls; ++i) {
      const auto now = Clock::now();
      const auto wall = std::chrono::system_clock::now();
      const auto start = Clock::now();
      interceptor.on_line(Direction::kClientToServer, request_line(i), now, wall);
      interceptor.on_line(Direction::kServerToClient, answers[static_cast<std::size_t>(i)], now,
                          wall);
      latency[static_cast<std::size_t>(i % 2)].push_back(us(Clock::now() - start));
    }
  };
  Latencies off;
  Latencies to_file;
  Latencies to_stuck;
  for (int round = 0; round < rounds; ++round) {
    run(nullptr, off);
    run(&with_file, to_file);
    run(&stuck, to_stuck);
  }

  std::printf("%d calls per sink in %d interleaved rounds\n", calls * rounds, rounds);
  for (std::size_t kind = 0; kind < 2; ++kind) {
    const double off_p50 = percentile(off[kind], 0.5);
    std::printf("%s:\n", kind == 0 ? "~1 KB answers passed through" : "~100 KB answers paginated");
    std::printf("  %-6s p50 %8.1f us  p99 %8.1f us\n", "off", off_p50, percentile(off[kind], 0.99));
    for (const auto& [name, values] :
         {std::pair{"file", &to_file[kind]}, std::pair{"stuck", &to_stuck[kind]}}) {
      std::printf("  %-6s p50 %8.1f us  p99 %8.1f us  (p50 %+.1f us, %.3fx of off)\n", name,
                  percentile(*values, 0.5), percentile(*values, 0.99),
                  percentile(*values, 0.5) - off_p50, percentile(*values, 0.5) / off_p50);
    }
  }

  // /metrics and /health with many tools and outcomes.
  telemetry::TrafficMetrics traffic;
  for (int i = 0; i < 20000; ++i) {
    telemetry::CallEvent event;
    event.tool = "tool_" + std::to_string(i % 200);
    event.outcome = telemetry::kAllOutcomes[static_cast<std::size_t>(i) % 5];
    event.original_tokens = 1000 + static_cast<std::size_t>(i);
    event.final_tokens = 900;
    traffic.add(event);
  }
  const telemetry::ProcessStatus process;
  const auto render_start = Clock::now();
  std::size_t page_bytes = 0;
  for (int i = 0; i < 20; ++i) page_bytes = telemetry::metrics_page(traffic, process).size();
  const double metrics_us = us(Clock::now() - render_start) / 20;
  const auto health_start = Clock::now();
  for (int i = 0; i < 20; ++i) (void)telemetry::health_page(traffic, process);
  const double health_us = us(Clock::now() - health_start) / 20;
  std::printf("/metrics with 200 tools x 5 outcomes: %.0f us (%zu bytes); /health: %.1f us\n",
              metrics_us, page_bytes, health_us);

  const auto written = with_file.file()->counters();
  const auto dropped = stuck.file()->counters();
  std::printf("file writer: %llu written, %llu dropped; stuck writer: %llu queued, %llu dropped\n",
              static_cast<unsigned long long>(written.written),
              static_cast<unsigned long long>(written.dropped),
              static_cast<unsigned long long>(dropped.queued),
              static_cast<unsigned long long>(dropped.dropped));
  stuck_sink.release();
  std::filesystem::remove(path);
  return 0;
}
