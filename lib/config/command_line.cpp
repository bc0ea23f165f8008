#include "config/command_line.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include <boost/program_options.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config_file.hpp"
#include "config/profile.hpp"
#include "config/setting_table.hpp"
#include "support/logging.hpp"

namespace ctxguard::config {
namespace {

namespace po = boost::program_options;

constexpr const char* kUsage = "Usage: ctxguard [options] -- <server command> [args...]";

po::options_description option_table() {
  const Settings defaults;
  po::options_description options("Options");
  // clang-format off
  options.add_options()
    ("help,h", "print this help and exit")
    ("version", "print the version and exit")
    ("log-level", po::value<std::string>()->default_value("info"),
     "trace, debug, info, warn, error, critical or off")
    ("log-file", po::value<std::string>()->value_name("PATH"),
     "append logs to PATH instead of stderr (stdout is reserved for the protocol)")
    ("shutdown-timeout", po::value<double>()->default_value(
         std::chrono::duration<double>(defaults.lifecycle.shutdown_timeout).count(), "5"),
     "seconds the server may take to exit after the client closes stdin, before SIGTERM")
    ("kill-timeout", po::value<double>()->default_value(
         std::chrono::duration<double>(defaults.lifecycle.kill_timeout).count(), "2"),
     "seconds between SIGTERM and SIGKILL when stopping the server")
    ("max-message-bytes", po::value<std::size_t>()->default_value(defaults.max_message_bytes),
     "longest JSON-RPC line accepted in either direction; longer lines are refused")
    ("config", po::value<std::string>()->value_name("FILE"),
     "YAML configuration file (default: $CTXGUARD_CONFIG); watched and reloaded when it "
     "changes or on SIGHUP")
    ("check-config", po::value<std::string>()->value_name("FILE"),
     "validate FILE with the variables and flags given, print the effective configuration to "
     "stdout and exit (0: valid, 2: not); starts nothing")
    ("client", po::value<std::string>()->value_name("NAME"),
     "the client name to assume when the client sends none in clientInfo, e.g. "
     "codex-mcp-client: it selects that client's preset and `clients:` rule (also "
     "$CTXGUARD_CLIENT; docs/clients.md lists the names)")
    ("fetch-tool-prefix", po::value<std::string>()->default_value(defaults.process.fetch_tool_prefix),
     "prefix for ctxguard_fetch when the server already has a tool of that name")
    ("project", po::value<std::vector<std::string>>()->value_name("GLOB=FIELDS")->composing(),
     "fields kept of the records of tools matching GLOB when a result must be summarized, e.g. "
     "'list_bookings=id,status,guest.name' (repeatable; first match wins; default: automatic)")
    ("no-projection", po::bool_switch(), "the same as --projection=false (kept for old scripts)")
    ("spill-dir", po::value<std::string>()->value_name("DIR"),
     "also write the full original of every shortened result to a file in DIR (mode 0600, "
     "removed when it leaves the cache) and name it in _ctxguard.file");
  // clang-format on
  return options;
}

// The settings of setting_table(): one flag each, as a string parsed by parse_setting, so a value
// means the same from every source. No default_value: a flag counts only when given.
po::options_description setting_options() {
  const TunedSettings defaults;
  po::options_description options(
      "Settings (also YAML keys and CTXGUARD_* variables; precedence: defaults < file < "
      "variables < flags; see docs/configuration.md)");
  for (const SettingSpec& spec : setting_table()) {
    const std::string described =
        fmt::format("{} [default {}; {}; {}, YAML {}{}]", spec.help, format_setting(spec, defaults),
                    allowed_values(spec), spec.env, spec.key,
                    spec.scope == SettingScope::kStartup ? "; read at start-up" : "");
    auto* value = po::value<std::string>();
    if (spec.kind == SettingKind::kSwitch) {
      value->value_name("BOOL")->implicit_value("true");
    } else if (spec.kind == SettingKind::kChoice) {
      value->value_name("MODE");
    } else if (spec.kind == SettingKind::kBytes) {
      value->value_name("SIZE");
    } else if (spec.kind == SettingKind::kSeconds) {
      value->value_name("SECONDS");
    } else {
      value->value_name("N");
    }
    options.add_options()(std::string(spec.flag).c_str(), value, described.c_str());
  }
  return options;
}

po::options_description telemetry_options() {
  const TelemetrySettings defaults;
  po::options_description options("Telemetry (docs/telemetry.md; all off by default)");
  // clang-format off
  options.add_options()
    ("telemetry-file", po::value<std::string>()->value_name("FILE"),
     "append one JSON line per tool call to FILE: sizes, decisions and timings, never payloads "
     "(also $CTXGUARD_TELEMETRY_FILE; reopened on SIGHUP; read it with `ctxguard stats FILE`)")
    ("telemetry-queue", po::value<std::size_t>()->default_value(defaults.queue_lines),
     "records waiting for the disk before new ones are dropped (and counted)")
    ("metrics-listen", po::value<std::string>()->value_name("[ADDR:]PORT"),
     "serve /metrics (Prometheus text format) and /health (JSON) over HTTP on ADDR:PORT; "
     "ADDR is 127.0.0.1 unless given (also $CTXGUARD_METRICS_LISTEN)")
    ("sample-answers", po::value<std::string>()->value_name("FILE"),
     "append a random share of the answers ctxguard sends, whole, to FILE (mode 0600: it holds "
     "payloads) as JSON lines that scripts/estimator-accuracy.mjs reads (also "
     "$CTXGUARD_SAMPLE_ANSWERS)")
    ("sample-rate", po::value<double>()->default_value(1.0)->value_name("PERCENT"),
     "the share of answers --sample-answers writes, in percent (more than 0, at most 100)")
    ("metrics-linger", po::value<double>()->default_value(0),
     "seconds /metrics and /health stay up after the server exits (the client's stream is "
     "closed at once)");
  // clang-format on
  return options;
}

po::options_description all_options() {
  po::options_description options;
  options.add(option_table()).add(telemetry_options()).add(setting_options());
  return options;
}

// The value of `flag`, else of the variable `variable` (a variable set to "" counts as unset).
std::optional<std::string> flag_or_variable(const po::variables_map& vm,
                                            const Environment& environment, const char* flag,
                                            const char* variable) {
  if (vm.count(flag)) return vm[flag].as<std::string>();
  if (const char* value = environment(variable); value != nullptr && *value != '\0') {
    return std::string(value);
  }
  return std::nullopt;
}

Checked<> read_telemetry(const po::variables_map& vm, const Environment& environment,
                         TelemetrySettings& telemetry) {
  telemetry.file = flag_or_variable(vm, environment, "telemetry-file", "CTXGUARD_TELEMETRY_FILE");
  if (telemetry.file && telemetry.file->empty()) return Problem{"--telemetry-file is empty"};
  telemetry.metrics_listen =
      flag_or_variable(vm, environment, "metrics-listen", "CTXGUARD_METRICS_LISTEN");
  telemetry.sample_file =
      flag_or_variable(vm, environment, "sample-answers", "CTXGUARD_SAMPLE_ANSWERS");
  if (telemetry.sample_file && telemetry.sample_file->empty()) {
    return Problem{"--sample-answers is empty"};
  }
  telemetry.sample_percent = vm["sample-rate"].as<double>();
  if (!(telemetry.sample_percent > 0 && telemetry.sample_percent <= 100)) {
    return Problem{"--sample-rate must be more than 0 and at most 100 (percent)"};
  }
  telemetry.queue_lines = vm["telemetry-queue"].as<std::size_t>();
  if (telemetry.queue_lines < 1 || telemetry.queue_lines > 1'000'000) {
    return Problem{"--telemetry-queue must be from 1 to 1000000"};
  }
  return {};
}

Checked<std::chrono::milliseconds> seconds_option(const po::variables_map& vm, const char* name) {
  const double seconds = vm[name].as<double>();
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 86400) {
    return Problem{std::string("--") + name + " must be between 0 and 86400 seconds"};
  }
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

// "list_*=id,status,guest.name" -> a rule; nullopt when malformed.
std::optional<ProjectionRule> parse_projection(std::string_view text) {
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) return std::nullopt;
  ProjectionRule rule;
  rule.tool_glob = std::string(text.substr(0, equals));
  std::string_view fields = text.substr(equals + 1);
  while (!fields.empty()) {
    const std::size_t comma = std::min(fields.find(','), fields.size());
    std::string_view field = fields.substr(0, comma);
    while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
    while (!field.empty() && field.back() == ' ') field.remove_suffix(1);
    if (!is_field_path(field)) return std::nullopt;
    rule.fields.emplace_back(field);
    fields.remove_prefix(std::min(comma + 1, fields.size()));
  }
  if (rule.fields.empty()) return std::nullopt;
  return rule;
}

// What only flags set: the fetch tool's prefix, --project rules, the spill directory.
Checked<> read_flag_only(const po::variables_map& vm, TunedSettings& tuned) {
  std::string& prefix = tuned.process.fetch_tool_prefix;
  prefix = vm["fetch-tool-prefix"].as<std::string>();
  const bool prefix_ok = std::all_of(prefix.begin(), prefix.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (prefix.empty() || prefix.size() > 32 || !prefix_ok) {
    return Problem{"--fetch-tool-prefix must be 1-32 characters of A-Z a-z 0-9 _ - ."};
  }
  if (vm.count("project")) {
    for (const std::string& text : vm["project"].as<std::vector<std::string>>()) {
      auto rule = parse_projection(text);
      if (!rule) {
        return Problem{"--project '" + text +
                       "' must be GLOB=FIELD[,FIELD...], e.g. 'list_*=id,status,guest.name'"};
      }
      tuned.budget.summary.projections.push_back(std::move(*rule));
    }
  }
  if (vm.count("spill-dir")) tuned.budget.summary.spill_dir = vm["spill-dir"].as<std::string>();
  return {};
}

// The settings the variables and flags give, each checked now so a typo stops ctxguard before
// it starts the server; bad ones go to sources.problems (reported alone without a file, with the
// file's problems otherwise).
Checked<> read_settings(const po::variables_map& vm, const Environment& environment,
                        ConfigSources& sources) {
  const auto read = [&sources](const SettingSpec& spec, std::string_view text,
                               std::string_view where, std::vector<SettingValue>& out) {
    auto value = read_setting_value(spec, text, where);
    if (!value) {
      sources.problems.push_back(std::move(value.error().message));
    } else {
      out.push_back(*std::move(value));
    }
  };
  for (const SettingSpec& spec : setting_table()) {
    const std::string name(spec.env);
    if (const char* value = environment(name.c_str()); value != nullptr && *value != '\0') {
      read(spec, value, spec.env, sources.environment);
    }
  }
  for (const SettingSpec& spec : setting_table()) {
    const std::string flag(spec.flag);
    if (vm.count(flag) != 0) {
      read(spec, vm[flag].as<std::string>(), "--" + flag, sources.command_line);
    }
  }
  if (vm["no-projection"].as<bool>()) {
    read(*find_setting("projection"), "false", "--no-projection", sources.command_line);
  }
  if (vm.count("config")) {
    sources.file_path = vm["config"].as<std::string>();
  } else if (const char* path = environment("CTXGUARD_CONFIG"); path != nullptr && *path != '\0') {
    sources.file_path = path;
  }
  return read_flag_only(vm, sources.base);
}

// The first word that is neither an option nor an option's value: a server command given without
// `--` (`ctxguard npx -y server`). Found before parsing so the user hears about the missing `--`
// rather than about the server's own flags.
const std::string* stray_word(const std::vector<std::string>& args,
                              const po::options_description& table) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind('-', 0) != 0) return &arg;
    if (arg.rfind("--", 0) != 0 || arg.find('=') != std::string::npos) continue;
    const auto* option = table.find_nothrow(arg.substr(2), false);
    // Skip its value; a switch's value is optional and must be attached (--tables=false).
    if (option != nullptr && option->semantic()->min_tokens() > 0) ++i;
  }
  return nullptr;
}

