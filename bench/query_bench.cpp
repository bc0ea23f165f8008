// ctxguard_fetch {query} over a cached 100,000-item array: the time to test every item against a
// query, next to one plain serialization of the same array (ctxguard::to_json), the cost a reader
// can relate to; and an aggregate over the same array against one query scan (target: <= 1x).
// Ratios, measured in one run: the machines are shared and noisy.
//
//   query_bench [--items N]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/json.hpp>

#include "pipeline/fetch/aggregate.hpp"
#include "pipeline/fetch/query.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using ctxguard::pipeline::Query;

constexpr int kRepetitions = 5;

// The listing of bench/pipeline_bench.cpp (ids, statuses, dates, amounts), with the guest as an
// object of name and e-mail so that dotted fields have something to reach.
std::string make_items_text(std::size_t items) {
  static constexpr const char* kFirst[] = {"Anna", "Ben", "Chloe", "David", "Emma", "Farid"};
  static constexpr const char* kLast[] = {"Smith",  "Jones",    "Müller", "Rossi",
                                          "Dubois", "Kowalski", "Tanaka"};
  json::array rows;
  rows.reserve(items);
  for (std::size_t i = 0; i < items; ++i) {
    const std::string first = kFirst[i % 6];
    const std::string last = kLast[(i / 6) % 7];  // not in step with the statuses
    rows.push_back(json::object{
        {"id", "BK" + std::to_string(100000 + i)},
        {"status", i % 7 == 0 ? "cancelled" : "confirmed"},
        {"guest", json::object{{"name", first + " " + last},
                               {"email", first + "." + std::to_string(i) + "@example.com"}}},
        {"checkIn", "2026-11-" + std::to_string(10 + i % 18)},
        {"total", 120.5 + static_cast<double>(i % 1000)}});
  }
  return ctxguard::to_json(rows);
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Timing {
  double median = 0;
  double best = 0;
};

template <class Run>
Timing time_it(const Run& run) {
  std::vector<double> times;
  for (int round = 0; round < kRepetitions; ++round) {
    const auto start = Clock::now();
    run();
    times.push_back(ms_since(start));
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front()};
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t items = 100000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string_view(argv[i]) == "--items") items = std::strtoul(argv[i + 1], nullptr, 10);
  }
  const std::string text = make_items_text(items);
  auto parsed = ctxguard::parse_json(text);
  if (!parsed) {
    std::fprintf(stderr, "the generated items do not parse\n");
    return 1;
  }
  const json::array& array = parsed->as_array();

  std::size_t written = 0;
  const Timing baseline = time_it([&] { written += ctxguard::to_json(*parsed).size(); });
  std::printf("input: %zu items, %.1f MiB of JSON (median and best of %d scans)\n", items,
              static_cast<double>(text.size()) / (1 << 20), kRepetitions);
  std::printf("  %-56s: %8.2f ms median, %7.2f best\n", "ctxguard::to_json of the array",
              baseline.median, baseline.best);

  for (const std::string_view query_text :
       {"smith", "zebra", "status=cancelled", "guest.name~smith", "status!=cancelled",
        "status=confirmed guest.name~smith checkIn=2026-11-12"}) {
    auto query = Query::parse(query_text);
    if (!query) {
      std::fprintf(stderr, "%s\n", query.error().message.c_str());
      return 1;
    }
    const Query& compiled = *query;
    std::size_t matches = 0;
    const Timing scan = time_it([&] {
      matches = static_cast<std::size_t>(
          std::count_if(array.begin(), array.end(),
                        [&](const json::value& row) { return compiled.matches(row); }));
    });
    std::printf(
        "  %-56s: %7zu matches, %7.2f ms median, %7.2f best, %6.1f M items/s, %.2fx to_json\n",
        std::string("`" + std::string(query_text) + "`").c_str(), matches, scan.median, scan.best,
        static_cast<double>(items) / scan.median / 1000.0, scan.median / baseline.median);
  }
  // An aggregate over the same items against one scan of the query every item is tested with.
  auto status = Query::parse("status=cancelled").value();
  const Timing scan = time_it([&] {
    written += static_cast<std::size_t>(std::count_if(
        array.begin(), array.end(), [&](const json::value& row) { return status.matches(row); }));
  });
  auto spec = ctxguard::pipeline::parse_aggregate(
      json::parse(R"({"groupBy": "status", "sum": "total", "avg": "total", "max": "checkIn"})"));
  std::size_t groups = 0;
  const Timing aggregate = time_it(
      [&] { groups += ctxguard::pipeline::aggregate(array, spec.value(), nullptr).groups.size(); });
  std::printf("  %-56s: %7.2f ms median, %7.2f best, %.2fx the scan of `status=cancelled`\n",
              "aggregate {groupBy status, sum/avg total, max checkIn}", aggregate.median,
              aggregate.best, aggregate.median / scan.median);
  return written == 0 || groups == 0 ? 1 : 0;
}
