#include "wrap/text_edit.hpp"

#include <algorithm>
#include <map>

#include "support/text_scan.hpp"

namespace ctxguard::wrap {

namespace {

std::string_view text_of(std::string_view text, TextSpan span) {
  return text.substr(span.begin, span.end - span.begin);
}

// How the file writes an array: on one line (its separator, the spaces inside its brackets), or
// an element a line (their indentation, the closing bracket's).
struct ArrayStyle {
  bool multiline = false;
  std::string separator = ", ";
  std::string open_pad;
  std::string close_pad;
  std::string element_indent;
  std::string closing_indent;
  bool trailing_comma = false;
  std::string line_break = "\n";
};

ArrayStyle style_of(std::string_view text, TextSpan array, const std::vector<TextSpan>& elements) {
  ArrayStyle style;
  style.line_break = line_break_of(text);
  if (elements.empty()) return style;
  const std::string_view head = text_of(text, {array.begin + 1, elements.front().begin});
  std::string_view tail = text_of(text, {elements.back().end, array.end - 1});
  const std::size_t comma = tail.find_first_not_of(" \t\r\n");
  if (comma != std::string_view::npos && tail[comma] == ',') {
    style.trailing_comma = true;
    tail.remove_prefix(comma + 1);
  }
  if (head.find('\n') != std::string_view::npos) {
    style.multiline = true;
    const std::string_view indent = head.substr(head.rfind('\n') + 1);
    if (text::is_blank(indent)) style.element_indent = indent;
    const std::size_t last_break = tail.rfind('\n');
    if (last_break != std::string_view::npos && text::is_blank(tail.substr(last_break + 1))) {
      style.closing_indent = tail.substr(last_break + 1);
    }
    return style;
  }
  if (text::is_blank(head)) style.open_pad = head;
  if (text::is_blank(tail)) style.close_pad = tail;
  if (elements.size() > 1) {
    const std::string_view between = text_of(text, {elements[0].end, elements[1].begin});
    const bool one_comma = std::count(between.begin(), between.end(), ',') == 1 &&
                           between.find('\n') == std::string_view::npos &&
                           std::all_of(between.begin(), between.end(),
                                       [](char c) { return c == ',' || text::is_blank_byte(c); });
    if (one_comma) style.separator = between;
  }
  return style;
}

std::string render_array(const std::vector<std::string>& tokens, const ArrayStyle& style) {
  if (tokens.empty()) return "[]";
  std::string out = "[";
  if (style.multiline) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      out += style.line_break;
      out += style.element_indent;
      out += tokens[i];
      if (i + 1 < tokens.size() || style.trailing_comma) out += ',';
    }
    out += style.line_break;
    out += style.closing_indent;
    return out + "]";
  }
  out += style.open_pad;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out += style.separator;
    out += tokens[i];
  }
  if (style.trailing_comma) out += ',';
  out += style.close_pad;
  return out + "]";
}

// What stands between two elements: the separator on one line, or a comma and the next line's
// indentation.
std::string element_separator(const ArrayStyle& style) {
  return style.multiline ? "," + style.line_break + style.element_indent : style.separator;
}

// Whether a comment starts in `span` outside the string tokens `strings` (in text order).
bool comment_in(std::string_view text, TextSpan span, const std::vector<TextSpan>& strings,
                char comment_mark) {
  const auto marked = [&](std::size_t begin, std::size_t end) {
    return begin < end && text_of(text, {begin, end}).find(comment_mark) != std::string_view::npos;
  };
  std::size_t at = span.begin;
  for (const TextSpan& string : strings) {
    if (string.end <= span.begin) continue;
    if (string.begin >= span.end) break;
    if (marked(at, string.begin)) return true;
    at = string.end;
  }
  return marked(at, span.end);
}

}  // namespace

std::string apply_replacements(std::string_view text, std::vector<Replacement> replacements) {
  std::sort(replacements.begin(), replacements.end(), [](const auto& a, const auto& b) {
    return a.span.begin != b.span.begin ? a.span.begin < b.span.begin : a.span.end < b.span.end;
  });
  std::string out;
  out.reserve(text.size() + 256);
  std::size_t at = 0;
  for (const Replacement& replacement : replacements) {
    out += text.substr(at, replacement.span.begin - at);
    out += replacement.text;
    at = replacement.span.end;
  }
  out += text.substr(at);
  return out;
}