// The process's own options: logging, the lifecycle timeouts, the longest message, the client
// assumed for one that names none.
Checked<> read_process_options(const po::variables_map& vm, const Environment& environment,
                               Settings& settings) {
  const std::string& level = vm["log-level"].as<std::string>();
  if (auto parsed = logging::parse_level(level)) {
    settings.log.level = *parsed;
  } else {
    return Problem{"--log-level '" + level +
                   "' is not one of trace, debug, info, warn, error, critical, off"};
  }
  if (vm.count("log-file")) settings.log.file = vm["log-file"].as<std::string>();

  for (auto [name, target] : {std::pair{"shutdown-timeout", &settings.lifecycle.shutdown_timeout},
                              std::pair{"kill-timeout", &settings.lifecycle.kill_timeout},
                              std::pair{"metrics-linger", &settings.telemetry.metrics_linger}}) {
    auto value = seconds_option(vm, name);
    if (!value) return value.error();
    *target = *value;
  }
  settings.max_message_bytes = vm["max-message-bytes"].as<std::size_t>();
  settings.assumed_client =
      flag_or_variable(vm, environment, "client", "CTXGUARD_CLIENT").value_or(std::string());
  if (settings.assumed_client.size() > 256) {
    return Problem{"--client is longer than 256 characters"};
  }
  if (settings.max_message_bytes < 1024) {
    return Problem{"--max-message-bytes must be at least 1024"};
  }
  return {};
}

}  // namespace

