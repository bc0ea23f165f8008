#include "config/command_line.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
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
     "longest JSON-RPC line accepted in either direction; longer lines are refused")
    ("token-budget", po::value<std::size_t>()->default_value(defaults.budget.token_budget),
     "estimated tokens above which a tool result is compacted and paginated")
    ("hard-cap", po::value<std::size_t>()->default_value(defaults.budget.hard_cap),
     "estimated tokens no tool result may exceed; larger ones are cut, with a cursor to the rest "
     "(3x --token-budget when only that is raised past 12000)")
    ("page-size", po::value<std::size_t>()->default_value(defaults.budget.page_size),
     "items kept when a long array is cut (arrays of 10 items or fewer are never cut)")
    ("max-page-size", po::value<std::size_t>()->default_value(defaults.budget.max_page_size),
     "largest `limit` ctxguard_fetch accepts")
    ("cursor-ttl", po::value<double>()->default_value(
         static_cast<double>(defaults.budget.cursor_ttl.count()), "600"),
     "seconds a cursor stays valid (the cache keeps a result this long after its last use)")
    ("cache-size", po::value<std::string>()->default_value("256M"),
     "memory for original results, in bytes or with a K, M or G suffix (binary units)")
    ("fetch-tool-prefix", po::value<std::string>()->default_value(defaults.budget.fetch_tool_prefix),
     "prefix for ctxguard_fetch when the server already has a tool of that name")
    ("chunk-size", po::value<std::size_t>()->default_value(defaults.budget.summary.chunk_tokens),
     "estimated tokens above which plain text is served in chunks cut at semantic boundaries")
    ("max-string", po::value<std::size_t>()->default_value(
         defaults.budget.summary.max_string_chars),
     "characters kept of a long string when a result must be summarized (0: never cut)")
    ("max-depth", po::value<std::size_t>()->default_value(defaults.budget.summary.max_depth),
     "nesting shown when a result must be summarized; deeper values become placeholders "
     "(0: no limit)")
    ("project", po::value<std::vector<std::string>>()->value_name("GLOB=FIELDS")->composing(),
     "fields kept of the records of tools matching GLOB when a result must be summarized, e.g. "
     "'list_bookings=id,status,guest.name' (repeatable; first match wins; default: automatic)")
    ("no-projection", po::bool_switch(),
     "never drop fields of records to fit (show fewer records instead)")
    ("tables", po::bool_switch(),
     "write uniform arrays of flat objects as {\"columns\",\"rows\"} (lossless, fewer tokens)")
    ("spill-dir", po::value<std::string>()->value_name("DIR"),
     "also write the full original of every shortened result to a file in DIR (mode 0600, "
     "removed when it leaves the cache) and name it in _ctxguard.file");
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

// "256M", "1G", "65536": bytes with an optional binary suffix.
std::optional<std::size_t> parse_size(std::string_view text) {
  std::size_t multiplier = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k':
        multiplier = std::size_t{1} << 10;
        break;
      case 'M':
      case 'm':
        multiplier = std::size_t{1} << 20;
        break;
      case 'G':
      case 'g':
        multiplier = std::size_t{1} << 30;
        break;
      default:
        break;
    }
    if (multiplier != 1) text.remove_suffix(1);
  }
  std::size_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  if (number > std::numeric_limits<std::size_t>::max() / multiplier) return std::nullopt;
  return number * multiplier;
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
    if (field.empty() || field.front() == '.' || field.back() == '.' ||
        field.find("..") != std::string_view::npos) {
      return std::nullopt;
    }
    rule.fields.emplace_back(field);
    fields.remove_prefix(std::min(comma + 1, fields.size()));
  }
  if (rule.fields.empty()) return std::nullopt;
  return rule;
}

