#pragma once
// What `ctxguard wrap` and `ctxguard unwrap` do to one stdio server of a client's configuration,
// whatever the file's format (docs/configuration.md, "Wrapping a client's servers"):
//   wrap:   {command: C, args: A}  ->  {command: CTXGUARD, args: [OPTIONS..., "--", C, A...]}
//   unwrap: the reverse.
// A launch is recognised as wrapped when its command is a ctxguard (by file name: `ctxguard`,
// or `ctxguard.exe` in any case) and its arguments hold a `--` followed by a command. Wrapping
// again keeps the server and sets the options and the ctxguard path.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxguard::wrap {

// How a client starts a stdio server.
struct Launch {
  std::string command;
  std::vector<std::string> args;

  friend bool operator==(const Launch&, const Launch&) = default;
};

// A wrapped launch taken apart.
struct Wrapping {
  std::string ctxguard;              // the command that runs ctxguard
  std::vector<std::string> options;  // ctxguard's, before "--"
  Launch server;                     // after "--"
};

// Whether `command` names a ctxguard binary (a path or a bare name; / and \ both separate).
bool names_ctxguard(std::string_view command);

// `launch` taken apart when it is a wrapped one.
std::optional<Wrapping> wrapping_of(const Launch& launch);

// The launch that runs `server` through `ctxguard` with `options`.
Launch wrapped(const Launch& server, const std::string& ctxguard,
               const std::vector<std::string>& options);

// What wrapping or unwrapping does to one server.
enum class Action {
  kWrapped,         // it runs through ctxguard now
  kUpdated,         // it did already; the ctxguard path or the options changed
  kAlreadyWrapped,  // it did already, as asked
  kUnwrapped,       // it runs directly again
  kNotWrapped,      // unwrap: it did not run through ctxguard
  kRemote,          // a server reached by URL: left alone
  kNoCommand,       // neither a command nor a URL (or not a form this understands): left alone
};

std::string_view describe(Action action);

// What the caller asked for.
struct WrapRequest {
  std::string ctxguard;                             // the path to run
  std::optional<std::vector<std::string>> options;  // nullopt: keep the options a wrap has
};

// The outcome for one launch: the action and, when it changes, the launch to write.
struct Decision {
  Action action = Action::kNoCommand;
  std::optional<Launch> launch;
};

Decision decide_wrap(const Launch& current, const WrapRequest& request);
Decision decide_unwrap(const Launch& current);

}  // namespace ctxguard::wrap
