// The three faces of a StatsReport. The JSON document and the CSV columns carry the same numbers
// with the same names; the table is for people and rounds more.

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "support/json_writer.hpp"
#include "telemetry/stats_report.hpp"

namespace ctxguard::telemetry {
namespace {

namespace json = boost::json;

// Shares and averages to 2 decimals, latencies to 3 (microseconds, as the records have them):
// the machine formats stay stable instead of printing float noise.
double hundredths(double value) { return std::round(value * 100.0) / 100.0; }
double ms(double value) { return std::round(value * 1000.0) / 1000.0; }

json::value optional_ms(const std::optional<double>& value) {
  return value ? json::value(ms(*value)) : json::value(nullptr);
}

json::object latency_json(const LatencySummary& latency) {
  return {{"samples", latency.samples},
          {"p50", optional_ms(latency.p50_ms)},
          {"p95", optional_ms(latency.p95_ms)},
          {"max", optional_ms(latency.max_ms)}};
}

json::value optional_hundredths(const std::optional<double>& value) {
  return value ? json::value(hundredths(*value)) : json::value(nullptr);
}

json::object fill_json(const FillSummary& fill) {
  return {{"samples", fill.samples},
          {"p50", optional_hundredths(fill.p50_pct)},
          {"p10", optional_hundredths(fill.p10_pct)},
          {"min", optional_hundredths(fill.min_pct)}};
}

// `object` gets the group's members after the ones it has (its tool or outcome).
void add_group_json(json::object& object, const GroupStats& stats) {
  json::object reasons;
  for (const auto& [reason, count] : stats.fetch_errors_by_reason) reasons[reason] = count;
  object["calls"] = stats.calls;
  object["server_calls"] = stats.server_calls;
  object["rewritten"] = stats.rewritten;
  object["rewritten_pct"] = hundredths(stats.rewritten_percent());
  object["over_budget"] = stats.over_budget;
  object["over_budget_pct"] = hundredths(stats.over_budget_percent());
  object["tokens_in"] = stats.tokens_in;
  object["tokens_out"] = stats.tokens_out;
  object["tokens_saved"] = stats.tokens_saved();
  object["saved_pct"] = hundredths(stats.saved_percent());
  object["bytes_in"] = stats.bytes_in;
  object["bytes_out"] = stats.bytes_out;
  object["avg_tokens_out"] = hundredths(stats.average_tokens_out());
  object["proxy_ms"] = latency_json(stats.proxy);
  object["server_ms"] = latency_json(stats.server);
  object["fill_pct"] = fill_json(stats.fill);
  object["fetches"] = stats.fetches;
  object["fetch_errors"] = stats.fetch_errors;
  object["fetch_errors_by_reason"] = std::move(reasons);
}

void add_observe_json(json::object& object, const ObserveStats& stats) {
  object["calls"] = stats.calls;
  object["tokens_in"] = stats.tokens_in;
  object["tokens_out"] = stats.tokens_out;
  object["tokens_saved"] = stats.tokens_saved();
  object["saved_pct"] = hundredths(stats.saved_percent());
}

json::value optional_time(const std::optional<TimePoint>& time) {
  return time ? json::value(format_time(*time)) : json::value(nullptr);
}

// A text table: columns as wide as their widest cell, the first left-aligned, numbers right.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string render(std::string_view indent) const {
    std::vector<std::size_t> widths(rows_.front().size(), 0);
    for (const auto& row : rows_) {
      for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      out += indent;
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i == 0) {
          out += fmt::format("{:<{}}", row[i], widths[i]);
        } else {
          out += fmt::format("  {:>{}}", row[i], widths[i]);
        }
      }
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += '\n';
    }
    if (rows_.size() == 1) out += fmt::format("{}(none)\n", indent);
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string table_ms(const std::optional<double>& value) {
  return value ? fmt::format("{:.2f}", *value) : "-";
}

std::string table_percent(double value) { return fmt::format("{:.1f}%", value); }

// Tool names come from the server: long ones are cut so one cannot stretch the whole table, and
// control characters shown as '?' so one cannot break its lines.
std::string table_name(std::string_view name) {
  constexpr std::size_t kWidest = 40;
  std::string shown(name.size() <= kWidest ? name : name.substr(0, kWidest - 3));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return name.size() <= kWidest ? shown : shown + "...";
}