std::optional<UsageError> read_summary(const po::variables_map& vm, BudgetSettings& budget) {
  SummarySettings& summary = budget.summary;
  summary.chunk_tokens = vm["chunk-size"].as<std::size_t>();
  summary.max_string_chars = vm["max-string"].as<std::size_t>();
  summary.max_depth = vm["max-depth"].as<std::size_t>();
  summary.tables = vm["tables"].as<bool>();
  summary.project = !vm["no-projection"].as<bool>();
  // A budget lowered below the default chunk size, with no chunk size given, halves the budget:
  // a chunk and its metadata must fit in one answer.
  if (vm["chunk-size"].defaulted() && summary.chunk_tokens > budget.token_budget / 2) {
    summary.chunk_tokens = budget.token_budget / 2;
  }
  if (summary.chunk_tokens < 50 || summary.chunk_tokens > budget.token_budget) {
    return UsageError{"--chunk-size must be between 50 and --token-budget tokens"};
  }
  if (summary.max_string_chars != 0 && summary.max_string_chars < 20) {
    return UsageError{"--max-string must be 0 (never cut) or at least 20 characters"};
  }
  if (summary.max_depth > 64) return UsageError{"--max-depth must be between 0 and 64"};
  if (vm.count("project")) {
    for (const std::string& text : vm["project"].as<std::vector<std::string>>()) {
      auto rule = parse_projection(text);
      if (!rule) {
        return UsageError{"--project '" + text +
                          "' must be GLOB=FIELD[,FIELD...], e.g. 'list_*=id,status,guest.name'"};
      }
      summary.projections.push_back(std::move(*rule));
    }
  }
  if (vm.count("spill-dir")) summary.spill_dir = vm["spill-dir"].as<std::string>();
  return std::nullopt;
}

std::optional<UsageError> read_budget(const po::variables_map& vm, BudgetSettings& budget) {
  budget.token_budget = vm["token-budget"].as<std::size_t>();
  budget.hard_cap = vm["hard-cap"].as<std::size_t>();
  budget.page_size = vm["page-size"].as<std::size_t>();
  budget.max_page_size = vm["max-page-size"].as<std::size_t>();
  budget.fetch_tool_prefix = vm["fetch-tool-prefix"].as<std::string>();
  if (budget.token_budget < 100 || budget.token_budget > 10'000'000) {
    return UsageError{"--token-budget must be between 100 and 10000000 tokens"};
  }
  // A budget raised past the default cap, with no cap given, keeps the default 1:3 ratio
  // rather than failing: the user asked for more room, not for an error.
  if (vm["hard-cap"].defaulted() && budget.hard_cap < budget.token_budget) {
    budget.hard_cap = std::min<std::size_t>(budget.token_budget * 3, 10'000'000);
  }
  if (budget.hard_cap < budget.token_budget || budget.hard_cap > 10'000'000) {
    return UsageError{"--hard-cap must be at least --token-budget and at most 10000000"};
  }
  if (budget.max_page_size < 1 || budget.max_page_size > 100'000) {
    return UsageError{"--max-page-size must be between 1 and 100000"};
  }
  if (budget.page_size < 1 || budget.page_size > budget.max_page_size) {
    return UsageError{"--page-size must be between 1 and --max-page-size"};
  }
  const double ttl = vm["cursor-ttl"].as<double>();
  if (!std::isfinite(ttl) || ttl < 1 || ttl > 7 * 86400) {
    return UsageError{"--cursor-ttl must be between 1 and 604800 seconds"};
  }
  budget.cursor_ttl = std::chrono::seconds(std::llround(ttl));
  const std::string& cache = vm["cache-size"].as<std::string>();
  const auto cache_bytes = parse_size(cache);
  if (!cache_bytes || *cache_bytes < (std::size_t{1} << 20)) {
    return UsageError{"--cache-size '" + cache + "' must be a size of at least 1M (e.g. 256M)"};
  }
  budget.cache_bytes = *cache_bytes;
  const bool prefix_ok =
      std::all_of(budget.fetch_tool_prefix.begin(), budget.fetch_tool_prefix.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
      });
  if (budget.fetch_tool_prefix.empty() || budget.fetch_tool_prefix.size() > 32 || !prefix_ok) {
    return UsageError{"--fetch-tool-prefix must be 1-32 characters of A-Z a-z 0-9 _ - ."};
  }
  return read_summary(vm, budget);
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

  if (auto error = read_budget(vm, settings.budget)) return std::move(*error);

  if (separator == args.end() || separator + 1 == args.end()) {
    return UsageError{"missing server command. " + std::string(kUsage)};
  }
  settings.server_command.assign(separator + 1, args.end());
  return command_line;
}

}  // namespace ctxguard::config
