#include <catch2/catch.hpp>

#include "wrap/server_launch.hpp"

using namespace ctxguard::wrap;

namespace {

const Launch kServer{.command = "npx",
                     .args = {"-y", "@modelcontextprotocol/server-filesystem", "/data"}};

}  // namespace

TEST_CASE("server launch: a ctxguard is known by its file name, on any system") {
  CHECK(names_ctxguard("ctxguard"));
  CHECK(names_ctxguard("/usr/bin/ctxguard"));
  CHECK(names_ctxguard("C:\\Program Files\\ctxguard\\ctxguard.exe"));
  CHECK(names_ctxguard("C:\\tools\\CTXGUARD.EXE"));
  CHECK_FALSE(names_ctxguard("/usr/bin/ctxguard-old"));
  CHECK_FALSE(names_ctxguard("npx"));
  CHECK_FALSE(names_ctxguard("/opt/ctxguard/bin/node"));
}

TEST_CASE("server launch: wrapping puts ctxguard and its options before --, unwrapping undoes it") {
  const Launch launch = wrapped(kServer, "/usr/bin/ctxguard", {"--token-budget", "8000"});
  CHECK(launch == Launch{.command = "/usr/bin/ctxguard",
                         .args = {"--token-budget", "8000", "--", "npx", "-y",
                                  "@modelcontextprotocol/server-filesystem", "/data"}});
  const auto wrapping = wrapping_of(launch);
  REQUIRE(wrapping);
  CHECK(wrapping->server == kServer);
  CHECK(wrapping->options == std::vector<std::string>{"--token-budget", "8000"});
  CHECK(wrapping->ctxguard == "/usr/bin/ctxguard");
  // A server whose own arguments hold "--" keeps them: only the first -- is ctxguard's.
  const Launch dashes{.command = "tool", .args = {"run", "--", "x"}};
  CHECK(wrapping_of(wrapped(dashes, "ctxguard", {}))->server == dashes);
  // Not a wrapped launch: ctxguard without a server after --, or another program.
  CHECK_FALSE(wrapping_of(Launch{.command = "ctxguard", .args = {"--"}}));
  CHECK_FALSE(wrapping_of(Launch{.command = "ctxguard", .args = {"--help"}}));
  CHECK_FALSE(wrapping_of(kServer));
}

TEST_CASE("server launch: wrapping again is idempotent and updates what was asked") {
  const WrapRequest plain{.ctxguard = "/usr/bin/ctxguard", .options = std::nullopt};
  const Decision first = decide_wrap(kServer, plain);
  CHECK(first.action == Action::kWrapped);
  REQUIRE(first.launch);
  CHECK(decide_wrap(*first.launch, plain).action == Action::kAlreadyWrapped);
  // Other options replace the old ones; none given keeps them; an empty list clears them.
  const WrapRequest budget{.ctxguard = "/usr/bin/ctxguard",
                           .options = std::vector<std::string>{"--token-budget", "8000"}};
  const Decision updated = decide_wrap(*first.launch, budget);
  CHECK(updated.action == Action::kUpdated);
  CHECK(wrapping_of(*updated.launch)->options == *budget.options);
  CHECK(decide_wrap(*updated.launch, plain).action == Action::kAlreadyWrapped);
  const Decision cleared = decide_wrap(
      *updated.launch, {.ctxguard = "/usr/bin/ctxguard", .options = std::vector<std::string>{}});
  CHECK(wrapping_of(*cleared.launch)->options.empty());
  // Another ctxguard path is an update too, the server kept.
  const Decision moved =
      decide_wrap(*first.launch, {.ctxguard = "/opt/ctxguard", .options = std::nullopt});
  CHECK(moved.action == Action::kUpdated);
  CHECK(wrapping_of(*moved.launch)->server == kServer);
  // Unwrapping gives the server back; a server that is not wrapped stays as it is.
  CHECK(decide_unwrap(*updated.launch).launch == kServer);
  CHECK(decide_unwrap(kServer).action == Action::kNotWrapped);
  CHECK_FALSE(decide_unwrap(kServer).launch);
}
