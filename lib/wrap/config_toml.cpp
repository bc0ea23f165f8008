#include "wrap/config_formats.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "support/json_writer.hpp"
#include "support/text_scan.hpp"

namespace ctxguard::wrap {

namespace {

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

Checked<toml::table> parse_toml_file(std::string_view text) {
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
    return Problem{fmt::format("not valid TOML at line {}, column {}: {}",
                               error.source().begin.line, error.source().begin.column,
                               description)};
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
LaunchText launch_text_of(std::string_view text, const LineIndex& lines,
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

}  // namespace

Checked<TomlConfig> TomlConfig::read(std::string_view text, const ConfigLayout& layout) {
  auto parsed = parse_toml_file(text);
  if (!parsed) return parsed.error();
  TomlConfig file;
  file.root_ = *std::move(parsed);
  file.servers_key_ = layout.servers_key;
  const toml::node* holder = file.root_.get(file.servers_key_);
  if (holder != nullptr && !holder->is_table()) {
    return Problem{fmt::format("\"{}\" is not a table of servers", file.servers_key_)};
  }
  if (holder == nullptr) return file;
  for (auto&& [key, node] : *holder->as_table()) {
    Entry entry{.name = std::string(key.str()), .launch = std::nullopt, .url = {}};
    if (const toml::table* server = node.as_table()) {
      entry.url = (*server)["url"].value_or(std::string());
      if (entry.url.empty()) entry.launch = toml_launch(*server);
    }
    file.entries_.push_back(std::move(entry));
  }
  return file;
}

const toml::table* TomlConfig::server(std::string_view name) const {
  const toml::table* servers = root_[servers_key_].as_table();
  return servers != nullptr ? (*servers)[name].as_table() : nullptr;
}

toml::table* TomlConfig::server(std::string_view name) {
  toml::table* servers = root_[servers_key_].as_table();
  return servers != nullptr ? (*servers)[name].as_table() : nullptr;
}

std::optional<LaunchText> TomlConfig::launch_text(std::string_view text, std::size_t index) const {
  const toml::table* table = server(entries_.at(index).name);
  if (table == nullptr || table->get("command") == nullptr) return std::nullopt;
  return launch_text_of(text, LineIndex(text), *table);
}

bool TomlConfig::has_args(std::string_view name) const {
  const toml::table* table = server(name);
  return table != nullptr && table->get("args") != nullptr;
}

void TomlConfig::write_launch(std::size_t index, const Launch& launch, bool keep_args) {
  toml::table& table = *server(entries_.at(index).name);
  table.insert_or_assign("command", launch.command);
  if (!keep_args) {
    table.erase("args");
    return;
  }
  toml::array args;
  for (const std::string& arg : launch.args) args.push_back(arg);
  table.insert_or_assign("args", std::move(args));
}

bool TomlConfig::has_comments(std::string_view text) { return has_comment_line(text); }

// A TOML string: a literal one ('...') when `like` is one and `value` can be, else a basic one.
std::string TomlConfig::write_string(std::string_view value, std::string_view like) {
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

}  // namespace ctxguard::wrap
