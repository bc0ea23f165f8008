// Throughput of chunking (lib/pipeline/text/text_chunk.cpp) on a realistic application log
// generated in memory from a fixed seed: timestamped entries at several levels, about 5% of them
// errors with a 10-30 line Java stack trace or Python traceback. Measures the LineIndex build,
// chunk_text and, as the baseline, one budget::estimate_tokens of the whole text (the least any
// chunking must do: price every byte once), in turn within each run. Prints the median and best of
// the runs in MiB/s, the ratio chunk_text / estimate_tokens, the number of chunks and their average
// fill, and whether the chunks cover the text exactly and within budget (OK/FAIL; exit status 1
// on FAIL). scripts/bench.sh runs it.
//
//   chunk_bench [--mib N] [--chunk-tokens N] [--runs N]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "budget/token_estimator.hpp"
#include "pipeline/text/text_chunk.hpp"
#include "pipeline/text/text_digest.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ctxguard::pipeline::LineIndex;
using ctxguard::pipeline::TextChunk;

constexpr std::string_view kWords[] = {
    "request",  "completed", "user",     "session", "cache",   "miss",     "hit",    "order",
    "payment",  "accepted",  "retrying", "timeout", "after",   "ms",       "for",    "the",
    "queue",    "worker",    "started",  "stopped", "records", "flushed",  "to",     "disk",
    "upstream", "returned",  "status",   "slow",    "query",   "detected", "tenant", "job"};
constexpr std::string_view kLoggers[] = {
    "com.example.orders.OrderService", "com.example.http.RequestHandler",
    "org.springframework.web.servlet.DispatcherServlet", "com.zaxxer.hikari.pool.HikariPool",
    "io.netty.channel.DefaultChannelPipeline"};

std::string words(std::mt19937& random, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out += ' ';
    out += kWords[random() % std::size(kWords)];
  }
  return out;
}

void timestamp(std::string& out, std::mt19937& random, std::size_t tick) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "2024-05-%02zu %02zu:%02zu:%02zu.%03u ",
                1 + tick / 86400 % 28, tick / 3600 % 24, tick / 60 % 60, tick % 60,
                static_cast<unsigned>(random() % 1000));
  out += buffer;
}

// ~`bytes` of log: INFO/DEBUG/WARN one-liners, and 5% ERROR entries with a stack trace.
std::string application_log(std::size_t bytes) {
  std::mt19937 random(20240501);
  std::string out;
  out.reserve(bytes + 8192);
  for (std::size_t tick = 0; out.size() < bytes; ++tick) {
    timestamp(out, random, tick);
    const std::string_view logger = kLoggers[random() % std::size(kLoggers)];
    if (random() % 20 == 0) {
      const std::size_t frames = 10 + random() % 21;
      if (random() % 3 == 0) {
        out += "ERROR [worker-" + std::to_string(random() % 8) + "] tasks - task failed\n";
        out += "Traceback (most recent call last):\n";
        for (std::size_t f = 0; f < frames / 2; ++f) {
          out += "  File \"/app/worker/tasks.py\", line " + std::to_string(random() % 900) +
                 ", in step_" + std::to_string(f) +
                 "\n    value = handle(item, attempt=" + std::to_string(f) + ")\n";
        }
        out += "ValueError: invalid literal for int() with base 10: '" + words(random, 1) + "'\n";
      } else {
        out += "ERROR [http-nio-8080-exec-" + std::to_string(random() % 16) + "] " +
               std::string(logger) + " - " + words(random, 6) + "\n";
        out += "java.lang.IllegalStateException: " + words(random, 5) + "\n";
        for (std::size_t f = 0; f + 3 < frames; ++f) {
          out += "\tat " + std::string(kLoggers[random() % std::size(kLoggers)]) + "." +
                 std::string(kWords[random() % std::size(kWords)]) +
                 "(Source.java:" + std::to_string(random() % 900) + ")\n";
        }
        out += "Caused by: java.net.SocketTimeoutException: Read timed out\n";
        out += "\tat java.base/java.net.SocketInputStream.read(SocketInputStream.java:168)\n";
        out += "\t... " + std::to_string(frames) + " more\n";
      }
    } else {
      constexpr std::string_view kLevels[] = {"INFO ", "INFO ", "INFO ", "DEBUG", "WARN "};
      out += std::string(kLevels[random() % std::size(kLevels)]) + " [main] " +
             std::string(logger) + " - " + words(random, 4 + random() % 16) + "\n";
    }
  }
  return out;
}

