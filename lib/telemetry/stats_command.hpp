#pragma once
// `ctxguard stats [options] FILE...`: the report over telemetry files. The command
// line and the files are read here; the numbers come from stats_report.hpp.

#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "config/command_line.hpp"
#include "telemetry/stats_report.hpp"

namespace ctxguard::telemetry {

enum class StatsFormat { kTable, kJson, kCsv };

struct StatsOptions {
  bool help = false;
  StatsFilter filter;
  StatsFormat format = StatsFormat::kTable;
  std::vector<std::string> files;  // "-" is standard input
};

// `args` are the words after `stats`. Relative --since/--until values count back from `now`.
// A problem is one line for stderr; the caller exits with status 2.
Checked<StatsOptions> parse_stats_command_line(std::span<const char* const> args, TimePoint now);

// The text printed by `ctxguard stats --help`.
std::string stats_help_text();

// Runs the command: the report on `out`, problems (usage, unreadable files, skipped lines) on
// `err`, standard input from `in`. Returns the exit status: 0, or 2 for a usage error or a file
// that cannot be read (nothing is printed on `out` then).
int run_stats(std::span<const char* const> args, std::istream& in, std::ostream& out,
              std::ostream& err, TimePoint now = std::chrono::system_clock::now());

}  // namespace ctxguard::telemetry
