// Throughput of the token estimator (lib/budget/token_estimator.cpp):
//   - estimate_tokens over a 10 MiB mixed corpus (JSON records, English prose, CJK prose, code),
//   - estimate_json_tokens over a parsed JSON document of 10 MiB (minified size) of small records,
//     and over a tool result holding the mixed corpus as its one text (the common MCP shape),
// generated in memory from a fixed seed. Prints the best and the median of the runs in GB/s
// (10^9 bytes per second) of wall time, and the median over the thread's CPU time (on a busy
// shared machine, wall time also counts the time the thread waited for a core). scripts/bench.sh
// runs it; the target is >= 1 GB/s for estimate_tokens.
//
//   estimator_bench [--mib N] [--runs N]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"

namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kWords[] = {
    "the",    "proxy",  "keeps",    "tool",    "results",  "within", "a",      "token",
    "budget", "server", "returns",  "large",   "listing",  "of",     "files",  "and",
    "cursor", "client", "fetches",  "next",    "page",     "when",   "needed", "context",
    "window", "model",  "estimate", "request", "response", "stream", "schema", "value"};
constexpr std::string_view kCjk[] = {"東京", "日本", "首都", "世界", "人口", "都市", "企業", "本社",
                                     "は",   "の",   "で",   "あり", "です", "ます", "、",   "。",
                                     "数据", "文件", "目录", "서울", "도시", "사람"};
constexpr std::string_view kCode =
    "export function paginate(items, budget) {\n"
    "  const pages = [];\n"
    "  for (let i = 0; i < items.length; i += budget.pageSize) {\n"
    "    pages.push(items.slice(i, i + budget.pageSize));\n"
    "  }\n"
    "  return pages;\n"
    "}\n";

json::object record(std::mt19937& rng, std::size_t id) {
  const auto word = [&rng] { return kWords[rng() % std::size(kWords)]; };
  json::array tags;
  for (int t = 0; t < 3; ++t) tags.emplace_back(word());
  std::string note;
  for (int w = 0; w < 12; ++w) {
    if (w > 0) note += ' ';
    note += word();
  }
  return {
      {"id", id},
      {"name", std::string(word()) + "-" + std::string(word()) + "-" + std::to_string(id)},
      {"score", static_cast<double>(rng() % 100000) / 100.0},
      {"active", rng() % 2 == 0},
      {"path", "/srv/data/" + std::string(word()) + "/" + std::to_string(rng() % 1000) + ".json"},
      {"tags", std::move(tags)},
      {"note", std::move(note)}};
}

// JSON (minified and pretty-ish), English prose, CJK prose and code, interleaved.
std::string mixed_corpus(std::size_t bytes) {
  std::mt19937 rng(20240102);
  std::string out;
  out.reserve(bytes + 4096);
  std::size_t id = 0;
  while (out.size() < bytes) {
    json::array records;
    for (int r = 0; r < 8; ++r) records.push_back(record(rng, ++id));
    out += json::serialize(records);
    out += '\n';
    for (int sentence = 0; sentence < 6; ++sentence) {
      for (int w = 0; w < 14; ++w) {
        out += w == 0 ? "" : " ";
        out += kWords[rng() % std::size(kWords)];
      }
      out += ". ";
    }
    out += "\n\n";
    for (int c = 0; c < 80; ++c) out += kCjk[rng() % std::size(kCjk)];
    out += "\n\n";
    out += kCode;
  }
  out.resize(bytes);
  return out;
}

json::value json_document(std::size_t bytes) {
  std::mt19937 rng(20240103);
  json::array records;
  std::size_t size = 0;
  for (std::size_t id = 1; size < bytes; ++id) {
    json::object r = record(rng, id);
    size += json::serialize(r).size() + 1;
    records.push_back(std::move(r));
  }
  return json::object{{"records", std::move(records)}, {"generatedBy", "estimator_bench"}};
}

struct Timing {
  double best_gbps;
  double median_gbps;
  double cpu_gbps;  // median over this thread's CPU time: what a busy shared machine hides
};

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

template <class Run>
Timing measure(std::size_t bytes, int runs, Run&& run) {
  std::vector<double> gbps;
  std::vector<double> cpu_gbps;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    const double cpu_start = thread_cpu_seconds();
    run();
    const double cpu = thread_cpu_seconds() - cpu_start;
    const std::chrono::duration<double> elapsed = Clock::now() - start;
    gbps.push_back(static_cast<double>(bytes) / elapsed.count() / 1e9);
    cpu_gbps.push_back(static_cast<double>(bytes) / cpu / 1e9);
  }
  std::sort(gbps.begin(), gbps.end());
  std::sort(cpu_gbps.begin(), cpu_gbps.end());
  return {gbps.back(), gbps[gbps.size() / 2], cpu_gbps[cpu_gbps.size() / 2]};
}

void report(const char* what, std::size_t bytes, const Timing& timing) {
  std::printf("%-34s %5.1f MiB: best %.2f GB/s, median %.2f GB/s, median CPU time %.2f GB/s\n",
              what, static_cast<double>(bytes) / (1 << 20), timing.best_gbps, timing.median_gbps,
              timing.cpu_gbps);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mib = 10;
  int runs = 21;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view option = argv[i];
    if (option == "--mib") {
      mib = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (option == "--runs") {
      runs = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "usage: estimator_bench [--mib N] [--runs N]\n");
      return 2;
    }
  }
  const std::size_t bytes = mib << 20;

  const std::string corpus = mixed_corpus(bytes);
  std::size_t tokens = 0;
  const Timing text =
      measure(corpus.size(), runs, [&] { tokens = ctxguard::budget::estimate_tokens(corpus); });
  report("estimate_tokens, mixed text", corpus.size(), text);
  std::printf("    (%zu tokens, %.2f bytes/token)\n", tokens,
              static_cast<double>(corpus.size()) / static_cast<double>(tokens));

  const json::value document = json_document(bytes);
  ctxguard::budget::TokenCounter probe;
  probe.add_json(document);
  const std::size_t json_bytes = probe.bytes();
  const Timing tree =
      measure(json_bytes, runs, [&] { tokens = ctxguard::budget::estimate_json_tokens(document); });
  report("estimate_json_tokens, records", json_bytes, tree);

  // The common MCP shape: one large text (here the mixed corpus) in content[0].text.
  const json::value result = {
      {"content", json::array{json::object{{"type", "text"}, {"text", corpus}}}}};
  ctxguard::budget::TokenCounter result_probe;
  result_probe.add_json(result);
  const Timing tool_result = measure(
      result_probe.bytes(), runs, [&] { tokens = ctxguard::budget::estimate_json_tokens(result); });
  report("estimate_json_tokens, tool result", result_probe.bytes(), tool_result);
  std::printf("(JSON sizes are the minified size, which is counted, never serialized)\n");
  return 0;
}
