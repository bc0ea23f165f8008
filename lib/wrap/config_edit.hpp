#pragma once
// Wrapping and unwrapping the servers of one client configuration file, in memory: the text in,
// the new text and what happened to each server out. JSON through Boost.JSON (member order
// kept, written back pretty-printed with the file's own indentation; comments and trailing
// commas, which VS Code allows, are read but not kept), TOML through toml++ (tables and values
// kept; comments are not, and keys come out in toml++'s order). The decisions per server are
// server_launch.hpp's; nothing here touches the file system.
//
// Unwrapping restores what was there: the file's text before ctxguard's first change (its
// backup) is written back byte for byte when the unwrapped file means the same; otherwise each
// server gets its command and arguments back, and an `args` that ends up empty is left out
// unless the backup's server had one.

#include <optional>
#include <string>
#include <string_view>
#include <variant>
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
  bool comments_lost = false;  // the new text drops comments the file had (or may have had)
};

// `text` edited as `request` says. `backup`: the file's text before ctxguard's first change,
// when there is one. A text that does not parse, servers that are not a table, or a requested
// server the file does not have: the reason, one line.
std::variant<EditResult, std::string> edit_config(std::string_view text, const ConfigLayout& layout,
                                                  const EditRequest& request,
                                                  std::optional<std::string_view> backup);

}  // namespace ctxguard::wrap