std::vector<std::string> group_header(std::string first) {
  return {std::move(first), "calls",         "rewritten",      "oversized",
          "tokens in",      "tokens out",    "saved",          "saved %",
          "avg out",        "proxy p50/p95", "server p50/p95", "fill p50/p10"};
}

std::string table_fill(const FillSummary& fill) {
  if (fill.samples == 0) return "-";
  return fmt::format("{:.0f}%/{:.0f}%", *fill.p50_pct, *fill.p10_pct);
}

std::string table_latency(const LatencySummary& latency) {
  if (latency.samples == 0) return "-";
  return table_ms(latency.p50_ms) + "/" + table_ms(latency.p95_ms);
}

std::vector<std::string> group_row(std::string first, const GroupStats& stats) {
  return {std::move(first),
          std::to_string(stats.calls),
          stats.server_calls > 0 ? table_percent(stats.rewritten_percent()) : "-",
          std::to_string(stats.over_budget),
          std::to_string(stats.tokens_in),
          std::to_string(stats.tokens_out),
          std::to_string(stats.tokens_saved()),
          table_percent(stats.saved_percent()),
          fmt::format("{:.0f}", stats.average_tokens_out()),
          table_latency(stats.proxy),
          table_latency(stats.server),
          table_fill(stats.fill)};
}

std::string fetch_line(const GroupStats& stats) {
  std::string line = fmt::format("{} ({} failed", stats.fetches, stats.fetch_errors);
  const char* separator = ": ";
  for (const auto& [reason, count] : stats.fetch_errors_by_reason) {
    line += fmt::format("{}{} {}", separator, reason, count);
    separator = ", ";
  }
  return line + ")";
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_ms(const std::optional<double>& value) {
  return value ? fmt::format("{}", ms(*value)) : "";
}

std::string csv_hundredths(const std::optional<double>& value) {
  return value ? fmt::format("{}", hundredths(*value)) : "";
}

}  // namespace

namespace {

// The tool-list section of the table: the number of listings, the latest and the largest.
std::string tool_lists_text(const ToolListStats& lists) {
  if (lists.listings == 0) return {};
  std::string out;
  out += fmt::format("\nTool lists ({} listings; what the tools take in every conversation)\n",
                     lists.listings);
  const auto describe = [](std::string_view label, const CallEvent& listing) {
    std::string largest;
    for (const CallEvent::ToolTokens& tool : listing.largest_tools) {
      largest += fmt::format("{}{} {}", largest.empty() ? "" : ", ", tool.name, tool.tokens);
    }
    return fmt::format(
        "  {}: {} tools, {} tokens ({} from the server), instructions {}; largest: {}\n", label,
        listing.items_total, listing.final_tokens, listing.original_tokens,
        listing.instructions_tokens.value_or(0), largest.empty() ? "-" : largest);
  };
  out += describe("latest", *lists.latest);
  out += describe("largest", *lists.largest);
  return out;
}

// The tool-list section of the JSON report: the number of listings, the latest and the largest.
json::object tool_lists_json(const ToolListStats& lists) {
  const auto listing = [](const std::optional<CallEvent>& event) -> json::value {
    if (!event) return nullptr;
    json::array largest;
    for (const CallEvent::ToolTokens& tool : event->largest_tools) {
      largest.push_back(json::object{{"name", tool.name}, {"tokens", tool.tokens}});
    }
    return json::object{{"time", format_time(event->time)},
                        {"tools", event->items_total},
                        {"tokens", event->final_tokens},
                        {"server_tokens", event->original_tokens},
                        {"instructions_tokens", event->instructions_tokens.value_or(0)},
                        {"largest_tools", std::move(largest)}};
  };
  return json::object{{"listings", lists.listings},
                      {"latest", listing(lists.latest)},
                      {"largest", listing(lists.largest)}};
}

}  // namespace

