#include "config/command_line.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <boost/program_options.hpp>

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
     "longest JSON-RPC line accepted in either direction; longer lines are refused");
  // clang-format on
  return options;
}

std::variant<std::chrono::milliseconds, UsageError> seconds_option(const po::variables_map& vm,
                                                                   const char* name) {
  const double seconds = vm[name].as<double>();
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 86400) {
    return UsageError{std::string("--") + name + " must be between 0 and 86400 seconds"};
  }
  return std::chrono::milliseconds(std::llround(seconds * 1000));
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
    if (option != nullptr && option->semantic()->max_tokens() > 0) ++i;  // skip its value
  }
  return nullptr;
}

}  // namespace

std::string help_text() {
  std::ostringstream out;
  out << "ctxguard keeps MCP tool results within a model's context budget.\n\n"
      << kUsage << "\n\n"
      << option_table() << "\n"
      << "Example (claude_desktop_config.json \"command\"/\"args\"):\n"
      << "  ctxguard -- npx -y @modelcontextprotocol/server-filesystem /path/to/dir\n";
  return out.str();
}

std::variant<CommandLine, UsageError> parse_command_line(std::span<const char* const> argv) {
  const auto args = argv.empty() ? argv : argv.subspan(1);
  const auto separator = std::find_if(
      args.begin(), args.end(), [](const char* arg) { return std::string_view(arg) == "--"; });
  const std::vector<std::string> ours(args.begin(), separator);

  const po::options_description table = option_table();
  if (const std::string* stray = stray_word(ours, table)) {
    return UsageError{"unexpected argument '" + *stray + "': put the server command after '--'. " +
                      kUsage};
  }
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(ours).options(table).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    return UsageError{std::string(error.what()) + ". " + kUsage};
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
  const std::string& level = vm["log-level"].as<std::string>();
  if (auto parsed = logging::parse_level(level)) {
    settings.log.level = *parsed;
  } else {
    return UsageError{"--log-level '" + level +
                      "' is not one of trace, debug, info, warn, error, critical, off"};
  }
  if (vm.count("log-file")) settings.log.file = vm["log-file"].as<std::string>();

  for (auto [name, target] : {std::pair{"shutdown-timeout", &settings.lifecycle.shutdown_timeout},
                              std::pair{"kill-timeout", &settings.lifecycle.kill_timeout}}) {
    auto value = seconds_option(vm, name);
    if (auto* error = std::get_if<UsageError>(&value)) return std::move(*error);
    *target = std::get<std::chrono::milliseconds>(value);
  }
  settings.max_message_bytes = vm["max-message-bytes"].as<std::size_t>();
  if (settings.max_message_bytes < 1024) {
    return UsageError{"--max-message-bytes must be at least 1024"};
  }

  if (separator == args.end() || separator + 1 == args.end()) {
    return UsageError{"missing server command. " + std::string(kUsage)};
  }
  settings.server_command.assign(separator + 1, args.end());
  return command_line;
}

}  // namespace ctxguard::config
