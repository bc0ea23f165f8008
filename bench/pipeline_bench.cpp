// The budget pipeline on one large tools/call answer, through the same Interceptor the proxy
// runs (parse, route, estimate, paginate, cache, write), against plain Boost.JSON parse +
// serialize of the same line; and the same first page planned within a client's limits in all
// four units (tokens, characters, bytes, lines) against tokens only. Ratios, measured in one
// run: the machines are shared and noisy.
//
//   pipeline_bench [--items N] [--rounds R]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/json.hpp>

#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "proxy/interceptor.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;
using ctxguard::proxy::Interceptor;
using ctxguard::proxy::Verdict;
using ctxguard::session::Direction;

// A listing like real tools return: ids, names, statuses, dates, amounts, a note.
std::string make_result_text(std::size_t items) {
  json::array rows;
  rows.reserve(items);
  for (std::size_t i = 0; i < items; ++i) {
    rows.push_back(json::object{{"id", "BK" + std::to_string(100000 + i)},
                                {"status", i % 7 == 0 ? "cancelled" : "confirmed"},
                                {"guest", "Guest Number " + std::to_string(i)},
                                {"checkIn", "2026-11-" + std::to_string(10 + i % 18)},
                                {"total", 120.5 + static_cast<double>(i % 1000)}});
  }
  return ctxguard::to_json(json::object{{"bookings", std::move(rows)}, {"source", "bench"}});
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The first answer to `line` (a tools/call result) through `interceptor`, as request `id`: the
// time it took and the answer.
double first_answer(Interceptor& interceptor, const std::string& line, const std::string& id,
                    Verdict& verdict) {
  const std::string request = "{\"jsonrpc\":\"2.0\",\"id\":" + id +
                              ",\"method\":\"tools/call\",\"params\":{\"name\":\"list_bookings\"}}";
  interceptor.on_line(Direction::kClientToServer, request, Clock::now(),
                      std::chrono::system_clock::now());
  std::string response = line;
  response.replace(response.find("\"id\":1"), 6, "\"id\":" + id);
  const auto start = Clock::now();
  verdict = interceptor.on_line(Direction::kServerToClient, response, Clock::now(),
                                std::chrono::system_clock::now());
  return ms_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t items = 100000;
  int rounds = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--items") items = std::strtoul(argv[i + 1], nullptr, 10);
    if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
  }
  spdlog::set_level(spdlog::level::warn);  // one INFO line per call is not what is measured
  const std::string text = make_result_text(items);
  std::string line =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":";
  ctxguard::write_json_string(line, text);
  line += "}]}}";

  ctxguard::config::BudgetSettings budget;
  const auto codec = ctxguard::cursor::CursorCodec::with_random_key(
      ctxguard::config::ProcessSettings{}.cursor_ttl);
  Interceptor interceptor(ctxguard::config::Profile::of(budget), codec);
  // A client's limits in every unit, tighter than the page of 50 items (about 6,900 bytes), so
  // that characters decide how many items the first answer shows.
  ctxguard::config::BudgetSettings limited = budget;
  limited.max_chars = 4000;
  limited.max_bytes = 4500;
  limited.max_lines = 200;
  Interceptor limited_interceptor(ctxguard::config::Profile::of(limited), codec);
  std::vector<double> first_limited;
  std::size_t limited_bytes = 0;

  std::vector<double> baseline;
  std::vector<double> first_page;
  std::vector<double> later_page;
  std::size_t first_bytes = 0;
  std::size_t page_bytes = 0;
  for (int round = 0; round < rounds; ++round) {
    // Baseline: what any JSON-aware proxy pays at least.
    // (Its value is freed inside the timing, as the proxy frees the message it parsed.)
    auto start = Clock::now();
    {
      const json::value parsed = json::parse(line);
      const std::string again = json::serialize(parsed);
      if (again.empty()) return 1;
    }
    baseline.push_back(ms_since(start));

    // The request, so the router knows what the answer answers; then the answer.
    const std::string id = std::to_string(round + 1);
    // In alternating order: whichever runs second pays for the memory the first one took.
    Verdict first;
    Verdict within;
    if (round % 2 == 0) {
      first_page.push_back(first_answer(interceptor, line, id, first));
      first_limited.push_back(first_answer(limited_interceptor, line, id, within));
    } else {
      first_limited.push_back(first_answer(limited_interceptor, line, id, within));
      first_page.push_back(first_answer(interceptor, line, id, first));
    }
    if (first.action != Verdict::Action::kSend || within.action != Verdict::Action::kSend) {
      std::fprintf(stderr, "the answer was not rewritten\n");
      return 1;
    }
    first_bytes = first.text.size();
    limited_bytes = within.text.size();

    // A page from the middle of the cached result, as the model asks for it.
    const json::value answer = json::parse(first.text);
    const json::value inner =
        json::parse(answer.at("result").at("content").at(0).at("text").as_string());
    std::string cursor(inner.at("_ctxguard").at("nextCursor").as_string());
    for (int hop = 0; hop < 3; ++hop) {  // walk a few pages in; measure the last one
      const std::string fetch = "{\"jsonrpc\":\"2.0\",\"id\":\"f" + id +
                                "\",\"method\":\"tools/call\",\"params\":{"
                                "\"name\":\"ctxguard_fetch\",\"arguments\":{\"cursor\":\"" +
                                cursor + "\",\"limit\":200}}}";
      start = Clock::now();
      const Verdict page = interceptor.on_line(Direction::kClientToServer, fetch, Clock::now(),
                                               std::chrono::system_clock::now());
      const double elapsed = ms_since(start);
      if (page.action != Verdict::Action::kReply) return 1;
      page_bytes = page.text.size();
      const json::value reply = json::parse(page.text);
      const json::value body =
          json::parse(reply.at("result").at("content").at(0).at("text").as_string());
      cursor = std::string(body.at("_ctxguard").at("nextCursor").as_string());
      if (hop == 2) later_page.push_back(elapsed);
    }
  }
  const double base = median(baseline);
  const double first = median(first_page);
  const double later = median(later_page);
  std::printf(
      "input: %zu items, %.1f MiB of JSON in one text item, %.1f MiB JSON-RPC line "
      "(median of %d rounds)\n",
      items, static_cast<double>(text.size()) / (1 << 20),
      static_cast<double>(line.size()) / (1 << 20), rounds);
  std::printf("  Boost.JSON parse+serialize : %8.2f ms\n", base);
  std::printf(
      "  first page through ctxguard: %8.2f ms  (%.2fx parse+serialize; answer %zu bytes)\n", first,
      first / base, first_bytes);
  std::printf("  later page from the cache  : %8.3f ms  (ctxguard_fetch, limit 200; %zu bytes)\n",
              later, page_bytes);
  const double within = median(first_limited);
  std::printf(
      "  first page within 4 limits : %8.2f ms  (%.2fx tokens only; maxChars 4000, maxBytes "
      "4500, maxLines 200; answer %zu bytes)\n",
      within, within / first, limited_bytes);
  const auto& stats = interceptor.cache().stats();
  std::printf("  cache: %zu entries, %.1f MiB charged (%.2fx the line)\n", stats.entries,
              static_cast<double>(stats.bytes) / (1 << 20),
              static_cast<double>(stats.bytes) / static_cast<double>(stats.entries) /
                  static_cast<double>(line.size()));
  return 0;
}