std::string format_json(const StatsReport& report) {
  json::object records{{"read", report.records_read},
                       {"matched", report.records_matched},
                       {"skipped_lines", report.skipped.count}};
  records["first_skipped"] =
      report.skipped.count > 0 ? json::value(report.skipped.first) : json::value(nullptr);

  json::object total;
  add_group_json(total, report.total);
  json::object observe;
  add_observe_json(observe, report.observe);
  json::array observe_tools;
  for (const ToolObserveStats& tool : report.observed) {
    json::object object{{"tool", tool.tool}};
    add_observe_json(object, tool.stats);
    observe_tools.push_back(std::move(object));
  }
  observe["tools"] = std::move(observe_tools);

  json::array tools;
  for (const ToolStats& tool : report.tools) {
    json::object object{{"tool", tool.tool}};
    add_group_json(object, tool.stats);
    tools.push_back(std::move(object));
  }
  json::array clients;
  for (const ClientStats& client : report.clients) {
    json::object object{{"client", client.client}};
    add_group_json(object, client.stats);
    clients.push_back(std::move(object));
  }
  json::array limits;
  for (const LimitStats& limit : report.limits) {
    json::object object{{"limit", limit.limit}};
    add_group_json(object, limit.stats);
    limits.push_back(std::move(object));
  }
  json::array outcomes;
  for (const OutcomeStats& outcome : report.outcomes) {
    json::object object{{"outcome", to_string(outcome.outcome)}};
    add_group_json(object, outcome.stats);
    outcomes.push_back(std::move(object));
  }
  json::array groups;
  for (const ToolOutcomeStats& group : report.groups) {
    json::object object{{"tool", group.key.tool}, {"outcome", to_string(group.key.outcome)}};
    add_group_json(object, group.stats);
    groups.push_back(std::move(object));
  }

  json::object document{
      {"records", std::move(records)},
      {"span", json::object{{"first", optional_time(report.first_time)},
                            {"last", optional_time(report.last_time)}}},
      {"total", std::move(total)},
      {"observe", std::move(observe)},
      {"tools", std::move(tools)},
      {"clients", std::move(clients)},
      {"limits", std::move(limits)},
      {"outcomes", std::move(outcomes)},
      {"groups", std::move(groups)},
      {"tool_lists", tool_lists_json(report.tool_lists)},
  };
  return to_json(document) + "\n";
}

std::string format_csv(const StatsReport& report) {
  std::string out =
      "tool,outcome,calls,server_calls,rewritten,over_budget,tokens_in,tokens_out,tokens_saved,"
      "saved_pct,bytes_in,bytes_out,avg_tokens_out,proxy_p50_ms,proxy_p95_ms,proxy_max_ms,"
      "server_p50_ms,server_p95_ms,server_max_ms,fetches,fetch_errors,fill_samples,fill_p50_pct,"
      "fill_p10_pct,fill_min_pct\n";
  for (const ToolOutcomeStats& group : report.groups) {
    const GroupStats& s = group.stats;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        csv_field(group.key.tool), to_string(group.key.outcome), s.calls, s.server_calls,
        s.rewritten, s.over_budget, s.tokens_in, s.tokens_out, s.tokens_saved(),
        hundredths(s.saved_percent()), s.bytes_in, s.bytes_out, hundredths(s.average_tokens_out()),
        csv_ms(s.proxy.p50_ms), csv_ms(s.proxy.p95_ms), csv_ms(s.proxy.max_ms),
        csv_ms(s.server.p50_ms), csv_ms(s.server.p95_ms), csv_ms(s.server.max_ms), s.fetches,
        s.fetch_errors, s.fill.samples, csv_hundredths(s.fill.p50_pct),
        csv_hundredths(s.fill.p10_pct), csv_hundredths(s.fill.min_pct));
  }
  return out;
}