std::string help_text() {
  std::ostringstream out;
  out << "ctxguard keeps MCP tool results within a model's context budget.\n\n"
      << kUsage << "\n\n"
      << option_table() << "\n"
      << telemetry_options() << "\n"
      << setting_options() << "\n"
      << "Example (claude_desktop_config.json \"command\"/\"args\"):\n"
      << "  ctxguard -- npx -y @modelcontextprotocol/server-filesystem /path/to/dir\n\n"
      << "Put ctxguard in front of a client's servers: ctxguard wrap --client NAME (see ctxguard "
         "wrap --help; ctxguard unwrap undoes it)\n"
      << "Reports from telemetry files: ctxguard stats [options] FILE... (see ctxguard stats "
         "--help)\n";
  return out.str();
}

Checked<CommandLine> parse_command_line(std::span<const char* const> argv,
                                        const Environment& environment) {
  const auto args = argv.empty() ? argv : argv.subspan(1);
  const auto separator = std::find_if(
      args.begin(), args.end(), [](const char* arg) { return std::string_view(arg) == "--"; });
  const std::vector<std::string> ours(args.begin(), separator);

  const po::options_description table = all_options();
  if (const std::string* stray = stray_word(ours, table)) {
    return Problem{"unexpected argument '" + *stray + "': put the server command after '--'. " +
                   kUsage};
  }
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(ours).options(table).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    return Problem{std::string(error.what()) + ". " + kUsage};
  }

  CommandLine command_line;
  if (vm.count("help")) {
    command_line.action = CommandLine::Action::kHelp;
    return command_line;
  }
  if (vm.count("version")) {
    command_line.action = CommandLine::Action::kVersion;
    return command_line;
  }

  Settings& settings = command_line.settings;
  if (auto read = read_process_options(vm, environment, settings); !read) return read.error();
  if (auto read = read_telemetry(vm, environment, settings.telemetry); !read) return read.error();
  if (auto read = read_settings(vm, environment, command_line.sources); !read) return read.error();
  if (vm.count("check-config")) {
    command_line.sources.file_path = vm["check-config"].as<std::string>();
    command_line.action = CommandLine::Action::kCheckConfig;
  }
  // Without a file, flags and variables that contradict each other are a usage error now. With
  // one, the file may settle it (CTXGUARD_PAGE_SIZE=500 with maxPageSize: 1000 in it):
  // load_profile checks them all together.
  auto profile = Profile::build(command_line.sources);
  if (!profile) {
    if (!command_line.sources.file_path) {
      return Problem{fmt::format("{}", fmt::join(profile.error().messages, "\n  "))};
    }
  } else {
    (*profile)->copy_globals_to(settings);
  }
  if (command_line.action == CommandLine::Action::kCheckConfig) return command_line;
  if (separator == args.end() || separator + 1 == args.end()) {
    return Problem{"missing server command. " + std::string(kUsage)};
  }
  settings.server_command.assign(separator + 1, args.end());
  return command_line;
}

}  // namespace ctxguard::config
