#include "telemetry/status_pages.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include "promtool.hpp"
#include "telemetry/traffic_metrics.hpp"

using namespace ctxguard::telemetry;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

CallEvent event(std::string tool, Outcome outcome, std::size_t original, std::size_t final_tokens,
                bool over = false) {
  CallEvent e;
  e.kind = CallKind::kCall;
  e.tool = std::move(tool);
  e.outcome = outcome;
  e.original_tokens = original;
  e.final_tokens = final_tokens;
  e.original_bytes = original * 4;
  e.final_bytes = final_tokens * 4;
  e.over_budget = over;
  e.proxy_latency = 300us;
  e.server_latency = 20ms;
  return e;
}

CallEvent fetch(Outcome outcome, std::string error = {}) {
  CallEvent e;
  e.kind = CallKind::kFetch;
  e.tool = "ctxguard_fetch:list";
  e.outcome = outcome;
  e.error = std::move(error);
  e.final_tokens = outcome == Outcome::kFetched ? 3000 : 0;
  return e;
}

// Ten enforced calls (4 paginated, 1 chunked, 1 summarized, 3 passed through, 1 error), two
// fetches, one observed call.
TrafficMetrics sample_traffic() {
  TrafficMetrics traffic;
  for (int i = 0; i < 4; ++i) traffic.add(event("list", Outcome::kPaginated, 50000, 3800, true));
  traffic.add(event("read", Outcome::kChunked, 20000, 2000, true));
  traffic.add(event("get", Outcome::kSummarized, 6000, 3900, true));
  for (int i = 0; i < 3; ++i) traffic.add(event("get", Outcome::kPassthrough, 100, 100));
  traffic.add(event("get", Outcome::kError, 0, 0));
  traffic.add(fetch(Outcome::kFetched));
  traffic.add(fetch(Outcome::kFetchFailed, "expired"));
  CallEvent observed = event("shadow", Outcome::kPaginated, 40000, 3000, true);
  observed.observed = true;
  traffic.add(observed);
  return traffic;
}

ProcessStatus sample_process() {
  ProcessStatus process;
  process.version = "1.2.3";
  process.started = std::chrono::system_clock::time_point(1'700'000'000s);
  process.uptime = 42s;
  process.server_pid = 4242;
  process.cache.entries = 5;
  process.cache.bytes = 123456;
  process.cache.evictions = 2;
  process.cache_max_bytes = 1 << 20;
  process.reloads_applied = 3;
  process.reloads_refused = 1;
  process.telemetry_file = WriterCounters{.written = 10, .dropped = 2, .failed = 0, .queued = 1};
  process.messages_from_client = 30;
  process.messages_from_server = 31;
  process.oversize_window = {.calls = 10, .oversized = 6};
  return process;
}

// The value of the sample line that starts with `prefix` (name and labels as written).
std::string sample_value(const std::string& page, const std::string& prefix) {
  const std::size_t at = page.find("\n" + prefix + " ");
  if (at == std::string::npos) return "<absent>";
  const std::size_t begin = at + prefix.size() + 2;
  return page.substr(begin, page.find('\n', begin) - begin);
}

}  // namespace

TEST_CASE("status pages: the summary counts enforced tool calls apart from fetches and observe") {
  const TrafficMetrics traffic = sample_traffic();
  const TrafficSummary& summary = traffic.summary();
  CHECK(summary.tool_calls == 10);
  CHECK(summary.rewritten == 6);
  CHECK(summary.paginated == 4);
  CHECK(summary.chunked == 1);
  CHECK(summary.summarized == 1);
  CHECK(summary.errors == 1);
  CHECK(summary.oversized == 6);
  CHECK(summary.answer_tokens == 4 * 3800 + 2000 + 3900 + 300);
  CHECK(summary.fetches == 2);
  CHECK(summary.fetch_errors == 1);
  CHECK(summary.observed_calls == 1);
  CHECK(summary.rate(summary.paginated) == Approx(0.4));
}

TEST_CASE("status pages: /metrics counts calls by tool, outcome and mode") {
  const std::string page = metrics_page(sample_traffic(), sample_process());
  CHECK(sample_value(page,
                     R"(ctxguard_calls_total{tool="list",outcome="paginated",mode="enforce"})") ==
        "4");
  CHECK(sample_value(page,
                     R"(ctxguard_calls_total{tool="shadow",outcome="paginated",mode="observe"})") ==
        "1");
  CHECK(sample_value(page, R"(ctxguard_oversized_calls_total{tool="list",mode="enforce"})") == "4");
  CHECK(sample_value(page, R"(ctxguard_original_tokens_total{tool="list",mode="enforce"})") ==
        "200000");
  CHECK(sample_value(page, R"(ctxguard_final_tokens_total{tool="list",mode="enforce"})") ==
        "15200");
  CHECK(sample_value(page, R"(ctxguard_cursor_errors_total{reason="expired"})") == "1");
  CHECK(sample_value(page, R"(ctxguard_cursor_errors_total{reason="forged"})") == "0");
  CHECK(sample_value(page, "ctxguard_proxy_latency_seconds_count") == "13");
  CHECK(sample_value(page, "ctxguard_server_latency_seconds_count") == "11");
  CHECK(sample_value(page, "ctxguard_answer_tokens_count") == "9");  // not the error
  CHECK(sample_value(page, "ctxguard_server_up") == "1");
  CHECK(sample_value(page, "ctxguard_cache_entries") == "5");
  CHECK(sample_value(page, "ctxguard_cache_evictions_total") == "2");
  CHECK(sample_value(page, R"(ctxguard_config_reloads_total{result="refused"})") == "1");
  CHECK(sample_value(page, R"(ctxguard_telemetry_records_total{result="dropped"})") == "2");
  CHECK(sample_value(page, R"(ctxguard_messages_total{from="server"})") == "31");
  CHECK(sample_value(page, R"(ctxguard_build_info{version="1.2.3"})") == "1");
  CHECK(sample_value(page, "ctxguard_start_time_seconds") == "1700000000");
}

