#include "run_ctxguard.hpp"

#include <boost/asio/io_context.hpp>

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace ctxguard::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_log_path() {
  static std::atomic<int> counter{0};
  return "/tmp/ctxguard-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
         ".log";
}

}  // namespace

std::function<void(const std::string&, pid_t)> signal_when_started(int signal) {
  return [signal](const std::string&, pid_t proxy) { ::kill(proxy, signal); };
}

pid_t server_pid(const std::string& log) {
  std::smatch match;
  static const std::regex started("server started: pid=([0-9]+)");
  if (!std::regex_search(log, match, started)) return -1;
  return static_cast<pid_t>(std::stol(match[1]));
}

bool group_exists(pid_t pgid) {
  if (pgid <= 0) return false;
  // kill(-pgid, 0) also sees zombies, which a busy reaper may leave for a while; a zombie runs
  // nothing, so look at each process's state instead (Linux /proc).
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid pgrp ...; comm may hold spaces, so parse after the last ')'.
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    char state = 0;
    long ppid = 0, group = 0;
    fields >> state >> ppid >> group;
    if (group == pgid && state != 'Z' && state != 'X') return true;
  }
  return false;
}

ProxyRun run_ctxguard(const std::vector<std::string>& server, const ProxyOptions& options) {
  const std::string log_path = temp_log_path();
  std::vector<std::string> argv{CTXGUARD_BINARY, "--log-file", log_path};
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  argv.emplace_back("--");
  argv.insert(argv.end(), server.begin(), server.end());

  auto child = proxy::ChildProcess::spawn(argv);
  if (!child) throw std::runtime_error("cannot start ctxguard: " + child.error().message());
  // The pipes are used synchronously here: their descriptors are taken back from the streams.
  boost::asio::io_context io;
  const int in = child->take_stdin(io.get_executor()).release();
  const int out = child->take_stdout(io.get_executor()).release();

  // The writer runs beside the reader so neither side of a full pipe can block the other.
  std::thread writer([&] {
    std::size_t written = 0;
    while (written < options.input.size()) {
      const ssize_t n = ::write(in, options.input.data() + written, options.input.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    if (options.close_input) ::close(in);
  });

  ProxyRun run;
  bool started_seen = !options.once_started;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::string chunk(1 << 16, '\0');
  while (true) {
    if (std::chrono::steady_clock::now() > deadline) {
      run.timed_out = true;
      child->stop(ctxguard::proxy::StopLevel::kKill);
      break;
    }
    if (!started_seen) {
      const std::string log = read_file(log_path);
      if (server_pid(log) > 0) {
        started_seen = true;
        options.once_started(log, static_cast<pid_t>(child->pid()));
      }
    }
    pollfd fd{out, POLLIN, 0};
    if (::poll(&fd, 1, started_seen ? 1000 : 5) <= 0) continue;
    const ssize_t n = ::read(out, chunk.data(), chunk.size());
    if (n <= 0) break;
    run.output.append(chunk.data(), static_cast<std::size_t>(n));
    if (options.read_pause.count() > 0) std::this_thread::sleep_for(options.read_pause);
  }
  run.status = child->wait();
  writer.join();
  if (!options.close_input) ::close(in);
  ::close(out);
  run.log = read_file(log_path);
  std::remove(log_path.c_str());
  return run;
}

}  // namespace ctxguard::testing