namespace {

// The summary block: span, records, then enforce mode's totals and observe mode in a line.
std::string summary_text(const StatsReport& report) {
  const GroupStats& total = report.total;
  std::string out = "ctxguard stats\n";
  if (report.first_time) {
    out += fmt::format("  span            {} .. {}\n", format_time(*report.first_time),
                       format_time(report.last_time.value_or(*report.first_time)));
  } else {
    out += "  span            no records matched\n";
  }
  out += fmt::format("  records         {} read, {} matched\n", report.records_read,
                     report.records_matched);
  out += "\nEnforce mode\n";
  out += fmt::format("  calls           {}\n", total.calls);
  out += fmt::format("  rewritten       {} of {} server calls ({})\n", total.rewritten,
                     total.server_calls, table_percent(total.rewritten_percent()));
  out += fmt::format("  oversized       {} ({})\n", total.over_budget,
                     table_percent(total.over_budget_percent()));
  out += fmt::format("  tokens in/out   {} / {}\n", total.tokens_in, total.tokens_out);
  out += fmt::format("  tokens saved    {} ({})\n", total.tokens_saved(),
                     table_percent(total.saved_percent()));
  out += fmt::format("  bytes in/out    {} / {}\n", total.bytes_in, total.bytes_out);
  out += fmt::format("  avg answer      {:.0f} tokens\n", total.average_tokens_out());
  out += fmt::format("  proxy latency   p50 {} ms, p95 {} ms, max {} ms\n",
                     table_ms(total.proxy.p50_ms), table_ms(total.proxy.p95_ms),
                     table_ms(total.proxy.max_ms));
  out += fmt::format("  server latency  p50 {} ms, p95 {} ms ({} timed)\n",
                     table_ms(total.server.p50_ms), table_ms(total.server.p95_ms),
                     total.server.samples);
  if (total.fill.samples == 0) {
    out += "  budget fill     no answer paginated or summarized\n";
  } else {
    out += fmt::format(
        "  budget fill     p50 {:.1f}%, p10 {:.1f}%, min {:.1f}% ({} answers cut to fit)\n",
        *total.fill.p50_pct, *total.fill.p10_pct, *total.fill.min_pct, total.fill.samples);
  }
  out += fmt::format("  fetches         {}\n", fetch_line(total));
  const ObserveStats& observe = report.observe;
  if (observe.calls == 0) {
    out += "  observe mode    no calls\n";
  } else {
    out += fmt::format(
        "  observe mode    {} call{}, would have saved {} tokens ({}); not in the totals\n",
        observe.calls, observe.calls == 1 ? "" : "s", observe.tokens_saved(),
        table_percent(observe.saved_percent()));
  }
  return out;
}

}  // namespace

std::string format_table(const StatsReport& report) {
  std::string out = summary_text(report);
  TextTable tools(group_header("tool"));
  for (const ToolStats& tool : report.tools)
    tools.add(group_row(table_name(tool.tool), tool.stats));
  out += "\nBy tool (most tokens saved first; latencies in ms)\n" + tools.render("  ");

  if (!report.clients.empty()) {
    TextTable clients(group_header("client"));
    for (const ClientStats& client : report.clients) {
      clients.add(
          group_row(client.client.empty() ? std::string("(no name)") : table_name(client.client),
                    client.stats));
    }
    out += "\nBy client (clientInfo.name)\n" + clients.render("  ");
  }
  if (!report.limits.empty()) {
    TextTable limits(group_header("limit"));
    for (const LimitStats& limit : report.limits) limits.add(group_row(limit.limit, limit.stats));
    out +=
        "\nBy limit (the client's limit each rewritten answer was held to)\n" + limits.render("  ");
  }

  TextTable outcomes(group_header("outcome"));
  for (const OutcomeStats& outcome : report.outcomes) {
    outcomes.add(group_row(std::string(to_string(outcome.outcome)), outcome.stats));
  }
  out += "\nBy outcome\n" + outcomes.render("  ");

  out += tool_lists_text(report.tool_lists);
  if (!report.observed.empty()) {
    TextTable observed({"tool", "calls", "tokens in", "tokens out", "would save", "saved %"});
    for (const ToolObserveStats& tool : report.observed) {
      observed.add({table_name(tool.tool), std::to_string(tool.stats.calls),
                    std::to_string(tool.stats.tokens_in), std::to_string(tool.stats.tokens_out),
                    std::to_string(tool.stats.tokens_saved()),
                    table_percent(tool.stats.saved_percent())});
    }
    out += "\nObserve mode by tool (what enforce would have done; not in the totals)\n" +
           observed.render("  ");
  }
  return out;
}

}  // namespace ctxguard::telemetry
