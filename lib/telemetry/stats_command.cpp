#include "telemetry/stats_command.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include <fmt/format.h>

#include "support/error.hpp"

namespace ctxguard::telemetry {
namespace {

namespace po = boost::program_options;

constexpr const char* kUsage = "Usage: ctxguard stats [options] FILE...";
using config::kExitUsage;

po::options_description stats_options() {
  po::options_description options("Options");
  // clang-format off
  options.add_options()
    ("help,h", "print this help and exit")
    ("since", po::value<std::string>()->value_name("T"),
     "only records at or after T: an RFC 3339 time (2026-11-22T10:00:00Z), a date "
     "(2026-11-22, midnight UTC) or a duration back from now (30s, 15m, 2h, 7d)")
    ("until", po::value<std::string>()->value_name("T"),
     "only records before T (same forms as --since)")
    ("tool", po::value<std::vector<std::string>>()->value_name("GLOB")->composing(),
     "only tools matching GLOB ('*' any run, '?' one character; repeatable: any may match); "
     "fetches are filed as ctxguard_fetch:<tool>")
    ("client", po::value<std::vector<std::string>>()->value_name("GLOB")->composing(),
     "only calls of clients whose name (clientInfo.name, e.g. claude-code) matches GLOB "
     "(repeatable: any may match)")
    ("outcome", po::value<std::vector<std::string>>()->value_name("NAME[,NAME...]")->composing(),
     "only these outcomes: passthrough, compacted, summarized, paginated, chunked, error, "
     "fetched, fetch-error")
    ("kind", po::value<std::vector<std::string>>()->value_name("KIND[,KIND...]")->composing(),
     "only these kinds: call, task, resource, fetch, tools_list")
    ("format", po::value<std::string>()->default_value("table")->value_name("FORMAT"),
     "table (for people), json (one document) or csv (one row per tool and outcome)");
  // clang-format on
  return options;
}

// The visible options and the positional FILEs, which --help describes in its own words.
po::options_description all_stats_options() {
  po::options_description options;
  options.add(stats_options());
  options.add_options()("file", po::value<std::vector<std::string>>(), "");
  return options;
}

template <class Name, std::size_t N>
std::string name_list(const Name (&names)[N]) {
  std::string out;
  for (const Name name : names) out += (out.empty() ? "" : ", ") + std::string(to_string(name));
  return out;
}

// "a,b" given once or repeated -> the parsed names; the first unknown one as an error.
template <class T, std::size_t N, class Parse>
Checked<std::vector<T>> parse_names(const std::vector<std::string>& given, std::string_view option,
                                    const T (&valid)[N], Parse parse) {
  std::vector<T> names;
  for (const std::string& text : given) {
    std::string_view rest = text;
    while (true) {
      const std::size_t comma = std::min(rest.find(','), rest.size());
      std::string_view word = rest.substr(0, comma);
      while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
      while (!word.empty() && word.back() == ' ') word.remove_suffix(1);
      const auto parsed = parse(word);
      if (!parsed) {
        return Problem{
            fmt::format("--{}: unknown name '{}' (valid: {})", option, word, name_list(valid))};
      }
      names.push_back(*parsed);
      if (comma == rest.size()) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return names;
}

constexpr CallKind kAllKinds[] = {CallKind::kCall, CallKind::kTask, CallKind::kResource,
                                  CallKind::kFetch, CallKind::kToolsList};

Checked<> read_bound(const po::variables_map& vm, const char* option, TimePoint now,
                     std::optional<TimePoint>& out) {
  if (vm.count(option) == 0) return {};
  const std::string& text = vm[option].as<std::string>();
  out = parse_time_bound(text, now);
  if (out) return {};
  return Problem{
      fmt::format("--{} '{}' is not a time: give an RFC 3339 time (2026-11-22T10:00:00Z), a date "
                  "(2026-11-22) or a duration back from now (30s, 15m, 2h, 7d)",
                  option, text)};
}

// Streams one file into the accumulator, or says why it cannot be read.
Checked<> read_file(const std::string& path, std::istream& standard_input, StatsAccumulator& into) {
  if (path == "-") {
    if (read_call_records(standard_input, "<stdin>", into)) return {};
    return Problem{"cannot read standard input"};
  }
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) return Problem{path + ": is a directory"};
  std::ifstream file(path, std::ios::binary);
  if (!file) return Problem{fmt::format("cannot open {}: {}", path, std::strerror(errno))};
  if (!read_call_records(file, path, into)) {
    return Problem{fmt::format("cannot read {}: {}", path, std::strerror(errno))};
  }
  return {};
}

}  // namespace

Checked<StatsOptions> parse_stats_command_line(std::span<const char* const> args, TimePoint now) {
  const std::vector<std::string> words(args.begin(), args.end());
  po::positional_options_description positional;
  positional.add("file", -1);
  po::variables_map vm;
  try {
    po::store(
        po::command_line_parser(words).options(all_stats_options()).positional(positional).run(),
        vm);
    po::notify(vm);
  } catch (const po::error& error) {
    return Problem{std::string(error.what()) + ". " + kUsage};
  }

  StatsOptions options;
  if (vm.count("help")) {
    options.help = true;
    return options;
  }
  if (vm.count("file") == 0) {
    return Problem{std::string("no FILE given ('-' reads standard input). ") + kUsage};
  }
  options.files = vm["file"].as<std::vector<std::string>>();

  StatsFilter& filter = options.filter;
  if (auto read = read_bound(vm, "since", now, filter.since); !read) return read.error();
  if (auto read = read_bound(vm, "until", now, filter.until); !read) return read.error();
  if (filter.since && filter.until && *filter.since >= *filter.until) {
    return Problem{"--since must be before --until"};
  }
  if (vm.count("tool")) filter.tool_globs = vm["tool"].as<std::vector<std::string>>();
  if (vm.count("client")) filter.client_globs = vm["client"].as<std::vector<std::string>>();
  if (vm.count("outcome")) {
    auto outcomes = parse_names(vm["outcome"].as<std::vector<std::string>>(), "outcome",
                                kAllOutcomes, [](std::string_view w) { return parse_outcome(w); });
    if (!outcomes) return outcomes.error();
    filter.outcomes = *std::move(outcomes);
  }
  if (vm.count("kind")) {
    auto kinds = parse_names(vm["kind"].as<std::vector<std::string>>(), "kind", kAllKinds,
                             [](std::string_view w) { return parse_call_kind(w); });
    if (!kinds) return kinds.error();
    filter.kinds = *std::move(kinds);
  }

  const std::string& format = vm["format"].as<std::string>();
  if (format == "table") {
    options.format = StatsFormat::kTable;
  } else if (format == "json") {
    options.format = StatsFormat::kJson;
  } else if (format == "csv") {
    options.format = StatsFormat::kCsv;
  } else {
    return Problem{"--format '" + format + "' must be table, json or csv"};
  }
  return options;
}

std::string stats_help_text() {
  std::ostringstream out;
  out << "ctxguard stats: calls, savings and latencies from the records ctxguard writes to "
         "--telemetry-file.\n\n"
      << kUsage << "\n\n"
      << "FILE: a file written by --telemetry-file, one call record per line; '-' reads "
         "standard input.\n"
      << "Several files are read as one; lines that are not call records are skipped and "
         "counted on stderr.\n\n"
      << stats_options() << "\n"
      << "Observe-mode calls are reported apart and never count as savings.\n"
      << "Exit status: 0 (also when nothing matched), 2 for a usage error or a file that cannot "
         "be read.\n\n"
      << "Examples:\n"
      << "  ctxguard stats --since 24h calls.jsonl\n"
      << "  ctxguard stats --tool 'list_*' --outcome paginated,summarized --format csv "
         "calls-*.jsonl\n";
  return out.str();
}

int run_stats(std::span<const char* const> args, std::istream& in, std::ostream& out,
              std::ostream& err, TimePoint now) {
  auto parsed = parse_stats_command_line(args, now);
  if (!parsed) {
    err << "ctxguard stats: " << parsed.error().message << "\n";
    return kExitUsage;
  }
  const StatsOptions& options = *parsed;
  if (options.help) {
    out << stats_help_text();
    return 0;
  }

  StatsAccumulator accumulator(options.filter);
  for (const std::string& path : options.files) {
    if (auto read = read_file(path, in, accumulator); !read) {
      err << "ctxguard stats: " << read.error().message << "\n";
      return kExitUsage;
    }
  }
  const StatsReport report = accumulator.report();
  if (report.skipped.count > 0) {
    err << fmt::format("ctxguard stats: skipped {} {} (first: {})\n", report.skipped.count,
                       report.skipped.count == 1 ? "line that is not a call record"
                                                 : "lines that are not call records",
                       report.skipped.first);
  }
  switch (options.format) {
    case StatsFormat::kTable:
      out << format_table(report);
      break;
    case StatsFormat::kJson:
      out << format_json(report);
      break;
    case StatsFormat::kCsv:
      out << format_csv(report);
      break;
  }
  out.flush();
  if (!out) {
    err << "ctxguard stats: cannot write the report\n";
    return kExitUsage;
  }
  return 0;
}

}  // namespace ctxguard::telemetry