LineIndex::LineIndex(std::string_view text) : text_(text) {
  line_starts_.push_back(0);
  for (std::size_t at = text.find('\n'); at != std::string_view::npos;
       at = text.find('\n', at + 1)) {
    line_starts_.push_back(at + 1);
  }
}

std::size_t LineIndex::offset(std::size_t line, std::size_t column) const {
  if (line == 0 || line > line_starts_.size()) return text_.size();
  const std::size_t start = line_starts_[line - 1];
  return start + text::prefix_bytes(text_.substr(start), column - 1);
}

std::size_t line_start(std::string_view text, std::size_t offset) {
  const std::size_t previous = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  return previous == std::string_view::npos ? 0 : previous + 1;
}

std::size_t line_end(std::string_view text, std::size_t offset) {
  return std::min(text.find('\n', offset), text.size());
}

std::string_view line_break_of(std::string_view text) {
  const std::size_t first = text.find('\n');
  return first != std::string_view::npos && first > 0 && text[first - 1] == '\r' ? "\r\n" : "\n";
}

std::string args_key_text(std::string_view key_text, std::string_view fallback) {
  const std::size_t at = key_text.rfind("command");
  if (at == std::string_view::npos) return std::string(fallback);
  std::string out(key_text);
  out.replace(at, std::string_view("command").size(), "args");
  return out;
}

std::vector<Replacement> launch_edits(std::string_view text, const LaunchText& at,
                                      const Launch& current, const Launch& next, bool keep_args,
                                      const StringWriter& write_string, bool& comments_lost) {
  // The strings the file holds for this launch, by value: written again with their own bytes.
  std::map<std::string, std::string_view, std::less<>> held;
  const std::string_view command_token = text_of(text, at.command);
  held.emplace(current.command, command_token);
  for (std::size_t i = 0; i < std::min(current.args.size(), at.arg_tokens.size()); ++i) {
    held.emplace(current.args[i], text_of(text, at.arg_tokens[i]));
  }
  const auto token_of = [&](const std::string& value) {
    const auto found = held.find(value);
    return found != held.end() ? std::string(found->second) : write_string(value, command_token);
  };

  std::vector<Replacement> edits;
  if (next.command != current.command) edits.push_back({at.command, token_of(next.command)});
  if (!keep_args) {
    if (at.args) {
      comments_lost |= comment_in(text, at.args_removal, at.arg_tokens, at.comment_mark);
      edits.push_back({at.args_removal, {}});
    }
    return edits;
  }
  if (at.args && next.args == current.args) return edits;
  // The arguments both launches end with stay as the file has them, comments included: only the
  // head before them changes (a wrap puts its options, `--` and the command there).
  std::size_t kept = 0;
  while (kept < current.args.size() && kept < next.args.size() &&
         current.args[current.args.size() - 1 - kept] == next.args[next.args.size() - 1 - kept]) {
    ++kept;
  }
  if (at.args && kept > 0 && at.arg_tokens.size() == current.args.size()) {
    const ArrayStyle style = style_of(text, *at.args, at.arg_tokens);
    std::string head;
    for (std::size_t i = 0; i + kept < next.args.size(); ++i) {
      head += token_of(next.args[i]);
      head += element_separator(style);
    }
    const TextSpan old_head{at.arg_tokens.front().begin,
                            at.arg_tokens[current.args.size() - kept].begin};
    comments_lost |= comment_in(text, old_head, at.arg_tokens, at.comment_mark);
    edits.push_back({old_head, std::move(head)});
    return edits;
  }
  std::vector<std::string> tokens;
  tokens.reserve(next.args.size());
  for (const std::string& arg : next.args) tokens.push_back(token_of(arg));
  if (at.args) {
    comments_lost |= comment_in(text, *at.args, at.arg_tokens, at.comment_mark);
    edits.push_back({*at.args, render_array(tokens, style_of(text, *at.args, at.arg_tokens))});
  } else {
    ArrayStyle style;
    style.line_break = line_break_of(text);
    edits.push_back({{at.args_insert_at, at.args_insert_at},
                     at.args_prefix + render_array(tokens, style) + at.args_suffix});
  }
  return edits;
}

}  // namespace ctxguard::wrap
