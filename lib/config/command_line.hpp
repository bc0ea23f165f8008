#pragma once
// `ctxguard [options] -- <server command> [args...]`
//
// argv is split at the first `--` before Boost.Program_options sees it: everything after belongs
// to the server, untouched, even if it looks like one of our options.

#include <cstdlib>
#include <functional>
#include <span>
#include <string>

#include "config/profile.hpp"
#include "config/settings.hpp"
#include "support/error.hpp"

namespace ctxguard::config {

struct CommandLine {
  enum class Action { kRun, kHelp, kVersion, kCheckConfig };
  Action action = Action::kRun;
  // settings.budget and settings.process: the global settings from the defaults, variables and
  // flags (the file is not read here; load_profile does that).
  Settings settings;
  // What the file (its path), the variables and the flags say, kept for every reload. With
  // kCheckConfig, file_path is the file to check.
  ConfigSources sources;
};

// Reads an environment variable; nullptr when unset.
using Environment = std::function<const char*(const char* name)>;

// One line for stderr; the caller exits with status 2.

// The exit status of every ctxguard command for a usage error (and of `stats`, `wrap` and
// `unwrap` for a file they cannot use).
inline constexpr int kExitUsage = 2;

Checked<CommandLine> parse_command_line(
    std::span<const char* const> argv, const Environment& environment = [](const char* name) {
      return static_cast<const char*>(std::getenv(name));
    });

// The text printed by --help: usage, every option with its default, and an example.
std::string help_text();

}  // namespace ctxguard::config
