#include "telemetry/prometheus_text.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include <catch2/catch.hpp>

#include "promtool.hpp"

using namespace ctxguard::telemetry;
using ctxguard::testing::CommandResult;
using ctxguard::testing::promtool_check;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Histogram latency_histogram() {
  Histogram histogram({0.125, 1, 0.5, 0.5, kInf});
  for (double value : {0.0625, 0.125, 0.75, 3.0, std::nan("")}) histogram.observe(value);
  return histogram;
}

// What /metrics is made of: counters with labels, a gauge, a histogram, hostile label values.
std::string representative_page() {
  PrometheusText text;
  text.family("ctxguard_calls_total", MetricType::kCounter, "Tool calls answered, by outcome.");
  text.sample("ctxguard_calls_total", {{"tool", "search"}, {"outcome", "paginated"}}, 12);
  text.sample("ctxguard_calls_total", {{"tool", "a \"quoted\"\\\nname"}, {"outcome", "chunked"}},
              std::uint64_t{3});
  text.sample("ctxguard_calls_total", {{"tool", "caf\xC3"}, {"outcome", "passthrough"}}, 1);
  text.family("ctxguard_saved_tokens_total", MetricType::kCounter,
              "Tokens kept out of the context.\nEstimated, see docs\\telemetry.md.");
  text.sample("ctxguard_saved_tokens_total", {}, std::uint64_t{48140});
  text.family("ctxguard_cache_bytes", MetricType::kGauge, "Bytes held by the result cache.");
  text.sample("ctxguard_cache_bytes", {}, 1.5e9);
  text.family("ctxguard_up", MetricType::kGauge, "Whether the server process runs.");
  text.sample("ctxguard_up", {}, 1.0);
  text.family("ctxguard_proxy_seconds", MetricType::kHistogram, "Time spent in ctxguard.");
  text.histogram("ctxguard_proxy_seconds", {{"tool", "search"}}, latency_histogram());
  text.histogram("ctxguard_proxy_seconds", {{"tool", "fetch"}}, Histogram({0.001, 0.01}));
  return text.take();
}

}  // namespace

TEST_CASE("prometheus text: a counter with labels is HELP, TYPE and one line per sample") {
  PrometheusText text;
  text.family("ctxguard_calls_total", MetricType::kCounter, "Tool calls answered.");
  text.sample("ctxguard_calls_total", {{"tool", "search"}, {"outcome", "paginated"}}, 12);
  text.sample("ctxguard_calls_total", {{"tool", "fetch"}, {"outcome", "fetched"}},
              std::uint64_t{18446744073709551615U});
  CHECK(text.take() ==
        "# HELP ctxguard_calls_total Tool calls answered.\n"
        "# TYPE ctxguard_calls_total counter\n"
        "ctxguard_calls_total{tool=\"search\",outcome=\"paginated\"} 12\n"
        "ctxguard_calls_total{tool=\"fetch\",outcome=\"fetched\"} 18446744073709551615\n");
}

TEST_CASE("prometheus text: a sample without labels has no braces") {
  PrometheusText text;
  text.family("ctxguard_up", MetricType::kGauge, "Up.");
  text.sample("ctxguard_up", {}, 1.0);
  text.sample("ctxguard_up", {}, -2);
  CHECK(text.take() ==
        "# HELP ctxguard_up Up.\n"
        "# TYPE ctxguard_up gauge\n"
        "ctxguard_up 1\n"
        "ctxguard_up -2\n");
}

TEST_CASE(
    "prometheus text: label values escape backslash, quote and newline, HELP escapes "
    "backslash and newline only") {
  PrometheusText text;
  text.family("x_total", MetricType::kCounter, "a \"b\" c\\d\ne");
  text.sample("x_total", {{"v", "a \"b\" c\\d\ne"}}, 1);
  CHECK(text.take() ==
        "# HELP x_total a \"b\" c\\\\d\\ne\n"
        "# TYPE x_total counter\n"
        "x_total{v=\"a \\\"b\\\" c\\\\d\\ne\"} 1\n");
}

TEST_CASE("prometheus text: bytes that are not UTF-8 become U+FFFD, valid UTF-8 is kept") {
  PrometheusText text;
  text.sample("x", {{"ok", "caf\xC3\xA9 \xF0\x9F\x98\x80"}, {"cut", "caf\xC3"}}, 1);
  text.sample("x", {{"surrogate", "\xED\xA0\x80"}, {"overlong", "\xC0\xAF"}, {"big", "\xF4\x90"}},
              1);
  CHECK(text.take() ==
        "x{ok=\"caf\xC3\xA9 \xF0\x9F\x98\x80\",cut=\"caf\xEF\xBF\xBD\"} 1\n"
        "x{surrogate=\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\","
        "overlong=\"\xEF\xBF\xBD\xEF\xBF\xBD\",big=\"\xEF\xBF\xBD\xEF\xBF\xBD\"} 1\n");
}

