#pragma once
// Runs the real ctxguard binary as a client would: writes to its stdin, reads its stdout to the
// end, and reports its exit status and log. Used by the relay and lifecycle tests.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "proxy/child_process.hpp"

namespace ctxguard::testing {

struct ProxyRun {
  std::string output;        // everything ctxguard wrote to stdout
  proxy::ExitStatus status;  // how ctxguard exited
  std::string log;           // its log file
  bool timed_out = false;
};

struct ProxyOptions {
  std::vector<std::string> flags{};  // ctxguard options before `--`
  std::string input{};               // written to ctxguard's stdin
  bool close_input = true;           // close stdin after the input (false: keep it open to the end)
  // Called once the log shows the server started, with the log text and ctxguard's pid.
  std::function<void(const std::string& log, pid_t ctxguard)> once_started{};
  std::chrono::seconds timeout{60};
  // A slow client: this long a pause after each read of ctxguard's stdout (64 KiB at most).
  std::chrono::milliseconds read_pause{0};
};

ProxyRun run_ctxguard(const std::vector<std::string>& server, const ProxyOptions& options = {});

// A ProxyOptions::once_started that sends `signal` to ctxguard itself.
std::function<void(const std::string&, pid_t)> signal_when_started(int signal);

// The server pid from ctxguard's "server started: pid=N" log line, or -1.
pid_t server_pid(const std::string& log);

// True while any process of process group `pgid` exists.
bool group_exists(pid_t pgid);

}  // namespace ctxguard::testing
