#include "wrap/server_launch.hpp"

#include <algorithm>

#include "support/text_scan.hpp"

namespace ctxguard::wrap {

namespace {

constexpr std::string_view kSeparator = "--";

}  // namespace

bool names_ctxguard(std::string_view command) {
  const std::size_t slash = command.find_last_of("/\\");
  const std::string_view name =
      slash == std::string_view::npos ? command : command.substr(slash + 1);
  return name == "ctxguard" || text::equal_folded(name, "ctxguard.exe");
}

std::optional<Wrapping> wrapping_of(const Launch& launch) {
  if (!names_ctxguard(launch.command)) return std::nullopt;
  const auto separator = std::find(launch.args.begin(), launch.args.end(), kSeparator);
  if (separator == launch.args.end() || separator + 1 == launch.args.end()) return std::nullopt;
  return Wrapping{
      .ctxguard = launch.command,
      .options = {launch.args.begin(), separator},
      .server = {.command = *(separator + 1), .args = {separator + 2, launch.args.end()}}};
}

Launch wrapped(const Launch& server, const std::string& ctxguard,
               const std::vector<std::string>& options) {
  Launch launch{.command = ctxguard, .args = options};
  launch.args.emplace_back(kSeparator);
  launch.args.push_back(server.command);
  launch.args.insert(launch.args.end(), server.args.begin(), server.args.end());
  return launch;
}

std::string_view describe(Action action) {
  switch (action) {
    case Action::kWrapped:
      return "wrapped";
    case Action::kUpdated:
      return "updated";
    case Action::kAlreadyWrapped:
      return "already wrapped";
    case Action::kUnwrapped:
      return "unwrapped";
    case Action::kNotWrapped:
      return "not wrapped";
    case Action::kRemote:
      return "left alone (remote)";
    case Action::kNoCommand:
      return "left alone (no command)";
  }
  return "";
}

Decision decide_wrap(const Launch& current, const WrapRequest& request) {
  if (const std::optional<Wrapping> wrapping = wrapping_of(current)) {
    const std::vector<std::string>& options =
        request.options ? *request.options : wrapping->options;
    Launch launch = wrapped(wrapping->server, request.ctxguard, options);
    if (launch == current)
      return Decision{.action = Action::kAlreadyWrapped, .launch = std::nullopt};
    return Decision{.action = Action::kUpdated, .launch = std::move(launch)};
  }
  return Decision{
      .action = Action::kWrapped,
      .launch = wrapped(current, request.ctxguard,
                        request.options ? *request.options : std::vector<std::string>{})};
}

Decision decide_unwrap(const Launch& current) {
  if (const std::optional<Wrapping> wrapping = wrapping_of(current)) {
    return Decision{.action = Action::kUnwrapped, .launch = wrapping->server};
  }
  return Decision{.action = Action::kNotWrapped, .launch = std::nullopt};
}

}  // namespace ctxguard::wrap
