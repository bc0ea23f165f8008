#include "wrap/config_formats.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <boost/json.hpp>

#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"
#include "support/text_scan.hpp"

namespace ctxguard::wrap {

namespace json = boost::json;

namespace {

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

Checked<json::value> parse_json_file(std::string_view text) {
  json::parse_options options;
  options.allow_comments = true;  // VS Code's mcp.json is JSON with comments
  options.allow_trailing_commas = true;
  options.max_depth = 1024;
  json::parser parser({}, options);
  json::error_code error;
  const std::size_t read = parser.write_some(text.data(), text.size(), error);
  if (!error && read < text.size()) error = json::error::extra_data;
  if (error)
    return Problem{
        fmt::format("not valid JSON at {}: {}", position_of(text, read), error.message())};
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

// Where the launch of `server` (an object that has a `command`) sits in `text`.
LaunchText launch_text_of(std::string_view text, const JsonSpans& server) {
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

}  // namespace

Checked<JsonConfig> JsonConfig::read(std::string_view text, const ConfigLayout& layout) {
  auto parsed = parse_json_file(text);
  if (!parsed) return parsed.error();
  JsonConfig file;
  file.root_ = *std::move(parsed);
  if (!file.root_.is_object()) return Problem{"the file is not a JSON object"};
  const json::object& root = file.root_.get_object();
  file.servers_key_ = layout.servers_key;
  if (file.servers_key_.empty()) {
    file.servers_key_ =
        root.contains("servers") && !root.contains("mcpServers") ? "servers" : "mcpServers";
  }
  const json::value* holder = root.if_contains(file.servers_key_);
  if (holder != nullptr && !holder->is_object()) {
    return Problem{fmt::format("\"{}\" is not an object of servers", file.servers_key_)};
  }
  file.entries_ = json_entries(file.servers());
  file.spans_ = scan_json_spans(text);
  return file;
}

json::object* JsonConfig::servers() {
  json::value* holder = root_.get_object().if_contains(servers_key_);
  return holder != nullptr ? holder->if_object() : nullptr;
}

const json::object* JsonConfig::servers() const {
  const json::value* holder = root_.get_object().if_contains(servers_key_);
  return holder != nullptr ? holder->if_object() : nullptr;
}

std::optional<LaunchText> JsonConfig::launch_text(std::string_view text, std::size_t index) const {
  const JsonSpans::Member* servers = spans_ ? spans_->member(servers_key_) : nullptr;
  const JsonSpans::Member* server =
      servers != nullptr ? servers->value.member(entries_.at(index).name) : nullptr;
  if (server == nullptr || server->value.member("command") == nullptr) return std::nullopt;
  return launch_text_of(text, server->value);
}

bool JsonConfig::has_args(std::string_view name) const {
  const json::object* held = servers();
  const json::value* server = held != nullptr ? held->if_contains(name) : nullptr;
  return server != nullptr && server->is_object() && server->get_object().contains("args");
}

void JsonConfig::write_launch(std::size_t index, const Launch& launch, bool keep_args) {
  json::object& server = servers()->at(entries_.at(index).name).get_object();
  server["command"] = launch.command;
  if (!keep_args) {
    erase_member(server, "args");
    return;
  }
  json::array args;
  for (const std::string& arg : launch.args) args.emplace_back(arg);
  server["args"] = std::move(args);
}

std::string JsonConfig::write_string(std::string_view value, std::string_view /*like*/) {
  std::string out;
  write_json_string(out, value);
  return out;
}

bool JsonConfig::has_comments(std::string_view text) { return !plain_json(text); }

}  // namespace ctxguard::wrap
