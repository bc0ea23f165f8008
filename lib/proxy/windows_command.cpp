#include "proxy/windows_command.hpp"

#include <algorithm>
#include <system_error>

#include "support/text_scan.hpp"

namespace ctxguard::proxy::windows {
namespace {

constexpr std::string_view kDefaultExtensions = ".COM;.EXE;.BAT;.CMD";

bool ends_with_ignoring_case(std::string_view name, std::string_view suffix) {
  return name.size() >= suffix.size() &&
         text::equal_folded(name.substr(name.size() - suffix.size()), suffix);
}

// The non-empty items of a semicolon-separated list, in order.
std::vector<std::string_view> split_list(std::string_view list) {
  std::vector<std::string_view> items;
  while (!list.empty()) {
    const std::size_t end = list.find(';');
    const std::string_view item = list.substr(0, end);
    if (!item.empty()) items.push_back(item);
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return items;
}

bool has_extension(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  const std::size_t separator = name.find_last_of("\\/");
  return dot != std::string_view::npos && dot + 1 < name.size() &&
         (separator == std::string_view::npos || dot > separator);
}

// `argument` quoted for cmd.exe inside the /c string: in double quotes, a quote doubled (cmd.exe
// keeps the quoting state in step), backslashes doubled before a quote for the C runtime of
// whatever the batch file runs, and each `%` followed by `%cd:~,%`, an empty substring of the
// always-defined CD variable, so that cmd.exe never sees a `%NAME%` to expand.
void append_batch_argument(std::string& line, std::string_view argument) {
  line += '"';
  std::size_t backslashes = 0;
  for (const char c : argument) {
    if (c == '\\') {
      ++backslashes;
      line += c;
      continue;
    }
    if (c == '"') {
      line.append(backslashes, '\\');
      line += '"';
    }
    backslashes = 0;
    line += c;
    if (c == '%') line += "%cd:~,%";
  }
  line.append(backslashes, '\\');
  line += '"';
}

}  // namespace

std::string quote_argument(std::string_view argument) {
  const bool plain = !argument.empty() && argument.find_first_of(" \t\n\v\"") == std::string::npos;
  if (plain) return std::string(argument);
  std::string quoted = "\"";
  std::size_t backslashes = 0;
  for (const char c : argument) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    // Backslashes count only before a quote: doubled there, and the quote escaped.
    quoted.append(c == '"' ? backslashes * 2 + 1 : backslashes, '\\');
    backslashes = 0;
    quoted += c;
  }
  quoted.append(backslashes * 2, '\\');  // the closing quote must stay a quote
  quoted += '"';
  return quoted;
}

std::string executable_command_line(std::string_view program,
                                    const std::vector<std::string>& arguments) {
  std::string line = quote_argument(program);
  for (const std::string& argument : arguments) {
    line += ' ';
    line += quote_argument(argument);
  }
  return line;
}

Result<std::string> batch_command_line(std::string_view cmd_exe, std::string_view script,
                                       const std::vector<std::string>& arguments) {
  const auto cannot_carry = [](std::string_view text) {
    return text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
  };
  if (script.find('"') != std::string_view::npos || cannot_carry(script)) {
    return std::make_error_code(std::errc::invalid_argument);
  }
  if (std::any_of(arguments.begin(), arguments.end(), cannot_carry)) {
    return std::make_error_code(std::errc::invalid_argument);
  }
  std::string line = quote_argument(cmd_exe);
  line += " /d /e:ON /v:OFF /s /c \"\"";
  line += script;
  line += '"';
  for (const std::string& argument : arguments) {
    line += ' ';
    append_batch_argument(line, argument);
  }
  line += '"';
  return line;
}

bool is_batch_file(std::string_view path) {
  return ends_with_ignoring_case(path, ".cmd") || ends_with_ignoring_case(path, ".bat");
}

std::optional<std::string> find_command(std::string_view command, std::string_view path_list,
                                        std::string_view extensions,
                                        const std::function<bool(const std::string&)>& is_file) {
  if (command.empty()) return std::nullopt;
  std::vector<std::string_view> suffixes = split_list(extensions);
  if (suffixes.empty()) suffixes = split_list(kDefaultExtensions);
  const auto try_in = [&](std::string base) -> std::optional<std::string> {
    if (has_extension(command) && is_file(base)) return base;
    for (const std::string_view suffix : suffixes) {
      std::string candidate = base + std::string(suffix);
      if (is_file(candidate)) return candidate;
    }
    return std::nullopt;
  };
  if (command.find_first_of("\\/:") != std::string_view::npos) {
    return try_in(std::string(command));
  }
  for (const std::string_view dir : split_list(path_list)) {
    std::string base(dir);
    if (base.back() != '\\' && base.back() != '/') base += '\\';
    base += command;
    if (auto found = try_in(std::move(base))) return found;
  }
  return std::nullopt;
}

}  // namespace ctxguard::proxy::windows
