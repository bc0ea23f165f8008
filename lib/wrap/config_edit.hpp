#pragma once
// Wrapping and unwrapping the servers of one client configuration file, in memory: the text in,
// the new text and what happened to each server out. The values are read by Boost.JSON (comments
// and trailing commas allowed, as VS Code writes them) and toml++; the text is edited in place
// (text_edit.hpp): only the wrapped servers' `command` and `args` change, and everything else —
// comments, key and table order, quoting, indentation — stays byte for byte. The decisions per
// server are server_launch.hpp's; nothing here touches the file system.
//
// Unwrapping reverses a wrap's edits, so a file nobody else changed gets its exact text back.
// An `args` that ends up empty is left out unless the backup's (the file before ctxguard's first
// change) server had one. A file that then means what the backup meant gets the backup's text
// when it differs from it in blanks only, or has no comments (an older ctxguard dropped them).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wrap/client_files.hpp"
#include "wrap/server_launch.hpp"

namespace ctxguard::wrap {

enum class Mode { kWrap, kUnwrap };

struct EditRequest {
  Mode mode = Mode::kWrap;
  WrapRequest wrap;                  // kWrap only
  std::vector<std::string> servers;  // the servers to change; empty: every one
};

struct ServerOutcome {
  std::string name;
  Action action = Action::kNoCommand;
  std::string url;  // kRemote: where it is reached
};

struct EditResult {
  std::string text;  // the file as it is to be written (the same text when nothing changed)
  std::string servers_key;
  std::vector<ServerOutcome> servers;
  bool changed = false;
  bool comments_lost = false;  // a comment inside a rewritten `args` array is not kept
};

// `text` edited as `request` says. `backup`: the file's text before ctxguard's first change,
// when there is one. A text that does not parse, servers that are not a table, or a requested
// server the file does not have: the problem, one line.
Checked<EditResult> edit_config(std::string_view text, const ConfigLayout& layout,
                                const EditRequest& request, std::optional<std::string_view> backup);

}  // namespace ctxguard::wrap
