// Hot reload during a burst of calls (issue 5): the message path must not wait for a reload.
//
// One io_context runs, as in the proxy, the Interceptor's calls and a ConfigReloader watching a
// real file. Each call (a tools/call request and a ~100 KB answer that gets paginated) is one
// handler on the io thread, so reload work lands between calls exactly as it would between
// messages. Two phases of the same calls: the file untouched, then the file rewritten every
// --every-ms and reload_now (SIGHUP's path) every 25 calls. Printed: per-call latency in both
// phases, how many reloads were applied, the worker's read+parse+resolve time, and the time the
// io thread spent swapping a profile in (the only reload work on the message path).
//
//   reload_bench [--calls N] [--every-ms M]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "config/profile.hpp"
#include "percentile.hpp"
#include "proxy/config_reloader.hpp"
#include "proxy/interceptor.hpp"

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using ctxguard::proxy::Verdict;
using ctxguard::session::Direction;

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// A realistic file: the documented defaults plus 20 per-tool rules.
std::string config_text(std::size_t budget) {
  std::string text = "tokenBudget: " + std::to_string(budget) + "\npageSize: 50\ntools:\n";
  for (int i = 0; i < 20; ++i) {
    text += "  - match: \"tool_" + std::to_string(i) +
            "_*\"\n    pageSize: " + std::to_string(10 + i) +
            "\n    fields: [id, status, guest.name]\n";
  }
  return text;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  const auto temporary = path.string() + ".new";
  std::ofstream(temporary) << text;
  std::filesystem::rename(temporary, path);  // as editors save
}

std::string answer_line(int id) {
  std::string rows = "[";
  for (int i = 0; i < 2000; ++i) {
    if (i > 0) rows += ',';
    rows += "{\"id\":" + std::to_string(i) + ",\"status\":\"confirmed\",\"guest\":{\"name\":\"G" +
            std::to_string(i) + "\"}}";
  }
  rows += ']';
  std::string escaped;
  for (const char c : rows) {
    if (c == '"') escaped += '\\';
    escaped += c;
  }
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"rows\\\":" + escaped +
         "}\"}]}}";
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2000;
  int every_ms = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--calls") calls = std::atoi(argv[i + 1]);
    if (flag == "--every-ms") every_ms = std::atoi(argv[i + 1]);
  }
  spdlog::set_level(spdlog::level::warn);  // one line per call or reload is not what is measured
  const auto path = std::filesystem::temp_directory_path() /
                    ("ctxguard-reload-bench-" + std::to_string(::getpid()) + ".yaml");
  write_file(path, config_text(4000));

  ctxguard::config::ConfigSources sources;
  sources.file_path = path.string();
  auto loaded = ctxguard::config::load_profile(sources);
  if (!loaded) return 1;
  const auto profile = *loaded;

  // The worker's share, measured apart: read + parse + resolve of this file.
  std::vector<double> load_ms;
  for (int i = 0; i < 200; ++i) {
    const auto start = Clock::now();
    auto again = ctxguard::config::load_profile(sources, profile.get());
    load_ms.push_back(ms(Clock::now() - start));
    if (!again) return 1;
  }

  const auto codec = ctxguard::cursor::CursorCodec::with_random_key(std::chrono::seconds(600));
  ctxguard::proxy::Interceptor interceptor(profile, codec);
  asio::io_context io;
  std::vector<double> swap_ms;
  ctxguard::proxy::ConfigReloader reloader(io, sources, profile,
                                           [&](ctxguard::config::ProfilePtr next) {
                                             const auto start = Clock::now();
                                             interceptor.set_profile(std::move(next), start);
                                             swap_ms.push_back(ms(Clock::now() - start));
                                           });
  reloader.start();

  std::vector<std::string> answers;
  for (int i = 0; i < calls; ++i) answers.push_back(answer_line(i));

  const auto run_phase = [&](bool reloading) {
    std::vector<double> latency;
    std::atomic<bool> done{false};
    std::thread writer;
    if (reloading) {
      writer = std::thread([&] {
        for (std::size_t n = 0; !done; ++n) {
          write_file(path, config_text(n % 2 == 0 ? 4100 : 4000));
          std::this_thread::sleep_for(std::chrono::milliseconds(every_ms));
        }
      });
    }
    int next = 0;
    std::function<void()> one_call = [&] {
      const int id = next++;
      const std::string request = "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
                                  ",\"method\":\"tools/call\",\"params\":{\"name\":\"list\"}}";
      const auto start = Clock::now();
      interceptor.on_line(Direction::kClientToServer, request, Clock::now(),
                          std::chrono::system_clock::now());
      const Verdict verdict = interceptor.on_line(Direction::kServerToClient, answers[id],
                                                  Clock::now(), std::chrono::system_clock::now());
      latency.push_back(ms(Clock::now() - start));
      if (verdict.action != Verdict::Action::kSend) std::abort();  // every answer is paginated
      if (reloading && id % 25 == 0) reloader.reload_now("bench");
      if (next < calls) {
        asio::post(io, one_call);
      } else {
        done = true;
      }
    };
    asio::post(io, one_call);
    while (!done) io.run_one();
    if (writer.joinable()) writer.join();
    return latency;
  };

  run_phase(false);  // warm-up: allocator, caches, the first entries' evictions
  const std::vector<double> quiet = run_phase(false);
  const std::uint64_t before = reloader.reloads_applied();
  const std::vector<double> busy = run_phase(true);
  const std::uint64_t reloads = reloader.reloads_applied() - before;
  std::filesystem::remove(path);

  std::printf(
      "calls per phase: %d (a 2,000-row answer paginated each), file rewritten every %d ms\n",
      calls, every_ms);
  std::printf("reloads applied during the busy phase: %llu\n",
              static_cast<unsigned long long>(reloads));
  std::printf("worker (read+parse+resolve, 20 rules): median %.3f ms, p99 %.3f ms\n",
              percentile(load_ms, 0.5), percentile(load_ms, 0.99));
  if (!swap_ms.empty()) {
    std::printf("io thread per reload (profile swap): median %.4f ms, max %.4f ms\n",
                percentile(swap_ms, 0.5), percentile(swap_ms, 1.0));
  }
  std::printf("per call, quiet : median %.3f ms, p99 %.3f ms, max %.3f ms\n",
              percentile(quiet, 0.5), percentile(quiet, 0.99), percentile(quiet, 1.0));
  std::printf("per call, reload: median %.3f ms, p99 %.3f ms, max %.3f ms\n", percentile(busy, 0.5),
              percentile(busy, 0.99), percentile(busy, 1.0));
  std::printf("ratio reload/quiet: median %.2fx, p99 %.2fx\n",
              percentile(busy, 0.5) / percentile(quiet, 0.5),
              percentile(busy, 0.99) / percentile(quiet, 0.99));
  return reloads > 0 ? 0 : 1;
}