TEST_CASE("prometheus text: a histogram has cumulative buckets, +Inf, _sum and _count") {
  PrometheusText text;
  text.family("ctxguard_proxy_seconds", MetricType::kHistogram, "Time spent in ctxguard.");
  text.histogram("ctxguard_proxy_seconds", {{"tool", "search"}}, latency_histogram());
  CHECK(text.take() ==
        "# HELP ctxguard_proxy_seconds Time spent in ctxguard.\n"
        "# TYPE ctxguard_proxy_seconds histogram\n"
        "ctxguard_proxy_seconds_bucket{tool=\"search\",le=\"0.125\"} 2\n"
        "ctxguard_proxy_seconds_bucket{tool=\"search\",le=\"0.5\"} 2\n"
        "ctxguard_proxy_seconds_bucket{tool=\"search\",le=\"1\"} 3\n"
        "ctxguard_proxy_seconds_bucket{tool=\"search\",le=\"+Inf\"} 4\n"
        "ctxguard_proxy_seconds_sum{tool=\"search\"} 3.9375\n"
        "ctxguard_proxy_seconds_count{tool=\"search\"} 4\n");
}

TEST_CASE(
    "prometheus text: a histogram sorts its bounds, drops duplicates and infinities, and "
    "counts a value equal to a bound in that bound's bucket") {
  const Histogram histogram = latency_histogram();
  CHECK(histogram.upper_bounds() == std::vector<double>{0.125, 0.5, 1});
  CHECK(histogram.bucket_counts() == std::vector<std::uint64_t>{2, 0, 1, 1});
  CHECK(histogram.count() == 4);  // NaN is not counted
  CHECK(histogram.sum() == 3.9375);
}

TEST_CASE("prometheus text: a family is announced once, and take() starts over") {
  PrometheusText text;
  text.family("a_total", MetricType::kCounter, "A.");
  text.sample("a_total", {}, 1);
  text.family("a_total", MetricType::kCounter, "A.");
  text.sample("a_total", {{"k", "v"}}, 2);
  CHECK(text.take() ==
        "# HELP a_total A.\n# TYPE a_total counter\na_total 1\na_total{k=\"v\"} 2\n");
  CHECK(text.take().empty());
  text.family("a_total", MetricType::kCounter, "A.");
  CHECK(text.take() == "# HELP a_total A.\n# TYPE a_total counter\n");
}

TEST_CASE(
    "prometheus text: numbers are integers when integral, shortest otherwise, and "
    "+Inf, -Inf, NaN") {
  CHECK(format_value(3.0) == "3");
  CHECK(format_value(-2.0) == "-2");
  CHECK(format_value(0.0) == "0");
  CHECK(format_value(-0.0) == "0");
  CHECK(format_value(0.1) == "0.1");
  CHECK(format_value(0.25) == "0.25");
  CHECK(format_value(1.5e9) == "1500000000");
  CHECK(format_value(1e300) == "1e+300");
  CHECK(format_value(1e-7) == "1e-07");
  CHECK(format_value(kInf) == "+Inf");
  CHECK(format_value(-kInf) == "-Inf");
  CHECK(format_value(std::nan("")) == "NaN");
}

TEST_CASE("prometheus text: metric and label names are checked as the spec defines them") {
  CHECK(is_valid_metric_name("ctxguard_calls_total"));
  CHECK(is_valid_metric_name(":recording:rule"));
  CHECK_FALSE(is_valid_metric_name(""));
  CHECK_FALSE(is_valid_metric_name("1abc"));
  CHECK_FALSE(is_valid_metric_name("a-b"));
  CHECK(is_valid_label_name("tool"));
  CHECK(is_valid_label_name("_x1"));
  CHECK_FALSE(is_valid_label_name("__reserved"));
  CHECK_FALSE(is_valid_label_name("a:b"));
  CHECK_FALSE(is_valid_label_name("9"));
}

TEST_CASE("prometheus text: promtool parses and lints a representative page without complaint") {
  const std::string page = representative_page();
  const CommandResult result = promtool_check(page);
  INFO("page:\n" << page << "promtool said:\n" << result.output);
  CHECK(result.exit_code == 0);
  CHECK(result.output.empty());
}

TEST_CASE(
    "prometheus text: promtool does complain about a page that breaks its lint (the check "
    "above can fail)") {
  const CommandResult result = promtool_check("# HELP calls c\n# TYPE calls counter\ncalls 1\n");
  INFO(result.output);
  CHECK(result.exit_code != 0);
  CHECK(result.output.find("_total") != std::string::npos);
}
