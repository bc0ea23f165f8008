#include "telemetry/stats_report.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/json/parse.hpp>

#include "config/command_line.hpp"
#include "telemetry/stats_command.hpp"

using namespace ctxguard::telemetry;
using namespace std::chrono_literals;
namespace json = boost::json;

extern char** environ;

namespace {

// Nine enforce records, one observe record (line 11), one line that is JSON but not a record
// (line 6) and a blank line (line 9). The numbers the tests expect are worked out by hand:
//   enforce tokens in  50000+20000+1000+3000+0+30000+12000+4100+0  = 120100
//   enforce tokens out  4000+ 3000+1000+2500+0+ 3500+ 2000+4100+60 =  20160 (saved 99940, 83.21%)
//   proxy ms sorted: 0.1 0.2 0.5 0.8 1.0 1.5 2.0 3.0 4.0 -> p50 = 5th = 1.0, p95 = 9th = 4.0
//   server ms sorted: 10 15 20 30 40 60 500 -> p50 = 4th = 30, p95 = 7th = 500
//   fill of the answers the fit sized: 88 96.5 -> p50 = 1st = 88, p10 = 1st = 88 (the compacted
//   answer's 40, the chunk's 95, the fetch's 99 and the observe record's 97 do not count)
constexpr const char* kRecords =
    R"({"time":"2026-11-22T10:00:00Z","kind":"call","tool":"list_bookings","outcome":"paginated","original_tokens":50000,"final_tokens":4000,"original_bytes":180000,"final_bytes":14000,"fill_pct":96.5,"over_budget":true,"proxy_ms":2.0,"server_ms":40.0}
{"time":"2026-11-22T10:05:00Z","kind":"call","tool":"list_bookings","outcome":"summarized","original_tokens":20000,"final_tokens":3000,"original_bytes":70000,"final_bytes":10000,"fill_pct":88.0,"over_budget":true,"proxy_ms":4.0,"server_ms":60.0}
{"time":"2026-11-22T10:10:00Z","kind":"call","tool":"list_bookings","outcome":"passthrough","original_tokens":1000,"final_tokens":1000,"original_bytes":3000,"final_bytes":3000,"proxy_ms":0.5,"server_ms":20.0}
{"time":"2026-11-22T10:15:00Z","kind":"call","tool":"get_guest","outcome":"compacted","original_tokens":3000,"final_tokens":2500,"original_bytes":9000,"final_bytes":7000,"fill_pct":40.0,"proxy_ms":1.0,"server_ms":30.0}
{"time":"2026-11-22T10:20:00Z","kind":"call","tool":"get_guest","outcome":"error","original_bytes":200,"final_bytes":200,"proxy_ms":0.2,"server_ms":10.0}
{"time":"2026-11-22T10:22:00Z","kind":"call","tool":"get_guest"}
{"time":"2026-11-22T10:25:00Z","kind":"task","tool":"export_report","outcome":"chunked","original_tokens":30000,"final_tokens":3500,"original_bytes":100000,"final_bytes":12000,"fill_pct":95.0,"over_budget":true,"proxy_ms":3.0,"server_ms":500.0}
{"time":"2026-11-22T10:30:00Z","kind":"resource","tool":"file:///logs/app,2026.log","outcome":"chunked","original_tokens":12000,"final_tokens":2000,"original_bytes":48000,"final_bytes":8000,"over_budget":true,"proxy_ms":1.5,"server_ms":15.0}

{"time":"2026-11-22T10:35:00Z","kind":"fetch","tool":"ctxguard_fetch:list_bookings","outcome":"fetched","original_tokens":4100,"final_tokens":4100,"original_bytes":14500,"final_bytes":14500,"fill_pct":99.0,"proxy_ms":0.8}
{"time":"2026-11-22T10:45:00Z","kind":"call","tool":"list_bookings","mode":"observe","outcome":"paginated","original_tokens":40000,"final_tokens":3800,"original_bytes":150000,"final_bytes":13000,"fill_pct":97.0,"over_budget":true,"proxy_ms":2.5,"server_ms":35.0}
{"time":"2026-11-22T10:40:00Z","kind":"fetch","tool":"ctxguard_fetch:list_bookings","outcome":"fetch-error","final_tokens":60,"final_bytes":250,"proxy_ms":0.1,"error":"expired"}
)";

