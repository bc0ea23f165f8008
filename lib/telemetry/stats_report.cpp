#include "telemetry/stats_report.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "support/glob.hpp"
#include "support/text_scan.hpp"

namespace ctxguard::telemetry {
namespace {

double percent_of(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

std::int64_t difference(std::uint64_t in, std::uint64_t out) {
  return static_cast<std::int64_t>(in) - static_cast<std::int64_t>(out);
}

// The sums of `from` added to `into`; latency summaries are taken from samples, not summed.
void add_sums(GroupStats& into, const GroupStats& from) {
  into.calls += from.calls;
  into.server_calls += from.server_calls;
  into.rewritten += from.rewritten;
  into.over_budget += from.over_budget;
  into.tokens_in += from.tokens_in;
  into.tokens_out += from.tokens_out;
  into.bytes_in += from.bytes_in;
  into.bytes_out += from.bytes_out;
  into.fetches += from.fetches;
  into.fetch_errors += from.fetch_errors;
  for (const auto& [reason, count] : from.fetch_errors_by_reason) {
    into.fetch_errors_by_reason[reason] += count;
  }
}

LatencySummary summarize(std::vector<double>& samples) {
  LatencySummary summary;
  summary.samples = samples.size();
  summary.p50_ms = nearest_rank(samples, 50);
  summary.p95_ms = nearest_rank(samples, 95);
  summary.max_ms = nearest_rank(samples, 100);
  return summary;
}

FillSummary summarize_fill(std::vector<double>& samples) {
  FillSummary summary;
  summary.samples = samples.size();
  summary.p50_pct = nearest_rank(samples, 50);
  summary.p10_pct = nearest_rank(samples, 10);
  summary.min_pct = nearest_rank(samples, 0);
  return summary;
}

// Whether a record's fill counts: first answers whose size the fit decided. A compacted answer
// fit whole; a chunk is sized by chunkSize; a fetch asks for a page, a line range, a value or a
// search whose size is the model's choice: the room they leave says nothing about the fit.
bool fill_counts(const CallEvent& event) {
  return event.fill_pct &&
         (event.outcome == Outcome::kPaginated || event.outcome == Outcome::kSummarized);
}

// Builds one coarser group from several buckets: sums added, samples pooled for the percentiles.
class GroupBuilder {
 public:
  template <class Bucket>
  void add(const Bucket& bucket) {
    add_sums(stats_, bucket.sums);
    proxy_ms_.insert(proxy_ms_.end(), bucket.proxy_ms.begin(), bucket.proxy_ms.end());
    server_ms_.insert(server_ms_.end(), bucket.server_ms.begin(), bucket.server_ms.end());
    fill_pct_.insert(fill_pct_.end(), bucket.fill_pct.begin(), bucket.fill_pct.end());
  }

  GroupStats finish() {
    stats_.proxy = summarize(proxy_ms_);
    stats_.server = summarize(server_ms_);
    stats_.fill = summarize_fill(fill_pct_);
    return std::move(stats_);
  }

 private:
  GroupStats stats_;
  std::vector<double> proxy_ms_;
  std::vector<double> server_ms_;
  std::vector<double> fill_pct_;
};

// Sorts groups named by `name_of` with the most tokens saved first; ties by name, so the order is
// stable.
template <class Group, class NameOf>
void sort_by_saved(std::vector<Group>& groups, NameOf name_of) {
  std::sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
    const auto saved_a = a.stats.tokens_saved();
    const auto saved_b = b.stats.tokens_saved();
    return saved_a != saved_b ? saved_a > saved_b : name_of(a) < name_of(b);
  });
}

}  // namespace

bool StatsFilter::matches(const CallEvent& event) const {
  if (since && event.time < *since) return false;
  if (until && event.time >= *until) return false;
  if (!kinds.empty() && std::find(kinds.begin(), kinds.end(), event.kind) == kinds.end()) {
    return false;
  }
  if (!outcomes.empty() &&
      std::find(outcomes.begin(), outcomes.end(), event.outcome) == outcomes.end()) {
    return false;
  }
  const auto any_matches = [](const std::vector<std::string>& globs, std::string_view name) {
    return globs.empty() || std::any_of(globs.begin(), globs.end(), [&](const std::string& glob) {
             return glob_matches(glob, name);
           });
  };
  return any_matches(tool_globs, event.tool) && any_matches(client_globs, event.client);
}

