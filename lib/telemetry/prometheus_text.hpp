#pragma once
// The Prometheus text exposition format, version 0.0.4 (what /metrics serves). Pure: it builds a
// string and does no I/O.
//
//   PrometheusText text;
//   text.family("ctxguard_calls_total", MetricType::kCounter, "Tool calls seen.");
//   text.sample("ctxguard_calls_total", {{"tool", "search"}, {"outcome", "paginated"}}, 12);
//   text.family("ctxguard_proxy_seconds", MetricType::kHistogram, "Time spent in ctxguard.");
//   text.histogram("ctxguard_proxy_seconds", {}, latency);
//   std::string body = text.take();
//
// Names are the caller's constants and must be valid (asserted): a metric name matches
// [a-zA-Z_:][a-zA-Z0-9_:]*, a label name [a-zA-Z_][a-zA-Z0-9_]* and does not start with "__",
// counters end in "_total", and `le` belongs to histograms. Label values may be anything (tool
// names come from the server): they are escaped, and bytes that are not UTF-8 become U+FFFD so
// the page always parses.

#include <concepts>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ctxguard::telemetry {

enum class MetricType { kCounter, kGauge, kHistogram };

std::string_view to_string(MetricType type);

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

bool is_valid_metric_name(std::string_view name);
bool is_valid_label_name(std::string_view name);

// A number as Prometheus reads it: integral values without exponent or fraction ("3", "-2"),
// others in the shortest form that reads back to the same double ("0.25", "1e+300"), and
// "+Inf", "-Inf", "NaN".
std::string format_value(double value);

// Fixed buckets, as a Prometheus histogram has them. Not thread-safe: one owner updates it.
class Histogram {
 public:
  // Upper bounds of the buckets; they are sorted, duplicates and non-finite values dropped. The
  // +Inf bucket is always there and is not listed.
  explicit Histogram(std::vector<double> upper_bounds);

  // Counts `value` in the first bucket whose bound is >= value: O(log buckets). NaN is ignored
  // (it would poison the sum).
  void observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Observations per bucket, not cumulative; one more entry than upper_bounds() (the +Inf
  // bucket).
  const std::vector<std::uint64_t>& bucket_counts() const { return counts_; }
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> upper_bounds_;
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

// Writes one exposition. Write each family's samples right after its family() call.
class PrometheusText {
 public:
  // Writes `# HELP` and `# TYPE` for `name`; a second call for the same name writes nothing. A
  // histogram's family is its base name (without _bucket, _sum, _count).
  void family(std::string_view name, MetricType type, std::string_view help);

  // One sample line: `name{label="value",...} value`.
  void sample(std::string_view name, const Labels& labels, double value);
  // Integers are written exactly (a double holds them exactly only up to 2^53).
  template <std::integral T>
  void sample(std::string_view name, const Labels& labels, T value) {
    if constexpr (std::is_signed_v<T>) {
      sample_line(name, labels, {}, std::to_string(static_cast<long long>(value)));
    } else {
      sample_line(name, labels, {}, std::to_string(static_cast<unsigned long long>(value)));
    }
  }

  // `name_bucket{...,le="b"}` for every bound (cumulative) and `le="+Inf"`, then `name_sum` and
  // `name_count`.
  void histogram(std::string_view name, const Labels& labels, const Histogram& histogram);

  // The text so far; the writer starts over (no family written yet).
  std::string take();

 private:
  void sample_line(std::string_view name, const Labels& labels, std::string_view le,
                   std::string_view value);

  std::string text_;
  std::set<std::string, std::less<>> families_;
};

}  // namespace ctxguard::telemetry
