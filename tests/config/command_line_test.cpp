#include "config/command_line.hpp"
#include "config/setting_table.hpp"

#include <initializer_list>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>

using namespace ctxguard::config;

namespace {

ctxguard::Checked<CommandLine> parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"ctxguard"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_command_line(argv);
}

CommandLine ok(const ctxguard::Checked<CommandLine>& result) {
  if (!result) FAIL(result.error().message);
  return *result;
}

std::string error_of(const ctxguard::Checked<CommandLine>& result) {
  REQUIRE_FALSE(result.has_value());
  return result.error().message;
}

}  // namespace

TEST_CASE("command line: everything after -- is the server command, untouched") {
  const CommandLine line = ok(parse(
      {"--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "--help", "--", "/tmp"}));
  CHECK(line.action == CommandLine::Action::kRun);
  CHECK(line.settings.server_command ==
        std::vector<std::string>{"npx", "-y", "@modelcontextprotocol/server-filesystem", "--help",
                                 "--", "/tmp"});
}

TEST_CASE("command line: --client (or CTXGUARD_CLIENT) names a client that sends no name") {
  REQUIRE(ok(parse({"--", "server"})).settings.assumed_client.empty());
  REQUIRE(ok(parse({"--client", "Cline", "--", "server"})).settings.assumed_client == "Cline");
  const std::string long_name(300, 'x');
  REQUIRE_FALSE(parse({"--client", long_name.c_str(), "--", "s"}).has_value());
}

TEST_CASE("command line: defaults apply when no option is given") {
  const Settings settings = ok(parse({"--", "server"})).settings;
  const Settings defaults;
  CHECK(settings.log.level == spdlog::level::info);
  CHECK_FALSE(settings.log.file);
  CHECK(settings.lifecycle.shutdown_timeout == std::chrono::seconds(5));
  CHECK(settings.lifecycle.kill_timeout == defaults.lifecycle.kill_timeout);
  CHECK(settings.max_message_bytes == std::size_t{256} << 20);
}

TEST_CASE("command line: options before -- are ours, in both spellings") {
  const Settings settings =
      ok(parse({"--log-level", "debug", "--log-file=/tmp/ctxguard.log", "--shutdown-timeout",
                "0.25", "--kill-timeout=1", "--max-message-bytes", "4096", "--", "server"}))
          .settings;
  CHECK(settings.log.level == spdlog::level::debug);
  CHECK(settings.log.file == "/tmp/ctxguard.log");
  CHECK(settings.lifecycle.shutdown_timeout == std::chrono::milliseconds(250));
  CHECK(settings.lifecycle.kill_timeout == std::chrono::seconds(1));
  CHECK(settings.max_message_bytes == 4096);
}

TEST_CASE("command line: --help and --version need no server command") {
  CHECK(ok(parse({"--help"})).action == CommandLine::Action::kHelp);
  CHECK(ok(parse({"-h"})).action == CommandLine::Action::kHelp);
  CHECK(ok(parse({"--version"})).action == CommandLine::Action::kVersion);
}

TEST_CASE("command line: help lists every option with its default") {
  const std::string help = help_text();
  for (const char* needle : {"--log-level", "(=info)", "--log-file", "--shutdown-timeout", "(=5)",
                             "--kill-timeout", "(=2)", "--max-message-bytes", "(=268435456)",
                             "--help", "--version", "-- <server command>"}) {
    CHECK_THAT(help, Catch::Contains(needle));
  }
}

TEST_CASE("command line: a missing server command is a usage error") {
  CHECK_THAT(error_of(parse({})), Catch::Contains("missing server command"));
  CHECK_THAT(error_of(parse({"--"})), Catch::Contains("missing server command"));
  CHECK_THAT(error_of(parse({"--log-level", "debug"})), Catch::Contains("missing server command"));
}

TEST_CASE("command line: a server command without -- is named in the error") {
  CHECK_THAT(error_of(parse({"npx", "-y", "server"})),
             Catch::Contains("unexpected argument 'npx'"));
  CHECK_THAT(error_of(parse({"--log-level", "warn", "node", "server.js"})),
             Catch::Contains("'node'"));
}

TEST_CASE("command line: unknown options and bad values are usage errors naming them") {
  CHECK_THAT(error_of(parse({"--bogus", "--", "server"})), Catch::Contains("--bogus"));
  CHECK_THAT(error_of(parse({"--log-level", "loud", "--", "server"})), Catch::Contains("loud"));
  CHECK_THAT(error_of(parse({"--shutdown-timeout", "soon", "--", "server"})),
             Catch::Contains("shutdown-timeout"));
  CHECK_THAT(error_of(parse({"--shutdown-timeout", "-1", "--", "server"})),
             Catch::Contains("between 0 and 86400"));
  CHECK_THAT(error_of(parse({"--max-message-bytes", "12", "--", "server"})),
             Catch::Contains("at least 1024"));
  CHECK_THAT(error_of(parse({"--log-level", "--", "server"})), Catch::Contains("log-level"));
}

TEST_CASE("command line: the budget defaults are the seeds' (4000, 12000, 50, 200, 10 min, 256M)") {
  const Settings settings = ok(parse({"--", "server"})).settings;
  const BudgetSettings& budget = settings.budget;
  CHECK(budget.token_budget == 4000);
  CHECK(budget.hard_cap == 12000);
  CHECK(budget.page_size == 50);
  CHECK(budget.max_page_size == 200);
  CHECK(budget.min_cut_items == 10);
  const ProcessSettings& process = settings.process;
  CHECK(process.cursor_ttl == std::chrono::seconds(600));
  CHECK(process.cache_bytes == std::size_t{256} << 20);
  CHECK(process.fetch_tool_prefix == "proxy_");
  CHECK_FALSE(process.cursor_secret.has_value());
}

TEST_CASE("command line: every budget flag is read") {
  const Settings settings =
      ok(parse({"--token-budget", "8000", "--hard-cap", "20000", "--page-size", "20",
                "--max-page-size", "100", "--cursor-ttl", "90", "--cache-size", "64M",
                "--fetch-tool-prefix", "cg_", "--", "server"}))
          .settings;
  const BudgetSettings& budget = settings.budget;
  CHECK(budget.token_budget == 8000);
  CHECK(budget.hard_cap == 20000);
  CHECK(budget.page_size == 20);
  CHECK(budget.max_page_size == 100);
  CHECK(settings.process.cursor_ttl == std::chrono::seconds(90));
  CHECK(settings.process.cache_bytes == std::size_t{64} << 20);
  CHECK(settings.process.fetch_tool_prefix == "cg_");
  CHECK(ok(parse({"--cache-size", "2G", "--", "s"})).settings.process.cache_bytes == std::size_t{2}
                                                                                         << 30);
  CHECK(ok(parse({"--cache-size", "2097152", "--", "s"})).settings.process.cache_bytes ==
        std::size_t{2} << 20);
}

TEST_CASE("command line: a budget above the default cap without --hard-cap raises the cap") {
  const BudgetSettings budget = ok(parse({"--token-budget", "20000", "--", "s"})).settings.budget;
  CHECK(budget.hard_cap == 60000);
}

TEST_CASE("command line: inconsistent budgets are refused with one clear line") {
  CHECK(error_of(parse({"--token-budget", "20000", "--hard-cap", "15000", "--", "s"}))
            .find("--hard-cap") != std::string::npos);
  CHECK(error_of(parse({"--token-budget", "50", "--", "s"})).find("--token-budget") !=
        std::string::npos);
  CHECK(error_of(parse({"--hard-cap", "3000", "--", "s"})).find("--hard-cap") != std::string::npos);
  CHECK(error_of(parse({"--page-size", "300", "--", "s"})).find("--page-size") !=
        std::string::npos);
  CHECK(error_of(parse({"--page-size", "0", "--", "s"})).find("--page-size") != std::string::npos);
  CHECK(error_of(parse({"--cursor-ttl", "0", "--", "s"})).find("--cursor-ttl") !=
        std::string::npos);
  for (const char* size : {"12", "1x", "M", "-5M", "99999999999999999999G"}) {
    INFO(size);
    CHECK(error_of(parse({"--cache-size", size, "--", "s"})).find("--cache-size") !=
          std::string::npos);
  }
  CHECK(error_of(parse({"--fetch-tool-prefix", "a b", "--", "s"})).find("--fetch-tool-prefix") !=
        std::string::npos);
}

namespace {

// An environment of its own: the test's variables, nothing of the real one.
Environment environment_of(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found != variables.end() ? found->second.c_str() : nullptr;
  };
}

ctxguard::Checked<CommandLine> parse_with(std::map<std::string, std::string> variables,
                                          std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"ctxguard"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_command_line(argv, environment_of(std::move(variables)));
}

}  // namespace

TEST_CASE("command line: CTXGUARD_* variables set what flags do, and flags win") {
  const CommandLine line = ok(parse_with(
      {{"CTXGUARD_TOKEN_BUDGET", "6000"}, {"CTXGUARD_PAGE_SIZE", "30"}, {"CTXGUARD_TABLES", "on"}},
      {"--page-size", "20", "--", "server"}));
  CHECK(line.settings.budget.token_budget == 6000);
  CHECK(line.settings.budget.page_size == 20);
  CHECK(line.settings.budget.summary.tables);
  REQUIRE(line.sources.environment.size() == 3);
  REQUIRE(line.sources.command_line.size() == 1);
  CHECK(line.sources.command_line[0].spec->key == "pageSize");
  // An empty variable is unset; a bad one is named.
  CHECK(ok(parse_with({{"CTXGUARD_TOKEN_BUDGET", ""}}, {"--", "s"})).settings.budget.token_budget ==
        4000);
  CHECK(error_of(parse_with({{"CTXGUARD_PAGE_SIZE", "lots"}}, {"--", "s"})) ==
        "CTXGUARD_PAGE_SIZE: lots is not allowed: it must be a whole number from 1 to 100000.");
}

TEST_CASE("command line: switches, modes and the old --no-projection") {
  CHECK(ok(parse({"--tables", "--", "s"})).settings.budget.summary.tables);
  CHECK_FALSE(ok(parse({"--pagination=false", "--", "s"})).settings.budget.pagination);
  CHECK_FALSE(ok(parse({"--no-projection", "--", "s"})).settings.budget.summary.project);
  CHECK(ok(parse({"--mode", "observe", "--", "s"})).settings.budget.observe);
  CHECK(
      ok(parse({"--estimator-margin", "20", "--", "s"})).settings.budget.estimator_margin_percent ==
      20);
  // A switch takes no separate value: what follows is the server command's business.
  CHECK_THAT(error_of(parse({"--tables", "npx", "--", "s"})),
             Catch::Contains("unexpected argument 'npx'"));
  CHECK_THAT(error_of(parse({"--mode", "shadow", "--", "s"})),
             Catch::Contains("--mode: shadow is not allowed: it must be enforce or observe."));
}

TEST_CASE("command line: --config, CTXGUARD_CONFIG and --check-config") {
  CHECK(ok(parse({"--config", "/etc/ctxguard.yaml", "--", "s"})).sources.file_path ==
        "/etc/ctxguard.yaml");
  CHECK(ok(parse_with({{"CTXGUARD_CONFIG", "/env.yaml"}}, {"--", "s"})).sources.file_path ==
        "/env.yaml");
  CHECK(ok(parse_with({{"CTXGUARD_CONFIG", "/env.yaml"}}, {"--config", "/flag.yaml", "--", "s"}))
            .sources.file_path == "/flag.yaml");
  CHECK_FALSE(ok(parse({"--", "s"})).sources.file_path.has_value());
  // A dry run needs no server command.
  const CommandLine check = ok(parse({"--check-config", "/x.yaml", "--page-size", "9"}));
  CHECK(check.action == CommandLine::Action::kCheckConfig);
  CHECK(check.sources.file_path == "/x.yaml");
  CHECK(check.settings.budget.page_size == 9);
}

TEST_CASE("command line: help lists every setting with its flag, variable, key and default") {
  // Program_options wraps descriptions: compare with runs of white space as one space.
  std::string help;
  for (const char c : help_text()) {
    const bool space = c == ' ' || c == '\n';
    if (space && !help.empty() && help.back() == ' ') continue;
    help += space ? ' ' : c;
  }
  for (const SettingSpec& spec : setting_table()) {
    INFO(spec.key);
    CHECK_THAT(help, Catch::Contains("--" + std::string(spec.flag)));
    CHECK_THAT(help, Catch::Contains(std::string(spec.env)));
    CHECK_THAT(help, Catch::Contains("YAML " + std::string(spec.key)));
    CHECK_THAT(help, Catch::Contains("[default " + format_setting(spec, TunedSettings{})));
  }
  CHECK_THAT(help, Catch::Contains("--check-config") && Catch::Contains("--config"));
}

TEST_CASE("command line: with a file, contradictions wait for it (it may settle them)") {
  CHECK_THAT(error_of(parse({"--page-size", "500", "--", "s"})), Catch::Contains("--page-size"));
  CHECK(ok(parse({"--page-size", "500", "--config", "/x.yaml", "--", "s"})).sources.file_path ==
        "/x.yaml");
}

TEST_CASE("command line: telemetry is off unless asked for") {
  const TelemetrySettings telemetry = ok(parse({"--", "server"})).settings.telemetry;
  CHECK_FALSE(telemetry.file);
  CHECK_FALSE(telemetry.metrics_listen);
  CHECK(telemetry.metrics_linger == std::chrono::milliseconds(0));
  CHECK(telemetry.queue_lines == TelemetrySettings{}.queue_lines);
}

TEST_CASE("command line: telemetry flags and their variables") {
  const TelemetrySettings flags =
      ok(parse({"--telemetry-file", "/var/log/ctxguard.jsonl", "--metrics-listen", "9464",
                "--metrics-linger", "2.5", "--telemetry-queue", "100", "--", "server"}))
          .settings.telemetry;
  CHECK(flags.file == "/var/log/ctxguard.jsonl");
  CHECK(flags.metrics_listen == "9464");
  CHECK(flags.metrics_linger == std::chrono::milliseconds(2500));
  CHECK(flags.queue_lines == 100);

  const std::map<std::string, std::string> variables{
      {"CTXGUARD_TELEMETRY_FILE", "/tmp/calls.jsonl"}, {"CTXGUARD_METRICS_LISTEN", "127.0.0.1:0"}};
  const auto environment = [&](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
  const std::vector<const char*> argv{"ctxguard", "--", "server"};
  const TelemetrySettings from_environment =
      ok(parse_command_line(argv, environment)).settings.telemetry;
  CHECK(from_environment.file == "/tmp/calls.jsonl");
  CHECK(from_environment.metrics_listen == "127.0.0.1:0");
  // A flag beats its variable.
  const std::vector<const char*> with_flag{"ctxguard", "--telemetry-file", "/x.jsonl", "--",
                                           "server"};
  CHECK(ok(parse_command_line(with_flag, environment)).settings.telemetry.file == "/x.jsonl");
}

TEST_CASE("command line: bad telemetry values are usage errors") {
  CHECK(error_of(parse({"--telemetry-queue", "0", "--", "server"})).find("--telemetry-queue") !=
        std::string::npos);
  CHECK(error_of(parse({"--metrics-linger", "-1", "--", "server"})).find("--metrics-linger") !=
        std::string::npos);
  CHECK(error_of(parse({"--telemetry-file=", "--", "server"})).find("--telemetry-file") !=
        std::string::npos);
}