std::optional<TimePoint> parse_time_bound(std::string_view text, TimePoint now) {
  // A whole number of at most 9 digits (from_chars cannot overflow) and one unit letter.
  if (text.size() >= 2 && text.size() <= 10 &&
      std::all_of(text.begin(), text.end() - 1, text::is_digit)) {
    std::int64_t count = 0;
    std::from_chars(text.data(), text.data() + text.size() - 1, count);
    std::int64_t seconds_per_unit = 0;
    switch (text.back()) {
      case 's':
        seconds_per_unit = 1;
        break;
      case 'm':
        seconds_per_unit = 60;
        break;
      case 'h':
        seconds_per_unit = 3600;
        break;
      case 'd':
        seconds_per_unit = 86400;
        break;
      default:
        return std::nullopt;
    }
    // system_clock counts nanoseconds in 64 bits: about 292 years either side of 1970.
    constexpr std::int64_t kLongestSeconds = std::int64_t{100} * 366 * 86400;
    if (count > kLongestSeconds / seconds_per_unit) return std::nullopt;
    return now - std::chrono::seconds(count * seconds_per_unit);
  }
  return parse_time(text);
}

std::optional<double> nearest_rank(std::vector<double>& samples, double percent) {
  if (samples.empty()) return std::nullopt;
  // percent * n is exact for whole percents, so 95% of 20 samples is rank 19, not 20.
  const double exact = percent * static_cast<double>(samples.size()) / 100.0;
  const auto rank =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(exact)), 1, samples.size());
  const auto nth = samples.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(samples.begin(), nth, samples.end());
  return *nth;
}

std::int64_t GroupStats::tokens_saved() const { return difference(tokens_in, tokens_out); }
double GroupStats::saved_percent() const {
  return percent_of(static_cast<double>(tokens_saved()), static_cast<double>(tokens_in));
}
double GroupStats::rewritten_percent() const {
  return percent_of(static_cast<double>(rewritten), static_cast<double>(server_calls));
}
double GroupStats::over_budget_percent() const {
  return percent_of(static_cast<double>(over_budget), static_cast<double>(server_calls));
}
double GroupStats::average_tokens_out() const {
  return calls > 0 ? static_cast<double>(tokens_out) / static_cast<double>(calls) : 0.0;
}

std::int64_t ObserveStats::tokens_saved() const { return difference(tokens_in, tokens_out); }
double ObserveStats::saved_percent() const {
  return percent_of(static_cast<double>(tokens_saved()), static_cast<double>(tokens_in));
}

StatsAccumulator::StatsAccumulator(StatsFilter filter) : filter_(std::move(filter)) {}

void StatsAccumulator::count(Bucket& bucket, const CallEvent& event) {
  GroupStats& sums = bucket.sums;
  ++sums.calls;
  if (event.kind == CallKind::kFetch) {
    ++sums.fetches;
    if (event.outcome == Outcome::kFetchFailed) {
      ++sums.fetch_errors;
      ++sums.fetch_errors_by_reason[event.error.empty() ? "unknown" : event.error];
    }
  } else {
    ++sums.server_calls;
    if (event.outcome != Outcome::kPassthrough && event.outcome != Outcome::kError) {
      ++sums.rewritten;
    }
  }
  if (event.over_budget) ++sums.over_budget;
  sums.tokens_in += event.original_tokens;
  sums.tokens_out += event.final_tokens;
  sums.bytes_in += event.original_bytes;
  sums.bytes_out += event.final_bytes;
  bucket.proxy_ms.push_back(milliseconds(event.proxy_latency));
  if (event.server_latency) bucket.server_ms.push_back(milliseconds(*event.server_latency));
  if (fill_counts(event)) bucket.fill_pct.push_back(*event.fill_pct);
}