TEST_CASE("status pages: /metrics passes promtool check metrics") {
  const std::string page = metrics_page(sample_traffic(), sample_process());
  const auto result = ctxguard::testing::promtool_check(page);
  INFO("page:\n" << page << "promtool said:\n" << result.output);
  CHECK(result.exit_code == 0);
  CHECK(result.output.empty());
  // Also with nothing seen yet and no telemetry file.
  const auto empty = ctxguard::testing::promtool_check(metrics_page(TrafficMetrics(), {}));
  INFO(empty.output);
  CHECK(empty.exit_code == 0);
}

TEST_CASE("status pages: tools beyond the label limit are counted as other") {
  TrafficMetrics traffic(2);
  for (const char* tool : {"a", "b", "c", "d"}) {
    traffic.add(event(tool, Outcome::kPassthrough, 10, 10));
  }
  const std::string page = metrics_page(traffic, {});
  CHECK(sample_value(
            page, R"(ctxguard_calls_total{tool="a",outcome="passthrough",mode="enforce"})") == "1");
  CHECK(sample_value(
            page, R"(ctxguard_calls_total{tool="other",outcome="passthrough",mode="enforce"})") ==
        "2");
  CHECK(sample_value(page,
                     R"(ctxguard_calls_total{tool="c",outcome="passthrough",mode="enforce"})") ==
        "<absent>");
}

TEST_CASE("status pages: calls are counted by client, a few names at most") {
  TrafficMetrics traffic;
  CallEvent call = event("list", Outcome::kPaginated, 50000, 3800, true);
  call.client = "claude-code";
  traffic.add(call);
  traffic.add(call);
  call.client = "";
  traffic.add(call);
  for (std::size_t i = 0; i < TrafficMetrics::kMaxClients + 3; ++i) {
    call.client = "client-" + std::to_string(i);
    traffic.add(call);
  }
  const std::string page = metrics_page(traffic, {});
  CHECK(sample_value(page,
                     R"(ctxguard_client_calls_total{client="claude-code",outcome="paginated"})") ==
        "2");
  CHECK(sample_value(
            page, R"(ctxguard_client_calls_total{client="unknown",outcome="paginated"})") == "1");
  // claude-code and unknown took two of the labels: six more names get theirs, five go to other.
  CHECK(sample_value(
            page, R"(ctxguard_client_calls_total{client="client-5",outcome="paginated"})") == "1");
  CHECK(
      sample_value(page, R"(ctxguard_client_calls_total{client="client-6",outcome="paginated"})") ==
      "<absent>");
  CHECK(sample_value(page, R"(ctxguard_client_calls_total{client="other",outcome="paginated"})") ==
        "5");
  const auto checked = ctxguard::testing::promtool_check(page);
  INFO(checked.output);
  CHECK(checked.exit_code == 0);
}

TEST_CASE("status pages: /health reports adoption, sizes and the server") {
  const HealthPage page = health_page(sample_traffic(), sample_process());
  CHECK(page.status == 200);
  const json::object health = json::parse(page.body).as_object();
  CHECK(health.at("status") == "ok");
  CHECK(health.at("server").at("pid") == 4242);
  CHECK(health.at("server").at("state") == "running");
  CHECK(health.at("toolCalls") == 10);
  CHECK(health.at("paginationAdoptionRate").as_double() == Approx(0.4));
  CHECK(health.at("oversizeRate").as_double() == Approx(0.6));
  CHECK(health.at("averageAnswerTokens").as_double() ==
        Approx((4 * 3800 + 2000 + 3900 + 300) / 10.0));
  CHECK(health.at("averageAnswerBytes").as_double() ==
        Approx(4 * (4 * 3800 + 2000 + 3900 + 300) / 10.0));
  CHECK(health.at("fetches") == 2);
  CHECK(health.at("oversizeAlert").at("active") == false);  // 10 calls are below the minimum
  CHECK(health.at("telemetryFile").at("dropped") == 2);
  CHECK(health.at("uptimeSeconds").as_double() == Approx(42));
}

TEST_CASE("status pages: /health is 503 and down once the server is gone") {
  ProcessStatus process = sample_process();
  process.server_running = false;
  process.server_exit = "was killed by signal 9 (Killed)";
  const HealthPage page = health_page(TrafficMetrics(), process);
  CHECK(page.status == 503);
  const json::object health = json::parse(page.body).as_object();
  CHECK(health.at("status") == "down");
  CHECK(health.at("server").at("state") == "exited");
  CHECK(health.at("server").at("exit") == "was killed by signal 9 (Killed)");
  CHECK(health.at("paginationAdoptionRate").as_double() == 0.0);  // no calls: no division by 0
  CHECK(sample_value(metrics_page(TrafficMetrics(), process), "ctxguard_server_up") == "0");
  process.server_running = true;
  process.client_connected = false;
  CHECK(json::parse(health_page(TrafficMetrics(), process).body).at("status") == "stopping");
}