// Seconds of each run of one measured step; the steps run in turn within every run, so that a
// busy moment of the shared machine slows all of them alike and their ratio stays meaningful.
struct Timing {
  std::vector<double> seconds;

  double median() const {
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }
  double best() const { return *std::min_element(seconds.begin(), seconds.end()); }
};

template <class Run>
void time_run(Timing& timing, Run&& run) {
  const auto start = Clock::now();
  run();
  timing.seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
}

void report(const char* what, std::size_t bytes, const Timing& timing) {
  const double mib = static_cast<double>(bytes) / (1 << 20);
  std::printf("%-26s median %7.1f MiB/s (%6.2f ms), best %7.1f MiB/s (%6.2f ms)\n", what,
              mib / timing.median(), timing.median() * 1e3, mib / timing.best(),
              timing.best() * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mib = 10;
  std::size_t chunk_tokens = 2000;
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view option = argv[i];
    if (option == "--mib") {
      mib = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (option == "--chunk-tokens") {
      chunk_tokens = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (option == "--runs") {
      runs = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "usage: chunk_bench [--mib N] [--chunk-tokens N] [--runs N]\n");
      return 2;
    }
  }
  const std::string text = application_log(mib << 20);
  std::printf("%.1f MiB of application log, chunks of %zu tokens, %d runs\n",
              static_cast<double>(text.size()) / (1 << 20), chunk_tokens, runs);

  std::size_t tokens = 0;
  std::size_t lines = 0;
  const LineIndex line_index(text);
  std::vector<TextChunk> chunks;
  Timing estimate;
  Timing index;
  Timing chunking;
  Timing digesting;
  std::size_t digest_entries = 0;
  for (int run = 0; run < runs; ++run) {
    time_run(estimate, [&] { tokens = ctxguard::budget::estimate_tokens(text); });
    time_run(index, [&] { lines = LineIndex(text).lines(); });
    time_run(chunking, [&] {
      chunks = ctxguard::pipeline::chunk_text(text, {.tokens = chunk_tokens}, line_index);
    });
    time_run(digesting, [&] {
      digest_entries =
          ctxguard::pipeline::digest_text(text, line_index).at("entries").to_number<std::size_t>();
    });
  }

  report("estimate_tokens (baseline)", text.size(), estimate);
  report("LineIndex", text.size(), index);
  report("chunk_text", text.size(), chunking);
  std::printf("chunk_text / estimate_tokens: %.2fx (medians), %.2fx (best runs)\n",
              chunking.median() / estimate.median(), chunking.best() / estimate.best());
  report("digest_text", text.size(), digesting);
  std::printf("digest_text / estimate_tokens: %.2fx (medians), %.2fx (best runs); %zu entries\n",
              digesting.median() / estimate.median(), digesting.best() / estimate.best(),
              digest_entries);

  // Coverage and fill, checked outside the timed runs.
  bool covers = !chunks.empty() && chunks.front().begin == 0 && chunks.back().end == text.size();
  std::size_t chunk_total = 0;
  std::size_t over_budget = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].end <= chunks[i].begin || (i > 0 && chunks[i].begin != chunks[i - 1].end)) {
      covers = false;
    }
    const std::size_t cost = ctxguard::budget::estimate_tokens(
        std::string_view(text).substr(chunks[i].begin, chunks[i].end - chunks[i].begin));
    chunk_total += cost;
    if (cost > chunk_tokens) ++over_budget;
  }
  const double average =
      chunks.empty() ? 0 : static_cast<double>(chunk_total) / static_cast<double>(chunks.size());
  std::printf("%zu lines, %zu tokens; %zu chunks, average %.0f tokens (%.0f%% of %zu), %zu over\n",
              lines, tokens, chunks.size(), average,
              100.0 * average / static_cast<double>(chunk_tokens), chunk_tokens, over_budget);
  std::printf("chunks cover the text exactly and within budget: %s\n",
              covers && over_budget == 0 ? "OK" : "FAIL");
  return covers && over_budget == 0 ? 0 : 1;
}
