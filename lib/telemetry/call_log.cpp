#include "telemetry/call_log.hpp"

#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/json/serialize.hpp>

namespace ctxguard::telemetry {

namespace {

double ms(std::chrono::nanoseconds value) {
  return std::chrono::duration<double, std::milli>(value).count();
}

}  // namespace

std::string format_call_line(const CallEvent& event) {
  std::string stages;
  for (const std::string& stage : event.stages) {
    if (!stages.empty()) stages += ',';
    stages += stage;
  }
  std::string line = fmt::format(
      "{} tool={} tokens={}->{} bytes={}->{} items={}/{} stages={} outcome={} reduction={:.1f}% "
      "budget={}",
      event.observed ? "observe" : "call", event.tool, event.original_tokens, event.final_tokens,
      event.original_bytes, event.final_bytes, event.items_shown, event.items_total,
      stages.empty() ? "-" : stages, to_string(event.outcome), event.reduction_percent(),
      event.budget);
  if (event.over_budget) line += " oversized";
  if (!event.limit.empty()) fmt::format_to(std::back_inserter(line), " limit={}", event.limit);
  if (!event.error.empty()) fmt::format_to(std::back_inserter(line), " error={}", event.error);
  if (!event.id.is_null()) {
    fmt::format_to(std::back_inserter(line), " id={}", boost::json::serialize(event.id));
  }
  // A name is the client's own text: quoted as JSON, so a space cannot forge a field.
  if (!event.client.empty()) {
    fmt::format_to(std::back_inserter(line), " client={}",
                   boost::json::serialize(boost::json::string(event.client)));
  }
  fmt::format_to(std::back_inserter(line), " proxy_ms={:.3f}", ms(event.proxy_latency));
  if (event.server_latency) {
    fmt::format_to(std::back_inserter(line), " server_ms={:.3f}", ms(*event.server_latency));
  }
  return line;
}

spdlog::level::level_enum call_log_level(const CallEvent& event) {
  const bool decided = event.outcome != Outcome::kPassthrough && event.outcome != Outcome::kError;
  return decided || event.over_budget ? spdlog::level::info : spdlog::level::debug;
}

void log_call_event(const CallEvent& event) {
  const auto level = call_log_level(event);
  if (!spdlog::should_log(level)) return;
  spdlog::log(level, "{}", format_call_line(event));
}

void log_oversize_alert(const OversizeAlert& alert, const OversizeAlarmOptions& options) {
  spdlog::warn(
      "oversized answers: {} of the last {} tool calls ({:.1f}%) exceeded their token budget in "
      "{} s, above the {:.0f}% alert threshold; see which tools with `ctxguard stats` or "
      "/metrics (ctxguard_oversized_calls_total)",
      alert.oversized, alert.calls, 100.0 * alert.share(), options.window.count(),
      100.0 * options.threshold);
}

}  // namespace ctxguard::telemetry
