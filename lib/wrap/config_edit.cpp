#include "wrap/config_edit.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>
#include <boost/json.hpp>

#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::wrap {

namespace json = boost::json;

namespace {

// One server as the file holds it, read the same way from JSON and TOML.
struct Entry {
  std::string name;
  std::optional<Launch> launch;  // a stdio server this understands
  std::string url;               // a remote one
};

// What to do with each entry, in the file's order, and the outcome to report.
struct Plan {
  std::vector<std::pair<std::size_t, Launch>> writes;  // entry index, new launch
  std::vector<ServerOutcome> outcomes;
};

std::variant<Plan, std::string> plan_edit(const std::vector<Entry>& entries,
                                          const EditRequest& request) {
  for (const std::string& wanted : request.servers) {
    const bool present = std::any_of(entries.begin(), entries.end(),
                                     [&](const Entry& entry) { return entry.name == wanted; });
    if (!present) {
      std::string names;
      for (const Entry& entry : entries) names += (names.empty() ? "" : ", ") + entry.name;
      return fmt::format("there is no server \"{}\" (the file has: {})", wanted,
                         names.empty() ? "none" : names);
    }
  }
  Plan plan;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = entries[i];
    if (!request.servers.empty() && std::find(request.servers.begin(), request.servers.end(),
                                              entry.name) == request.servers.end()) {
      continue;
    }
    ServerOutcome outcome{.name = entry.name, .action = Action::kNoCommand, .url = {}};
    if (!entry.url.empty()) {
      outcome.action = Action::kRemote;
      outcome.url = entry.url;
    } else if (entry.launch) {
      Decision decision = request.mode == Mode::kWrap ? decide_wrap(*entry.launch, request.wrap)
                                                      : decide_unwrap(*entry.launch);
      outcome.action = decision.action;
      if (decision.launch) plan.writes.emplace_back(i, std::move(*decision.launch));
    }
    plan.outcomes.push_back(std::move(outcome));
  }
  return plan;
}

// Whether a launch written back keeps an `args` member: always, but for an unwrapped server left
// with no arguments whose original (the backup's) had none either.
bool keeps_args(const Launch& launch, Mode mode, bool original_had_args) {
  return !launch.args.empty() || mode == Mode::kWrap || original_had_args;
}

// ---- JSON ----------------------------------------------------------------------------------

// "line L, column C" of byte `offset` in `text`.
std::string position_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const std::size_t line = static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_start = before.rfind('\n');
  const std::size_t column =
      line_start == std::string_view::npos ? offset + 1 : offset - line_start;
  return fmt::format("line {}, column {}", line + 1, column);
}

std::variant<json::value, std::string> parse_json_file(std::string_view text) {
  json::parse_options options;
  options.allow_comments = true;  // VS Code's mcp.json is JSON with comments
  options.allow_trailing_commas = true;
  options.max_depth = 1024;
  json::parser parser({}, options);
  json::error_code error;
  const std::size_t read = parser.write_some(text.data(), text.size(), error);
  if (!error && read < text.size()) error = json::error::extra_data;
  if (error)
    return fmt::format("not valid JSON at {}: {}", position_of(text, read), error.message());
  return parser.release();
}

// Whether `text` (valid as JSON with comments) is plain JSON: when it is not, writing it back
// loses its comments.
bool plain_json(std::string_view text) {
  json::error_code error;
  json::parse_options options;
  options.max_depth = 1024;
  json::parse(text, error, {}, options);
  return !error;
}

// The indentation the file uses (the spaces before its first member), 2 when it has none.
int indentation_of(std::string_view text) {
  const std::size_t line = text.find('\n');
  if (line == std::string_view::npos) return 2;
  const std::size_t first = text.find_first_not_of(' ', line + 1);
  const std::size_t spaces = first == std::string_view::npos ? 0 : first - line - 1;
  return spaces >= 1 && spaces <= 8 ? static_cast<int>(spaces) : 2;
}

std::optional<Launch> json_launch(const json::object& server) {
  const json::value* command = server.if_contains("command");
  if (command == nullptr || !command->is_string()) return std::nullopt;
  Launch launch{.command = std::string(command->get_string()), .args = {}};
  if (const json::value* args = server.if_contains("args")) {
    const json::array* list = args->if_array();
    if (list == nullptr) return std::nullopt;
    for (const json::value& arg : *list) {
      if (!arg.is_string()) return std::nullopt;
      launch.args.emplace_back(arg.get_string());
    }
  }
  return launch;
}

