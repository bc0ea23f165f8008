#pragma once
// Editing a server's launch inside the text of a client's configuration file, in place: only
// the bytes of its `command` and `args` change, so the user's comments, key order, quoting and
// indentation stay as they were (docs/configuration.md, "Wrapping a client's servers"). The
// formats' readers (config_formats.hpp) say where things are; this writes what goes there, in
// the file's own style, whatever the format.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wrap/server_launch.hpp"

namespace ctxguard::wrap {

// Bytes [begin, end) of a text.
struct TextSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// `span` of a text becomes `text` (an insertion when the span is empty).
struct Replacement {
  TextSpan span;
  std::string text;
};

// `text` with `replacements` made; they must not overlap.
std::string apply_replacements(std::string_view text, std::vector<Replacement> replacements);

// Byte offsets of line/column positions (both from 1, columns in code points, as toml++ counts).
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  std::size_t offset(std::size_t line, std::size_t column) const;

 private:
  std::string_view text_;
  std::vector<std::size_t> line_starts_;
};

// The start of the line `offset` is on, and the end of that line (before its line break).
std::size_t line_start(std::string_view text, std::size_t offset);
std::size_t line_end(std::string_view text, std::size_t offset);

// The line break the text uses: "\r\n" when its first one is, else "\n".
std::string_view line_break_of(std::string_view text);

// Where one server's launch sits in its file's text.
struct LaunchText {
  TextSpan command;                  // the command's value
  std::optional<TextSpan> args;      // the `args` array, when the server has one
  std::vector<TextSpan> arg_tokens;  // each of its elements
  TextSpan args_removal;             // what leaving `args` out erases: the member, one separator
  // Where an `args` member goes when the server has none, and the text around the array there
  // (the separator, the key and its `:` or `=`; a line break after a TOML line).
  std::size_t args_insert_at = 0;
  std::string args_prefix;
  std::string args_suffix;
  char comment_mark = '#';  // what starts a comment outside strings: '#', or '/' in JSON
};

// `key_text` (a key and what follows it up to its value, as the file writes the command's) naming
// `args` instead of `command`; `fallback` when it does not name `command` as written.
std::string args_key_text(std::string_view key_text, std::string_view fallback);

// How the format writes a string that is not already in the file: JSON's quotes, or TOML's in the
// kind (basic or literal) of the string `like`.
using StringWriter = std::function<std::string(std::string_view value, std::string_view like)>;

// The edits that turn launch `current`, located by `at` in `text`, into `next`; `args` left out
// when `keep_args` is false. Strings the file already holds keep their bytes (quoting, escapes);
// the arguments both launches end with stay as they are, and new ones are written as the file
// writes its array (on one line, or an element a line). `comments_lost` becomes true when a
// comment stood inside what is rewritten.
std::vector<Replacement> launch_edits(std::string_view text, const LaunchText& at,
                                      const Launch& current, const Launch& next, bool keep_args,
                                      const StringWriter& write_string, bool& comments_lost);

}  // namespace ctxguard::wrap
