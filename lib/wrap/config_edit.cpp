#include "wrap/config_edit.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>
#include <toml++/toml.h>
#include <boost/json.hpp>

#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"
#include "support/text_scan.hpp"
#include "wrap/jsonc_spans.hpp"
#include "wrap/text_edit.hpp"

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

// For each of the plan's writes, whether it keeps `args`; `original_had_args(name)` asks the
// backup.
template <typename HadArgs>
std::vector<bool> args_kept(const Plan& plan, const std::vector<Entry>& entries, Mode mode,
                            const HadArgs& original_had_args) {
  std::vector<bool> kept;
  for (const auto& [index, launch] : plan.writes) {
    kept.push_back(keeps_args(launch, mode, original_had_args(entries[index].name)));
  }
  return kept;
}

// `key_text` (a key and what follows it up to its value) naming `args` instead of `command`.
std::string args_key_text(std::string_view key_text, std::string_view fallback) {
  const std::size_t at = key_text.rfind("command");
  if (at == std::string_view::npos) return std::string(fallback);
  std::string out(key_text);
  out.replace(at, std::string_view("command").size(), "args");
  return out;
}

// Whether two texts differ in blanks only. An unwrapped file that means what its backup meant
// and differs from it in blanks only (an empty array's line breaks), or has no comments at all
// (an older ctxguard wrote it without them), gets the backup's text back.
bool same_but_blanks(std::string_view a, std::string_view b) {
  const auto next = [](std::string_view text, std::size_t at) {
    while (at < text.size() && text::is_blank_byte(text[at])) ++at;
    return at;
  };
  std::size_t i = next(a, 0);
  std::size_t j = next(b, 0);
  while (i < a.size() && j < b.size() && a[i] == b[j]) {
    i = next(a, i + 1);
    j = next(b, j + 1);
  }
  return i == a.size() && j == b.size();
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

// Writes the plan's launches into `servers`: what the file is to mean.
void write_json_launches(json::object& servers, const Plan& plan, const std::vector<bool>& kept) {
  for (std::size_t w = 0; w < plan.writes.size(); ++w) {
    const auto& [index, launch] = plan.writes[w];
    json::object& server =
        (servers.begin() + static_cast<std::ptrdiff_t>(index))->value().get_object();
    server["command"] = launch.command;
    if (!kept[w]) {
      erase_member(server, "args");
      continue;
    }
    json::array args;
    for (const std::string& arg : launch.args) args.emplace_back(arg);
    server["args"] = std::move(args);
  }
}

// Where the launch of `server` (an object that has a `command`) sits in `text`.
LaunchText json_launch_text(std::string_view text, const JsonSpans& server) {
  const JsonSpans::Member& command = *server.member("command");
  LaunchText at;
  at.comment_mark = '/';
  at.command = command.value.span;
  // An `args` goes after the command: on a line of its own when the command has one.
  const std::size_t line = line_start(text, command.key_span.begin);
  const std::string_view indent = text.substr(line, command.key_span.begin - line);
  // The key as the command's is written, and its colon with the blanks around it (not a comment).
  const std::string_view colon =
      text.substr(command.key_span.end, command.value.span.begin - command.key_span.end);
  const bool plain_colon = colon.find_first_not_of(" \t:") == std::string_view::npos;
  const std::string key = args_key_text(text.substr(command.key_span.begin,
                                                    command.key_span.end - command.key_span.begin),
                                        "\"args\"") +
                          std::string(plain_colon ? colon : ": ");
  at.args_insert_at = command.value.span.end;
  at.args_prefix = text::is_blank(indent)
                       ? "," + std::string(line_break_of(text)) + std::string(indent) + key
                       : ", " + key;
  const JsonSpans::Member* args = server.member("args");
  if (args == nullptr) return at;
  at.args = args->value.span;
  for (const JsonSpans& element : args->value.elements) at.arg_tokens.push_back(element.span);
  const auto self = static_cast<std::size_t>(args - server.members.data());
  if (self > 0) {
    at.args_removal = {server.members[self - 1].value.span.end, args->value.span.end};
  } else {
    at.args_removal = {args->key_span.begin, server.members.size() > 1
                                                 ? server.members[1].key_span.begin
                                                 : args->value.span.end};
  }
  return at;
}

std::string json_string(std::string_view value, std::string_view /*like*/) {
  std::string out;
  write_json_string(out, value);
  return out;
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
  const json::object* original_servers = nullptr;
  if (original && original->is_object()) {
    const json::value* held = original->get_object().if_contains(result.servers_key);
    original_servers = held != nullptr ? held->if_object() : nullptr;
  }
  const std::vector<bool> kept = args_kept(plan, entries, request.mode, [&](std::string_view name) {
    const json::value* server =
        original_servers != nullptr ? original_servers->if_contains(name) : nullptr;
    return server != nullptr && server->is_object() && server->get_object().contains("args");
  });

  // The servers' launches edited where they stand in the text.
  const std::optional<JsonSpans> spans = scan_json_spans(text);
  const JsonSpans::Member* servers_spans = spans ? spans->member(result.servers_key) : nullptr;
  if (servers_spans == nullptr) return std::string("the servers could not be located in the text");
  std::vector<Replacement> edits;
  for (std::size_t w = 0; w < plan.writes.size(); ++w) {
    const auto& [index, launch] = plan.writes[w];
    const JsonSpans::Member* server = servers_spans->value.member(entries[index].name);
    if (server == nullptr || server->value.member("command") == nullptr) {
      return std::string("the servers could not be located in the text");
    }
    const LaunchText at = json_launch_text(text, server->value);
    for (Replacement& edit : launch_edits(text, at, *entries[index].launch, launch, kept[w],
                                          json_string, result.comments_lost)) {
      edits.push_back(std::move(edit));
    }
  }
  write_json_launches(*servers, plan, kept);
  result.changed = true;
  result.text = apply_replacements(text, std::move(edits));
  // What the text now says must be what the edit means; a file it is not is never written.
  const auto reread = parse_json_file(result.text);
  const json::value* edited = std::get_if<json::value>(&reread);
  if (edited == nullptr || *edited != root_value) {
    return std::string("the servers could not be edited in place");
  }
  if (request.mode == Mode::kUnwrap && original && *original == root_value &&
      (plain_json(result.text) || same_but_blanks(result.text, *backup))) {
    result.text = std::string(*backup);
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
    // toml++ quotes what it saw, control characters included: the reason stays one line.
    std::string description;
    for (const char c : error.description()) {
      const auto byte = static_cast<unsigned char>(c);
      description +=
          byte < 0x20 || byte == 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
    }
    return fmt::format("not valid TOML at line {}, column {}: {}", error.source().begin.line,
                       error.source().begin.column, description);
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

// Writes the plan's launches into their tables: what the file is to mean.
void write_toml_launches(const std::vector<toml::table*>& tables, const Plan& plan,
                         const std::vector<bool>& kept) {
  for (std::size_t w = 0; w < plan.writes.size(); ++w) {
    const auto& [index, launch] = plan.writes[w];
    toml::table& server = *tables[index];
    server.insert_or_assign("command", launch.command);
    if (!kept[w]) {
      server.erase("args");
      continue;
    }
    toml::array args;
    for (const std::string& arg : launch.args) args.push_back(arg);
    server.insert_or_assign("args", std::move(args));
  }
}

TextSpan span_of(const LineIndex& lines, const toml::source_region& region) {
  return {lines.offset(region.begin.line, region.begin.column),
          lines.offset(region.end.line, region.end.column)};
}

// A table's entries in the text's order (toml++ keeps them sorted by key).
struct TomlEntry {
  std::string_view key;
  TextSpan key_span;
  TextSpan value_span;
};

std::vector<TomlEntry> entries_in_order(const toml::table& table, const LineIndex& lines) {
  std::vector<TomlEntry> entries;
  for (auto&& [key, node] : table) {
    entries.push_back({key.str(), span_of(lines, key.source()), span_of(lines, node.source())});
  }
  std::sort(entries.begin(), entries.end(), [](const TomlEntry& a, const TomlEntry& b) {
    return a.value_span.begin < b.value_span.begin;
  });
  return entries;
}

// Where the launch of `server` (a table with a string `command`) sits in `text`. In a table of
// lines, `args` is a line of its own after the command's; in an inline table, an entry after it.
LaunchText toml_launch_text(std::string_view text, const LineIndex& lines,
                            const toml::table& server) {
  const std::vector<TomlEntry> entries = entries_in_order(server, lines);
  const auto find = [&](std::string_view key) {
    return std::find_if(entries.begin(), entries.end(),
                        [&](const TomlEntry& entry) { return entry.key == key; });
  };
  const TomlEntry& command = *find("command");
  LaunchText at;
  at.command = command.value_span;
  const std::string_view line_break = line_break_of(text);
  if (server.is_inline()) {
    at.args_insert_at = command.value_span.end;
    at.args_prefix =
        ", " + args_key_text(text.substr(command.key_span.begin,
                                         command.value_span.begin - command.key_span.begin),
                             "args = ");
  } else {
    const std::size_t line = line_start(text, command.value_span.begin);
    const std::string key =
        args_key_text(text.substr(line, command.value_span.begin - line), "args = ");
    const std::size_t end = line_end(text, command.value_span.end);
    if (end < text.size()) {
      at.args_insert_at = end + 1;
      at.args_prefix = key;
      at.args_suffix = line_break;
    } else {
      at.args_insert_at = text.size();
      at.args_prefix = std::string(line_break) + key;
    }
  }
  const auto args = find("args");
  if (args == entries.end()) return at;
  at.args = args->value_span;
  for (const toml::node& element : *server.get("args")->as_array()) {
    at.arg_tokens.push_back(span_of(lines, element.source()));
  }
  if (!server.is_inline()) {
    // Its lines, unless a comment follows it on its last one.
    const std::size_t first = line_start(text, args->value_span.begin);
    const std::size_t last = line_end(text, args->value_span.end);
    const bool whole =
        text::is_blank(text.substr(args->value_span.end, last - args->value_span.end));
    at.args_removal = {first, whole ? std::min(last + 1, text.size()) : args->value_span.end};
    if (whole && last == text.size() && first > 0) {
      // The file's last line, without a line break of its own: the one before it goes.
      at.args_removal.begin = first - line_break.size();
    }
  } else if (args != entries.begin()) {
    at.args_removal = {std::prev(args)->value_span.end, args->value_span.end};
  } else {
    at.args_removal = {args->key_span.begin, std::next(args) != entries.end()
                                                 ? std::next(args)->key_span.begin
                                                 : args->value_span.end};
  }
  return at;
}

// A TOML string: a literal one ('...') when `like` is one and `value` can be, else a basic one.
std::string toml_string(std::string_view value, std::string_view like) {
  const bool literal = like.starts_with('\'') && !like.starts_with("'''") &&
                       std::none_of(value.begin(), value.end(), [](char c) {
                         const auto byte = static_cast<unsigned char>(c);
                         return c == '\'' || (byte < 0x20 && c != '\t') || byte == 0x7f;
                       });
  if (literal) return "'" + std::string(value) + "'";
  std::string out;
  write_json_string(out, value);  // JSON's escapes are TOML's, but for DEL
  for (std::size_t at = out.find('\x7f'); at != std::string::npos; at = out.find('\x7f', at)) {
    out.replace(at, 1, "\\u007F");
  }
  return out;
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
  const toml::table* original_servers =
      original ? (*original)[layout.servers_key].as_table() : nullptr;
  const std::vector<bool> kept = args_kept(plan, entries, request.mode, [&](std::string_view name) {
    return original_servers != nullptr && (*original_servers)[name]["args"].node() != nullptr;
  });

  // The servers' launches edited where they stand in the text (located before the tables
  // change).
  const LineIndex lines(text);
  std::vector<Replacement> edits;
  for (std::size_t w = 0; w < plan.writes.size(); ++w) {
    const auto& [index, launch] = plan.writes[w];
    const LaunchText at = toml_launch_text(text, lines, *tables[index]);
    for (Replacement& edit : launch_edits(text, at, *entries[index].launch, launch, kept[w],
                                          toml_string, result.comments_lost)) {
      edits.push_back(std::move(edit));
    }
  }
  write_toml_launches(tables, plan, kept);
  result.changed = true;
  result.text = apply_replacements(text, std::move(edits));
  // What the text now says must be what the edit means; a file it is not is never written.
  const auto reread = parse_toml_file(result.text);
  const toml::table* edited = std::get_if<toml::table>(&reread);
  if (edited == nullptr || *edited != root) {
    return std::string("the servers could not be edited in place");
  }
  if (request.mode == Mode::kUnwrap && original && *original == root &&
      (!has_comment_line(result.text) || same_but_blanks(result.text, *backup))) {
    result.text = std::string(*backup);
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