bool StatsAccumulator::add(const CallEvent& event) {
  ++records_read_;
  if (!filter_.matches(event)) return false;
  ++records_matched_;
  if (!first_time_ || event.time < *first_time_) first_time_ = event.time;
  if (!last_time_ || event.time > *last_time_) last_time_ = event.time;

  if (event.kind == CallKind::kToolsList) {
    ++tool_lists_.listings;
    if (!tool_lists_.latest || event.time >= tool_lists_.latest->time) tool_lists_.latest = event;
    if (!tool_lists_.largest || event.final_tokens > tool_lists_.largest->final_tokens) {
      tool_lists_.largest = event;
    }
    return true;
  }
  if (event.observed) {
    auto found = observed_.find(event.tool);
    if (found == observed_.end()) found = observed_.emplace(event.tool, ObserveStats{}).first;
    ++found->second.calls;
    found->second.tokens_in += event.original_tokens;
    found->second.tokens_out += event.final_tokens;
    return true;
  }

  auto found = tools_.find(event.tool);
  if (found == tools_.end()) found = tools_.emplace(event.tool, ToolBuckets{}).first;
  count(found->second[static_cast<std::size_t>(event.outcome)], event);
  auto client = clients_.find(event.client);
  if (client == clients_.end()) client = clients_.emplace(event.client, Bucket{}).first;
  count(client->second, event);
  if (!event.limit.empty()) {
    auto limit = limits_.find(event.limit);
    if (limit == limits_.end()) limit = limits_.emplace(event.limit, Bucket{}).first;
    count(limit->second, event);
  }
  return true;
}

void StatsAccumulator::skip(std::string_view where, std::string_view reason) {
  if (skipped_.count++ == 0) skipped_.first = std::string(where) + ": " + std::string(reason);
}

StatsReport StatsAccumulator::report() {
  StatsReport report;
  report.records_read = records_read_;
  report.records_matched = records_matched_;
  report.skipped = skipped_;
  report.first_time = first_time_;
  report.last_time = last_time_;

  GroupBuilder total;
  std::array<GroupBuilder, std::size(kAllOutcomes)> by_outcome;
  for (auto& [tool, buckets] : tools_) {
    GroupBuilder by_tool;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      Bucket& bucket = buckets[i];
      if (bucket.sums.calls == 0) continue;
      total.add(bucket);
      by_tool.add(bucket);
      by_outcome[i].add(bucket);
      GroupStats group = bucket.sums;
      group.proxy = summarize(bucket.proxy_ms);
      group.server = summarize(bucket.server_ms);
      group.fill = summarize_fill(bucket.fill_pct);
      report.groups.push_back({{tool, kAllOutcomes[i]}, std::move(group)});
    }
    report.tools.push_back({tool, by_tool.finish()});
  }
  report.total = total.finish();
  for (std::size_t i = 0; i < by_outcome.size(); ++i) {
    GroupStats stats = by_outcome[i].finish();
    if (stats.calls > 0) report.outcomes.push_back({kAllOutcomes[i], std::move(stats)});
  }
  sort_by_saved(report.tools,
                [](const ToolStats& group) -> const std::string& { return group.tool; });

  bool named = false;
  for (const auto& [client, bucket] : clients_) {
    GroupBuilder builder;
    builder.add(bucket);
    report.clients.push_back({client, builder.finish()});
    named = named || !client.empty();
  }
  if (!named) report.clients.clear();  // older files: no record names its client
  sort_by_saved(report.clients,
                [](const ClientStats& group) -> const std::string& { return group.client; });
  for (const auto& [limit, bucket] : limits_) {
    GroupBuilder builder;
    builder.add(bucket);
    report.limits.push_back({limit, builder.finish()});
  }
  sort_by_saved(report.limits,
                [](const LimitStats& group) -> const std::string& { return group.limit; });

  for (const auto& [tool, stats] : observed_) {
    report.observe.calls += stats.calls;
    report.observe.tokens_in += stats.tokens_in;
    report.observe.tokens_out += stats.tokens_out;
    report.observed.push_back({tool, stats});
  }
  std::stable_sort(report.observed.begin(), report.observed.end(),
                   [](const ToolObserveStats& a, const ToolObserveStats& b) {
                     return a.stats.tokens_saved() > b.stats.tokens_saved();
                   });
  report.tool_lists = tool_lists_;
  return report;
}

bool read_call_records(std::istream& in, std::string_view name, StatsAccumulator& into) {
  // Enough of a bad line to recognise it, never the whole of it.
  constexpr std::size_t kExcerpt = 40;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string_view text = line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text::is_blank(text)) continue;
    auto event = parse_call_event(text);
    if (event) {
      into.add(*event);
      continue;
    }
    std::string reason = event.error().message();
    reason += ": ";
    reason += text.substr(0, kExcerpt);
    if (text.size() > kExcerpt) reason += "...";
    into.skip(std::string(name) + ":" + std::to_string(number), reason);
  }
  return !in.bad();
}

}  // namespace ctxguard::telemetry