TimePoint at(const char* text) { return *parse_time(text); }

StatsReport report_of(StatsFilter filter = {}) {
  StatsAccumulator accumulator(std::move(filter));
  std::istringstream in(kRecords);
  REQUIRE(read_call_records(in, "calls.jsonl", accumulator));
  return accumulator.report();
}

const ToolStats& tool_named(const StatsReport& report, std::string_view name) {
  for (const ToolStats& tool : report.tools) {
    if (tool.tool == name) return tool;
  }
  FAIL("no tool " << name);
  throw std::logic_error("unreachable");
}

const GroupStats& outcome_named(const StatsReport& report, Outcome outcome) {
  for (const OutcomeStats& group : report.outcomes) {
    if (group.outcome == outcome) return group.stats;
  }
  FAIL("no outcome " << to_string(outcome));
  throw std::logic_error("unreachable");
}

struct CommandRun {
  int status = 0;
  std::string out;
  std::string err;
};

CommandRun run(std::vector<const char*> args, const std::string& input = "") {
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream err;
  CommandRun result;
  result.status = run_stats(args, in, out, err, at("2026-11-22T12:00:00Z"));
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace

TEST_CASE("stats: a known file gives the hand-computed totals") {
  const StatsReport report = report_of();
  CHECK(report.records_read == 10);
  CHECK(report.records_matched == 10);
  const GroupStats& total = report.total;
  CHECK(total.calls == 9);
  CHECK(total.server_calls == 7);
  CHECK(total.rewritten == 5);
  CHECK(total.rewritten_percent() == Approx(500.0 / 7));
  CHECK(total.over_budget == 4);
  CHECK(total.over_budget_percent() == Approx(400.0 / 7));
  CHECK(total.tokens_in == 120100);
  CHECK(total.tokens_out == 20160);
  CHECK(total.tokens_saved() == 99940);
  CHECK(total.saved_percent() == Approx(100.0 * 99940 / 120100));
  CHECK(total.bytes_in == 424700);
  CHECK(total.bytes_out == 68950);
  CHECK(total.average_tokens_out() == Approx(2240.0));
  CHECK(total.fetches == 2);
  CHECK(total.fetch_errors == 1);
  CHECK(total.fetch_errors_by_reason == std::map<std::string, std::size_t>{{"expired", 1}});
  CHECK(total.proxy.samples == 9);
  CHECK(total.proxy.p50_ms == Approx(1.0));
  CHECK(total.proxy.p95_ms == Approx(4.0));
  CHECK(total.proxy.max_ms == Approx(4.0));
  CHECK(total.server.samples == 7);
  CHECK(total.server.p50_ms == Approx(30.0));
  CHECK(total.server.p95_ms == Approx(500.0));
  CHECK(format_time(*report.first_time) == "2026-11-22T10:00:00.000Z");
  CHECK(format_time(*report.last_time) == "2026-11-22T10:45:00.000Z");
}

TEST_CASE("stats: observe-mode records are reported apart and never count as savings") {
  const StatsReport report = report_of();
  CHECK(report.observe.calls == 1);
  CHECK(report.observe.tokens_saved() == 36200);
  CHECK(report.observe.saved_percent() == Approx(90.5));
  REQUIRE(report.observed.size() == 1);
  CHECK(report.observed[0].tool == "list_bookings");
  const GroupStats& bookings = tool_named(report, "list_bookings").stats;
  CHECK(bookings.calls == 3);  // the observe call is not one of them
  CHECK(bookings.tokens_saved() == 63000);
  CHECK(outcome_named(report, Outcome::kPaginated).calls == 1);
}

TEST_CASE("stats: lines that are not records are counted with the first one's place") {
  const StatsReport report = report_of();
  CHECK(report.skipped.count == 1);
  CHECK_THAT(report.skipped.first,
             Catch::StartsWith("calls.jsonl:6: not a ctxguard call record: {\"time\""));
  CHECK_THAT(report.skipped.first, Catch::EndsWith("..."));
}

TEST_CASE("stats: tools are sorted by tokens saved, outcomes in their fixed order") {
  const StatsReport report = report_of();
  std::vector<std::string> tools;
  for (const ToolStats& tool : report.tools) tools.push_back(tool.tool);
  CHECK(tools == std::vector<std::string>{"list_bookings", "export_report",
                                          "file:///logs/app,2026.log", "get_guest",
                                          "ctxguard_fetch:list_bookings"});
  CHECK(report.tools.back().stats.tokens_saved() == -60);
  REQUIRE(report.outcomes.size() == std::size(kAllOutcomes));
  for (std::size_t i = 0; i < report.outcomes.size(); ++i) {
    CHECK(report.outcomes[i].outcome == kAllOutcomes[i]);
  }
  const GroupStats& chunked = outcome_named(report, Outcome::kChunked);
  CHECK(chunked.calls == 2);
  CHECK(chunked.tokens_saved() == 36500);
  CHECK(chunked.over_budget == 2);
  CHECK(report.groups.size() == 9);  // each enforce record is its own (tool, outcome) here
}

TEST_CASE("stats: per-tool latencies use only that tool's samples") {
  const StatsReport report = report_of();
  const GroupStats& bookings = tool_named(report, "list_bookings").stats;
  CHECK(bookings.proxy.p50_ms == Approx(2.0));  // 0.5 2.0 4.0: rank ceil(1.5) = 2
  CHECK(bookings.proxy.p95_ms == Approx(4.0));
  CHECK(bookings.server.p50_ms == Approx(40.0));
  const GroupStats& fetch = tool_named(report, "ctxguard_fetch:list_bookings").stats;
  CHECK(fetch.server.samples == 0);
  CHECK_FALSE(fetch.server.p50_ms.has_value());
  CHECK(fetch.server_calls == 0);
  CHECK(fetch.rewritten_percent() == 0.0);
}

TEST_CASE("stats: nearest-rank percentiles take the ceil(p/100 * n)-th smallest sample") {
  std::vector<double> samples;
  for (int i = 20; i >= 1; --i) samples.push_back(i);
  CHECK(nearest_rank(samples, 50) == 10.0);
  CHECK(nearest_rank(samples, 95) == 19.0);  // exactly 19, not 20 from rounding noise
  CHECK(nearest_rank(samples, 100) == 20.0);
  CHECK(nearest_rank(samples, 0) == 1.0);
  std::vector<double> one{7.5};
  CHECK(nearest_rank(one, 50) == 7.5);
  std::vector<double> none;
  CHECK_FALSE(nearest_rank(none, 50).has_value());
}

TEST_CASE("stats: --since is inclusive and --until exclusive") {
  StatsFilter filter;
  filter.since = at("2026-11-22T10:10:00Z");
  filter.until = at("2026-11-22T10:30:00Z");
  const StatsReport report = report_of(filter);
  CHECK(report.records_read == 10);
  CHECK(report.records_matched == 4);  // 10:10, 10:15, 10:20 and 10:25; not 10:30
  CHECK(report.total.calls == 4);
  CHECK(format_time(*report.first_time) == "2026-11-22T10:10:00.000Z");
  CHECK(format_time(*report.last_time) == "2026-11-22T10:25:00.000Z");
}

TEST_CASE("stats: a tool glob keeps only matching tools") {
  StatsFilter filter;
  filter.tool_globs = {"list_*"};
  const StatsReport report = report_of(filter);
  CHECK(report.total.calls == 3);
  CHECK(report.observe.calls == 1);
  REQUIRE(report.tools.size() == 1);
  CHECK(report.tools[0].tool == "list_bookings");

  filter.tool_globs = {"ctxguard_fetch:*", "get_gues?"};
  CHECK(report_of(filter).total.calls == 4);
}

TEST_CASE("stats: a client glob keeps only that client's calls") {
  const auto call = [](std::string client, std::size_t tokens) {
    CallEvent event;
    event.time = *parse_time("2026-11-27T01:00:00Z");
    event.tool = "list";
    event.client = std::move(client);
    event.original_tokens = tokens;
    return event;
  };
  StatsFilter filter;
  filter.client_globs = {"claude-*"};
  StatsAccumulator accumulator(filter);
  CHECK(accumulator.add(call("claude-code", 100)));
  CHECK(accumulator.add(call("claude-ai", 200)));
  CHECK_FALSE(accumulator.add(call("codex-mcp-client", 400)));
  CHECK_FALSE(accumulator.add(call("", 800)));  // a client that gave no name
  const StatsReport report = accumulator.report();
  CHECK(report.total.calls == 2);
  CHECK(report.total.tokens_in == 300);
  filter.client_globs = {"*"};
  StatsAccumulator everyone(filter);
  CHECK(everyone.add(call("", 800)));
}

TEST_CASE("stats: calls are summed by client, most tokens saved first") {
  const auto call = [](std::string client, std::size_t in, std::size_t out) {
    CallEvent event;
    event.time = *parse_time("2026-11-27T01:00:00Z");
    event.tool = "list";
    event.client = std::move(client);
    event.original_tokens = in;
    event.final_tokens = out;
    event.proxy_latency = std::chrono::milliseconds(2);
    return event;
  };
  StatsAccumulator accumulator;
  accumulator.add(call("codex-mcp-client", 1000, 900));
  accumulator.add(call("claude-code", 9000, 3000));
  accumulator.add(call("claude-code", 5000, 4000));
  accumulator.add(call("", 700, 700));
  const StatsReport report = accumulator.report();
  REQUIRE(report.clients.size() == 3);
  CHECK(report.clients[0].client == "claude-code");
  CHECK(report.clients[0].stats.calls == 2);
  CHECK(report.clients[0].stats.tokens_saved() == 7000);
  CHECK(report.clients[0].stats.proxy.samples == 2);
  CHECK(report.clients[1].client == "codex-mcp-client");
  CHECK(report.clients[2].client.empty());
  const std::string table = format_table(report);
  CHECK_THAT(table, Catch::Contains("By client"));
  CHECK_THAT(table, Catch::Contains("(no name)"));
  const json::value document = json::parse(format_json(report));
  CHECK(document.at("clients").as_array().size() == 3);
  CHECK(document.at("clients").at(0).at("client") == "claude-code");

  // Records of a version that did not name clients: no such section.
  StatsAccumulator older;
  older.add(call("", 700, 700));
  const StatsReport unnamed = older.report();
  CHECK(unnamed.clients.empty());
  CHECK_THAT(format_table(unnamed), !Catch::Contains("By client"));
}

TEST_CASE("stats: rewritten answers are summed by the limit they were held to") {
  const auto call = [](std::string limit, std::size_t in, std::size_t out) {
    CallEvent event;
    event.time = *parse_time("2026-11-27T01:00:00Z");
    event.tool = "list";
    event.limit = std::move(limit);
    event.original_tokens = in;
    event.final_tokens = out;
    return event;
  };
  StatsAccumulator accumulator;
  accumulator.add(call("tokens", 9000, 4000));
  accumulator.add(call("chars", 9000, 2000));
  accumulator.add(call("chars", 5000, 2500));
  accumulator.add(call("", 700, 700));  // passed through: no limit
  const StatsReport report = accumulator.report();
  REQUIRE(report.limits.size() == 2);
  CHECK(report.limits[0].limit == "chars");
  CHECK(report.limits[0].stats.calls == 2);
  CHECK(report.limits[1].limit == "tokens");
  CHECK_THAT(format_table(report), Catch::Contains("By limit"));
  const json::value document = json::parse(format_json(report));
  CHECK(document.at("limits").at(0).at("limit") == "chars");
}

TEST_CASE("stats: an outcome list keeps only those outcomes") {
  StatsFilter filter;
  filter.outcomes = {Outcome::kChunked, Outcome::kError};
  const StatsReport report = report_of(filter);
  CHECK(report.total.calls == 3);
  CHECK(report.outcomes.size() == 2);
  CHECK(report.observe.calls == 0);
}

TEST_CASE("stats: a kind keeps only records of that kind") {
  StatsFilter filter;
  filter.kinds = {CallKind::kFetch};
  const StatsReport fetches = report_of(filter);
  CHECK(fetches.total.calls == 2);
  CHECK(fetches.total.fetches == 2);
  CHECK(fetches.total.server_calls == 0);
  filter.kinds = {CallKind::kTask};
  CHECK(report_of(filter).total.tokens_saved() == 26500);
}

TEST_CASE("stats: nothing matched is a report with zero calls") {
  StatsFilter filter;
  filter.since = at("2030-01-01");
  const StatsReport report = report_of(filter);
  CHECK(report.total.calls == 0);
  CHECK(report.total.saved_percent() == 0.0);
  CHECK_FALSE(report.total.proxy.p50_ms.has_value());
  CHECK_FALSE(report.first_time.has_value());
  CHECK_THAT(format_table(report), Catch::Contains("no records matched"));
  const json::value document = json::parse(format_json(report));
  CHECK(document.at("total").at("calls") == 0);
  CHECK(document.at("total").at("proxy_ms").at("p50").is_null());
  CHECK(document.at("span").at("first").is_null());
}

TEST_CASE("stats: relative durations count back from now") {
  const TimePoint now = at("2026-11-22T12:00:00Z");
  CHECK(parse_time_bound("30s", now) == at("2026-11-22T11:59:30Z"));
  CHECK(parse_time_bound("15m", now) == at("2026-11-22T11:45:00Z"));
  CHECK(parse_time_bound("2h", now) == at("2026-11-22T10:00:00Z"));
  CHECK(parse_time_bound("7d", now) == at("2026-11-15T12:00:00Z"));
  CHECK(parse_time_bound("0s", now) == now);
  CHECK(parse_time_bound("2026-11-20", now) == at("2026-11-20T00:00:00Z"));
  CHECK(parse_time_bound("2026-11-20T08:00:00+02:00", now) == at("2026-11-20T06:00:00Z"));
  for (const char* bad : {"", "15", "m", "-5m", "1.5h", "15w", "15 m", "99999999999d", "soon"}) {
    INFO(bad);
    CHECK_FALSE(parse_time_bound(bad, now).has_value());
  }
}

TEST_CASE("stats: the JSON document carries the same numbers under snake_case names") {
  const json::value document = json::parse(format_json(report_of()));
  const json::value& total = document.at("total");
  CHECK(total.at("calls") == 9);
  CHECK(total.at("server_calls") == 7);
  CHECK(total.at("rewritten_pct").as_double() == 71.43);
  CHECK(total.at("over_budget") == 4);
  CHECK(total.at("tokens_in") == 120100);
  CHECK(total.at("tokens_out") == 20160);
  CHECK(total.at("tokens_saved") == 99940);
  CHECK(total.at("saved_pct").as_double() == 83.21);
  CHECK(total.at("avg_tokens_out").as_double() == 2240.0);
  CHECK(total.at("proxy_ms").at("p50").as_double() == 1.0);
  CHECK(total.at("proxy_ms").at("p95").as_double() == 4.0);
  CHECK(total.at("server_ms").at("p50").as_double() == 30.0);
  CHECK(total.at("server_ms").at("p95").as_double() == 500.0);
  CHECK(total.at("fetch_errors_by_reason").at("expired") == 1);
  CHECK(document.at("observe").at("tokens_saved") == 36200);
  CHECK(document.at("observe").at("tools").at(0).at("tool") == "list_bookings");
  CHECK(document.at("records").at("skipped_lines") == 1);
  CHECK(document.at("span").at("first") == "2026-11-22T10:00:00.000Z");
  CHECK(document.at("tools").at(0).at("tool") == "list_bookings");
  CHECK(document.at("tools").at(0).at("tokens_saved") == 63000);
  CHECK(document.at("outcomes").at(4).at("outcome") == "chunked");
  CHECK(document.at("outcomes").at(4).at("saved_pct").as_double() == 86.9);
  CHECK(document.at("groups").as_array().size() == 9);
}

TEST_CASE("stats: budget fill is taken over the answers the fit sized") {
  const StatsReport report = report_of();
  CHECK(report.total.fill.samples == 2);
  CHECK(report.total.fill.p50_pct == 88.0);
  CHECK(report.total.fill.p10_pct == 88.0);
  CHECK(report.total.fill.min_pct == 88.0);
  const GroupStats& bookings = tool_named(report, "list_bookings").stats;
  CHECK(bookings.fill.samples == 2);
  CHECK(outcome_named(report, Outcome::kPaginated).fill.p50_pct == 96.5);
  CHECK(tool_named(report, "get_guest").stats.fill.samples == 0);     // compacted: it fit whole
  CHECK(outcome_named(report, Outcome::kChunked).fill.samples == 0);  // sized by chunkSize
  CHECK(outcome_named(report, Outcome::kFetched).fill.samples == 0);  // sized by its request

  const json::value document = json::parse(format_json(report));
  CHECK(document.at("total").at("fill_pct").at("p50").as_double() == 88.0);
  CHECK(document.at("total").at("fill_pct").at("samples") == 2);
  CHECK(document.at("tools").at(1).at("fill_pct").at("p10").is_null());  // a chunk: none
  const std::string table = format_table(report);
  CHECK_THAT(table, Catch::Contains("budget fill     p50 88.0%, p10 88.0%, min 88.0% (2 answers "
                                    "cut to fit)"));
  CHECK_THAT(table, Catch::Contains("fill p50/p10"));
  CHECK_THAT(format_csv(report), Catch::Contains(",0,0,1,96.5,96.5,96.5\n"));
}

TEST_CASE("stats: CSV has one header and one row per tool and outcome, tool names quoted") {
  const std::string csv = format_csv(report_of());
  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  CHECK(header ==
        "tool,outcome,calls,server_calls,rewritten,over_budget,tokens_in,tokens_out,"
        "tokens_saved,saved_pct,bytes_in,bytes_out,avg_tokens_out,proxy_p50_ms,proxy_p95_ms,"
        "proxy_max_ms,server_p50_ms,server_p95_ms,server_max_ms,fetches,fetch_errors,"
        "fill_samples,fill_p50_pct,fill_p10_pct,fill_min_pct");
  CHECK_THAT(csv, Catch::Contains("\n\"file:///logs/app,2026.log\",chunked,1,1,1,1,12000,2000,"
                                  "10000,83.33,48000,8000,2000,1.5,1.5,1.5,15,15,15,0,0,0,,,\n"));
  CHECK_THAT(csv, Catch::Contains("\nctxguard_fetch:list_bookings,fetch-error,1,0,0,0,0,60,-60,0,"
                                  "0,250,60,0.1,0.1,0.1,,,,1,1,0,,,\n"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 10);
}

TEST_CASE("stats: a server's odd tool name cannot break the table's lines or the CSV's fields") {
  CallEvent event;
  event.time = at("2026-11-22T10:00:00Z");
  event.tool = "say \"hi\",\nnow";
  StatsAccumulator accumulator;
  accumulator.add(event);
  const StatsReport report = accumulator.report();
  CHECK_THAT(format_table(report), Catch::Contains("\n  say \"hi\",?now "));
  CHECK_THAT(format_csv(report), Catch::Contains("\n\"say \"\"hi\"\",\nnow\",passthrough,1,"));
}

TEST_CASE("stats: the table has the summary block and the per-tool and per-outcome tables") {
  const std::string table = format_table(report_of());
  for (const char* line : {
           "  span            2026-11-22T10:00:00.000Z .. 2026-11-22T10:45:00.000Z\n",
           "  records         10 read, 10 matched\n",
           "  calls           9\n",
           "  rewritten       5 of 7 server calls (71.4%)\n",
           "  oversized       4 (57.1%)\n",
           "  tokens in/out   120100 / 20160\n",
           "  tokens saved    99940 (83.2%)\n",
           "  avg answer      2240 tokens\n",
           "  proxy latency   p50 1.00 ms, p95 4.00 ms, max 4.00 ms\n",
           "  server latency  p50 30.00 ms, p95 500.00 ms (7 timed)\n",
           "  fetches         2 (1 failed: expired 1)\n",
           "  observe mode    1 call, would have saved 36200 tokens (90.5%); not in the totals\n",
       }) {
    CHECK_THAT(table, Catch::Contains(line));
  }
  const auto by_tool = table.find("By tool");
  const auto by_outcome = table.find("By outcome");
  REQUIRE(by_tool != std::string::npos);
  REQUIRE(by_outcome != std::string::npos);
  CHECK(by_tool < table.find("  list_bookings "));
  CHECK(table.find("  list_bookings ") < table.find("  export_report "));
  CHECK(table.find("  export_report ") < table.find("  get_guest "));
  CHECK(by_outcome < table.find("  fetch-error "));
  CHECK_THAT(table, Catch::Contains("Observe mode by tool"));
}

TEST_CASE("stats: the command reads files and stdin, and reports skipped lines on stderr") {
  const auto path = std::filesystem::temp_directory_path() / "ctxguard-stats-test.jsonl";
  std::ofstream(path) << kRecords;
  const std::string file = path.string();
  const CommandRun both = run({"--format", "json", file.c_str(), "-"}, kRecords);
  std::filesystem::remove(path);
  CHECK(both.status == 0);
  CHECK(json::parse(both.out).at("total").at("calls") == 18);
  CHECK_THAT(both.err, Catch::Contains("ctxguard stats: skipped 2 lines that are not call records "
                                       "(first: " +
                                       file + ":6: not a ctxguard call record"));

  const CommandRun only_stdin = run({"--kind", "fetch", "--since", "2h", "-"}, kRecords);
  CHECK(only_stdin.status == 0);
  CHECK_THAT(only_stdin.out, Catch::Contains("  calls           2\n"));
  CHECK_THAT(only_stdin.err, Catch::Contains("skipped 1 line that is not a call record (first: "
                                             "<stdin>:6:"));
}

TEST_CASE("stats: usage errors name the problem and exit 2") {
  const CommandRun outcome = run({"--outcome", "paginated,shrunk", "-"});
  CHECK(outcome.status == 2);
  CHECK(outcome.out.empty());
  CHECK_THAT(outcome.err,
             Catch::Contains("--outcome: unknown name 'shrunk' (valid: passthrough, compacted, "
                             "summarized, paginated, chunked, error, fetched, fetch-error)"));
  CHECK_THAT(run({"--kind", "tool", "-"}).err,
             Catch::Contains("(valid: call, task, resource, fetch, tools_list)"));
  CHECK_THAT(run({"--since", "yesterday", "-"}).err, Catch::Contains("--since 'yesterday'"));
  CHECK_THAT(run({"--since", "1h", "--until", "2h", "-"}).err,
             Catch::Contains("--since must be before --until"));
  CHECK_THAT(run({"--format", "xml", "-"}).err, Catch::Contains("table, json or csv"));
  CHECK_THAT(run({}).err, Catch::Contains("no FILE given"));
  CHECK(run({"--bogus", "-"}).status == 2);
  const CommandRun missing = run({"/nonexistent/calls.jsonl"});
  CHECK(missing.status == 2);
  CHECK(missing.out.empty());
  CHECK_THAT(missing.err, Catch::Contains("/nonexistent/calls.jsonl"));
}

TEST_CASE("stats: --help describes every option and the main help points to it") {
  const CommandRun help = run({"--help"});
  CHECK(help.status == 0);
  for (const char* option : {"--since", "--until", "--tool", "--outcome", "--kind", "--format"}) {
    CHECK_THAT(help.out, Catch::Contains(option));
  }
  CHECK_THAT(ctxguard::config::help_text(), Catch::Contains("ctxguard stats --help"));
}

TEST_CASE("stats: the binary prints a report, or exits 2 for a missing file") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ctxguard-stats-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "calls.jsonl") << kRecords;
  const auto run_binary = [&](const std::string& file) {
    const std::string binary = CTXGUARD_BINARY;
    const std::string out_path = (dir / "out.txt").string();
    const std::string err_path = (dir / "err.txt").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    std::vector<char*> argv{const_cast<char*>(binary.c_str()), const_cast<char*>("stats"),
                            const_cast<char*>(file.c_str()), nullptr};
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(spawned == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    // Not `out << file.rdbuf()`: an empty file sets failbit and silences the rest.
    const auto text = [](const std::string& path) {
      std::ifstream in(path);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    return std::pair{WEXITSTATUS(status), text(out_path) + "\n--- stderr\n" + text(err_path)};
  };

  const auto [ok_status, ok_output] = run_binary((dir / "calls.jsonl").string());
  CHECK(ok_status == 0);
  CHECK_THAT(ok_output, Catch::Contains("  tokens saved    99940 (83.2%)\n"));
  CHECK_THAT(ok_output, Catch::Contains("skipped 1 line that is not a call record"));

  const std::string missing = (dir / "missing.jsonl").string();
  const auto [missing_status, missing_output] = run_binary(missing);
  CHECK(missing_status == 2);
  CHECK_THAT(missing_output, Catch::Contains("cannot open " + missing));
  fs::remove_all(dir);
}
