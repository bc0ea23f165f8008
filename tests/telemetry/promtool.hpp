#pragma once
// `promtool check metrics` for the tests of what /metrics serves: it parses a page as Prometheus
// does and lints it (Debian package `prometheus`; a missing promtool fails the test).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

namespace ctxguard::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

// `promtool check metrics` on `text`: it parses the page as Prometheus does and lints it.
inline CommandResult promtool_check(const std::string& text) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    FAIL("promtool is not on PATH: install the Debian package 'prometheus' (CI does)");
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("ctxguard-prometheus-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path, std::ios::binary) << text;
  CommandResult result = run_command("promtool check metrics < '" + path.string() + "'");
  std::filesystem::remove(path);
  return result;
}

}  // namespace ctxguard::testing
