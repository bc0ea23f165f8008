#pragma once
// The MCP server as a child process. Together with stdio_streams this is the only code that knows
// about POSIX processes; everything platform-specific lives behind these two headers.
//
// The child is the leader of a new process group, so a signal to the group reaches the whole tree
// (`npx` starts `node`, which may start more). Its stdin and stdout are pipes owned by the caller;
// its stderr is ours. Descriptors other than 0-2 are not inherited, and the signals ctxguard
// ignores are reset to their defaults in the child.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "support/error.hpp"

namespace ctxguard::proxy {

// How a process ended.
struct ExitStatus {
  int code = 0;               // exit code when it exited
  std::optional<int> signal;  // the signal that killed it, if one did

  // What a shell reports: the exit code, or 128 + signal number.
  int shell_status() const { return signal ? 128 + *signal : code; }
  std::string describe() const;
};

// The MCP server's process as the session drives it: its exit and its process group.
// ChildProcess is the real one; the session's tests drive a fake.
class ServerProcess {
 public:
  virtual ~ServerProcess() = default;

  virtual pid_t pid() const = 0;
  // Reaps the process if it has exited (and, once it has, any exited member of its group);
  // nullopt while it runs. Never blocks.
  virtual std::optional<ExitStatus> try_wait() = 0;
  // How it ended, once try_wait() has seen it.
  virtual const std::optional<ExitStatus>& exit_status() const = 0;
  // Sends `signal` to the whole process group. Quietly does nothing once it is empty.
  virtual void signal_group(int signal) = 0;
  // True while any process of the group is still running (the process or what it started).
  virtual bool group_alive() const = 0;

 protected:
  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = default;
  ServerProcess(ServerProcess&&) = default;
  ServerProcess& operator=(const ServerProcess&) = default;
  ServerProcess& operator=(ServerProcess&&) = default;
};

class ChildProcess final : public ServerProcess {
 public:
  // Starts `argv` (argv[0] is looked up on PATH like a shell would). Errors: the errno of the
  // failed spawn as a system error code, e.g. ENOENT for a command that does not exist.
  static Result<ChildProcess> spawn(const std::vector<std::string>& argv);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  // Kills and reaps whatever is left of the process group: no process outlives its owner.
  ~ChildProcess() override;

  pid_t pid() const override { return pid_; }

  // The parent's ends of the pipes; ownership passes to the caller (each may be taken once).
  int take_stdin();
  int take_stdout();

  void signal_group(int signal) override;
  bool group_alive() const override;
  std::optional<ExitStatus> try_wait() override;
  const std::optional<ExitStatus>& exit_status() const override { return exit_; }
  // Blocks until the child exits and reaps it (for tools and tests; the proxy never blocks).
  ExitStatus wait();

 private:
  ChildProcess(pid_t pid, int stdin_fd, int stdout_fd);
  std::optional<ExitStatus> reap(int waitpid_options);

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::optional<ExitStatus> exit_;
};

// Makes sure descriptors 0, 1 and 2 are open (on /dev/null when a parent closed them), so pipes
// created later can never land on them. Call first thing in main.
void ensure_standard_descriptors();

// Linux: processes the server leaves behind become our children when their parent dies, so
// ctxguard can see and reap them (PR_SET_CHILD_SUBREAPER). Elsewhere a no-op.
void become_subreaper();

// Ignores SIGPIPE: a reader that went away must be an error value from write(), not a dead proxy.
void ignore_sigpipe();

}  // namespace ctxguard::proxy
