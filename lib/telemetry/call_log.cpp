#include "telemetry/call_log.hpp"

#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/json/serialize.hpp>

namespace ctxguard::telemetry {

namespace {

// `tools/list tools=14 tokens=2904->2991 bytes=11609->11961 largest=write_file:412,...
// instructions_tokens=240 budget=10000 client="claude-code"`.
std::string format_tool_list_line(const CallEvent& event) {
  std::string largest;
  for (const CallEvent::ToolTokens& tool : event.largest_tools) {
    if (!largest.empty()) largest += ',';
    fmt::format_to(std::back_inserter(largest), "{}:{}", tool.name, tool.tokens);
  }
  std::string line =
      fmt::format("tools/list tools={} tokens={}->{} bytes={}->{} largest={}", event.items_total,
                  event.original_tokens, event.final_tokens, event.original_bytes,
                  event.final_bytes, largest.empty() ? "-" : largest);
  if (event.instructions_tokens) {
    fmt::format_to(std::back_inserter(line), " instructions_tokens={}", *event.instructions_tokens);
  }
  fmt::format_to(std::back_inserter(line), " budget={}", event.budget);
  if (event.over_budget) line += " over";
  if (!event.client.empty()) {
    fmt::format_to(std::back_inserter(line), " client={}",
                   boost::json::serialize(boost::json::string(event.client)));
  }
  return line;
}

}  // namespace

std::string format_call_line(const CallEvent& event) {
  if (event.kind == CallKind::kToolsList) return format_tool_list_line(event);
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
  if (event.fill_pct) fmt::format_to(std::back_inserter(line), " fill={:.1f}%", *event.fill_pct);
  if (!event.error.empty()) fmt::format_to(std::back_inserter(line), " error={}", event.error);
  if (!event.id.is_null()) {
    fmt::format_to(std::back_inserter(line), " id={}", boost::json::serialize(event.id));
  }
  // A name is the client's own text: quoted as JSON, so a space cannot forge a field.
  if (!event.client.empty()) {
    fmt::format_to(std::back_inserter(line), " client={}",
                   boost::json::serialize(boost::json::string(event.client)));
  }
  fmt::format_to(std::back_inserter(line), " proxy_ms={:.3f}", milliseconds(event.proxy_latency));
  if (event.server_latency) {
    fmt::format_to(std::back_inserter(line), " server_ms={:.3f}",
                   milliseconds(*event.server_latency));
  }
  return line;
}

spdlog::level::level_enum call_log_level(const CallEvent& event) {
  if (event.kind == CallKind::kToolsList) return spdlog::level::info;  // every listing
  const bool decided = event.outcome != Outcome::kPassthrough && event.outcome != Outcome::kError;
  return decided || event.over_budget ? spdlog::level::info : spdlog::level::debug;
}

void log_call_event(const CallEvent& event) {
  const auto level = call_log_level(event);
  if (spdlog::should_log(level)) spdlog::log(level, "{}", format_call_line(event));
  if (event.kind == CallKind::kToolsList && event.over_budget) {
    const std::size_t instructions = event.instructions_tokens.value_or(0);
    spdlog::warn(
        "tools/list takes {} estimated tokens of every conversation ({} tools: {}, instructions: "
        "{}), over toolListBudget {}; the largest tools: {} (docs/configuration.md, "
        "toolListBudget)",
        event.final_tokens + instructions, event.items_total, event.final_tokens, instructions,
        event.budget,
        event.largest_tools.empty() ? std::string("-") : event.largest_tools.front().name);
  }
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