std::string json_url(const json::object& server) {
  const json::value* url = server.if_contains("url");
  if (url == nullptr) url = server.if_contains("serverUrl");
  return url != nullptr && url->is_string() ? std::string(url->get_string()) : std::string();
}

std::vector<Entry> json_entries(const json::object* servers) {
  std::vector<Entry> entries;
  if (servers == nullptr) return entries;
  for (const json::key_value_pair& member : *servers) {
    Entry entry{.name = std::string(member.key()), .launch = std::nullopt, .url = {}};
    if (const json::object* server = member.value().if_object()) {
      entry.url = json_url(*server);
      if (entry.url.empty()) entry.launch = json_launch(*server);
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

// Writes the plan's launches into `servers`; `original_servers`: the backup's (null: none).
void write_json_launches(json::object& servers, const std::vector<Entry>& entries, const Plan& plan,
                         Mode mode, const json::value* original_servers) {
  const auto original_had_args = [&](std::string_view name) {
    const json::object* held =
        original_servers != nullptr ? original_servers->if_object() : nullptr;
    const json::value* server = held != nullptr ? held->if_contains(name) : nullptr;
    return server != nullptr && server->is_object() && server->get_object().contains("args");
  };
  for (const auto& [index, launch] : plan.writes) {
    json::object& server =
        (servers.begin() + static_cast<std::ptrdiff_t>(index))->value().get_object();
    server["command"] = launch.command;
    if (!keeps_args(launch, mode, original_had_args(entries[index].name))) {
      erase_member(server, "args");
      continue;
    }
    json::array args;
    for (const std::string& arg : launch.args) args.emplace_back(arg);
    server["args"] = std::move(args);
  }
}

std::variant<EditResult, std::string> edit_json(std::string_view text, const ConfigLayout& layout,
                                                const EditRequest& request,
                                                std::optional<std::string_view> backup) {
  auto parsed = parse_json_file(text);
  if (auto* problem = std::get_if<std::string>(&parsed)) return std::move(*problem);
  json::value& root_value = std::get<json::value>(parsed);
  if (!root_value.is_object()) return std::string("the file is not a JSON object");
  json::object& root = root_value.get_object();
  EditResult result{.text = std::string(text),
                    .servers_key = layout.servers_key,
                    .servers = {},
                    .changed = false};
  if (result.servers_key.empty()) {
    result.servers_key =
        root.contains("servers") && !root.contains("mcpServers") ? "servers" : "mcpServers";
  }
  json::value* holder = root.if_contains(result.servers_key);
  if (holder != nullptr && !holder->is_object()) {
    return fmt::format("\"{}\" is not an object of servers", result.servers_key);
  }
  json::object* servers = holder != nullptr ? &holder->get_object() : nullptr;
  const std::vector<Entry> entries = json_entries(servers);
  auto planned = plan_edit(entries, request);
  if (auto* problem = std::get_if<std::string>(&planned)) return std::move(*problem);
  Plan& plan = std::get<Plan>(planned);
  result.servers = std::move(plan.outcomes);
  if (plan.writes.empty()) return result;

  std::optional<json::value> original;
  if (backup) {
    auto parsed_backup = parse_json_file(*backup);
    if (auto* value = std::get_if<json::value>(&parsed_backup)) original = std::move(*value);
  }
  write_json_launches(*servers, entries, plan, request.mode,
                      original && original->is_object()
                          ? original->get_object().if_contains(result.servers_key)
                          : nullptr);
  result.changed = true;
  if (request.mode == Mode::kUnwrap && original && *original == root_value) {
    result.text = std::string(*backup);
  } else {
    result.text = to_pretty_json(root_value, indentation_of(text));
    result.comments_lost = !plain_json(text);
  }
  return result;
}

// ---- TOML ----------------------------------------------------------------------------------

std::optional<Launch> toml_launch(const toml::table& server) {
  const auto command = server["command"].value<std::string>();
  if (!command) return std::nullopt;
  Launch launch{.command = *command, .args = {}};
  if (const toml::node* args = server.get("args")) {
    const toml::array* list = args->as_array();
    if (list == nullptr) return std::nullopt;
    for (const toml::node& arg : *list) {
      const auto text = arg.value<std::string>();
      if (!text) return std::nullopt;
      launch.args.push_back(*text);
    }
  }
  return launch;
}

// Whether `text` has a line that is a TOML comment (toml++ does not keep comments).
bool has_comment_line(std::string_view text) {
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::size_t first = text.find_first_not_of(" \t", begin);
    if (first < end && text[first] == '#') return true;
    begin = end + 1;
  }
  return false;
}

std::variant<toml::table, std::string> parse_toml_file(std::string_view text) {
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& error) {
    return fmt::format("not valid TOML at line {}, column {}: {}", error.source().begin.line,
                       error.source().begin.column, error.description());
  }
}

// The servers of `servers` (null: none), and the table of each (null when it is not one).
std::vector<Entry> toml_entries(toml::table* servers, std::vector<toml::table*>& tables) {
  std::vector<Entry> entries;
  if (servers == nullptr) return entries;
  for (auto&& [key, node] : *servers) {
    Entry entry{.name = std::string(key.str()), .launch = std::nullopt, .url = {}};
    toml::table* server = node.as_table();
    if (server != nullptr) {
      entry.url = (*server)["url"].value_or(std::string());
      if (entry.url.empty()) entry.launch = toml_launch(*server);
    }
    entries.push_back(std::move(entry));
    tables.push_back(server);
  }
  return entries;
}

// Writes the plan's launches into their tables; `original_servers`: the backup's (null: none).
void write_toml_launches(const std::vector<toml::table*>& tables, const std::vector<Entry>& entries,
                         const Plan& plan, Mode mode, const toml::table* original_servers) {
  for (const auto& [index, launch] : plan.writes) {
    toml::table& server = *tables[index];
    server.insert_or_assign("command", launch.command);
    const bool original_had_args =
        original_servers != nullptr &&
        (*original_servers)[entries[index].name]["args"].node() != nullptr;
    if (!keeps_args(launch, mode, original_had_args)) {
      server.erase("args");
      continue;
    }
    toml::array args;
    for (const std::string& arg : launch.args) args.push_back(arg);
    server.insert_or_assign("args", std::move(args));
  }
}

std::variant<EditResult, std::string> edit_toml(std::string_view text, const ConfigLayout& layout,
                                                const EditRequest& request,
                                                std::optional<std::string_view> backup) {
  auto parsed = parse_toml_file(text);
  if (auto* problem = std::get_if<std::string>(&parsed)) return std::move(*problem);
  toml::table& root = std::get<toml::table>(parsed);
  EditResult result{.text = std::string(text),
                    .servers_key = layout.servers_key,
                    .servers = {},
                    .changed = false};
  toml::node* holder = root.get(layout.servers_key);
  if (holder != nullptr && !holder->is_table()) {
    return fmt::format("\"{}\" is not a table of servers", layout.servers_key);
  }
  toml::table* servers = holder != nullptr ? holder->as_table() : nullptr;
  std::vector<toml::table*> tables;
  const std::vector<Entry> entries = toml_entries(servers, tables);
  auto planned = plan_edit(entries, request);
  if (auto* problem = std::get_if<std::string>(&planned)) return std::move(*problem);
  Plan& plan = std::get<Plan>(planned);
  result.servers = std::move(plan.outcomes);
  if (plan.writes.empty()) return result;

  std::optional<toml::table> original;
  if (backup) {
    auto parsed_backup = parse_toml_file(*backup);
    if (auto* table = std::get_if<toml::table>(&parsed_backup)) original = std::move(*table);
  }
  write_toml_launches(tables, entries, plan, request.mode,
                      original ? (*original)[layout.servers_key].as_table() : nullptr);
  result.changed = true;
  if (request.mode == Mode::kUnwrap && original && *original == root) {
    result.text = std::string(*backup);
  } else {
    std::ostringstream out;
    out << root << '\n';
    result.text = out.str();
    result.comments_lost = has_comment_line(text);
  }
  return result;
}

}  // namespace

std::variant<EditResult, std::string> edit_config(std::string_view text, const ConfigLayout& layout,
                                                  const EditRequest& request,
                                                  std::optional<std::string_view> backup) {
  return layout.format == ConfigFormat::kJson ? edit_json(text, layout, request, backup)
                                              : edit_toml(text, layout, request, backup);
}

}  // namespace ctxguard::wrap
