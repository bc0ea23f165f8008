#pragma once
// `ctxguard wrap` and `ctxguard unwrap`: put ctxguard in front of the stdio servers of a client's
// configuration file, or take it away again (docs/configuration.md, "Wrapping a client's
// servers"). The file is chosen by client (its standard location) or by path; before the first
// change a backup is kept next to it (FILE.ctxguard-backup); every write is atomic (a temporary
// file renamed over it, its mode and owner kept); --dry-run prints the change as a unified diff
// and writes nothing. A file that does not parse is left untouched and the parse error printed.

#include <iosfwd>
#include <span>
#include <string>

#include "wrap/client_files.hpp"
#include "wrap/config_edit.hpp"

namespace ctxguard::wrap {

// What the command needs from the machine.
struct WrapContext {
  Platform platform;
  std::string self_path;  // this ctxguard, the default --ctxguard
};

// The backup kept next to `path` before ctxguard first changes it.
std::string backup_path_of(const std::string& path);

std::string wrap_help_text(Mode mode);

// Runs `ctxguard wrap ARGS` (or unwrap): what happened on `out`, problems on `err`. Returns the
// exit status: 0 (also when there was nothing to change), 2 for a usage error or a file that
// cannot be read, parsed or written (it is left as it was).
int run_wrap(Mode mode, std::span<const char* const> args, const WrapContext& context,
             std::ostream& out, std::ostream& err);

}  // namespace ctxguard::wrap
