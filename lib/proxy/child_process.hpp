#pragma once
// The MCP server as a child process: the platform seam for processes (docs/architecture.md,
// Platforms). POSIX in child_process_posix.cpp, Windows in child_process_win32.cpp.
//
// The child and everything it starts stay together, so a stop reaches the whole tree (`npx`
// starts `node`, which may start more): on POSIX the child leads a new process group; on
// Windows it runs in a Job Object that kills every member when ctxguard's handle to it closes,
// so nothing outlives ctxguard even when ctxguard itself is killed. Its stdin and stdout are
// pipes owned by the caller; its stderr is ours. Nothing else of ours is inherited, and the
// signals ctxguard ignores are reset to their defaults in the child.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "proxy/byte_stream.hpp"
#include "support/error.hpp"

namespace ctxguard::proxy {

using ProcessId = std::int64_t;

// How firmly to ask the server's tree to stop, in escalating order. POSIX: SIGINT, SIGTERM and
// SIGKILL to the process group. Windows has no signal for a process without a console window:
// kInterrupt reaches a server through the console it shares with ctxguard, if any, so ctxguard
// sends nothing; kTerminate and kKill end the whole Job Object, as the MCP SDKs' own
// process.kill() does there.
enum class StopLevel { kInterrupt, kTerminate, kKill };
std::string_view to_string(StopLevel level);

// How a process ended.
struct ExitStatus {
  int code = 0;               // exit code when it exited
  std::optional<int> signal;  // the signal that killed it, if one did (POSIX)

  // What a shell reports: the exit code, or 128 + signal number.
  int shell_status() const { return signal ? 128 + *signal : code; }
  std::string describe() const;
};

// The MCP server's process as the session drives it: its exit and its process tree.
// ChildProcess is the real one; the session's tests drive a fake.
class ServerProcess {
 public:
  virtual ~ServerProcess() = default;

  virtual ProcessId pid() const = 0;
  // Reaps the process if it has exited (and, once it has, any exited member of its tree);
  // nullopt while it runs. Never blocks.
  virtual std::optional<ExitStatus> try_wait() = 0;
  // How it ended, once try_wait() has seen it.
  virtual const std::optional<ExitStatus>& exit_status() const = 0;
  // Asks the whole tree to stop (StopLevel). Quietly does nothing once it is empty.
  virtual void stop(StopLevel level) = 0;
  // True while any process of the tree is still running (the process or what it started).
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
  // Starts `argv`. argv[0] is looked up as a shell would: on PATH, and on Windows with PATHEXT's
  // extensions too, a `.cmd` or `.bat` (npx is npx.cmd) started through cmd.exe with its
  // arguments quoted so that cmd.exe passes them on unchanged. Errors: the system's error code
  // of the failed start, e.g. ENOENT / ERROR_FILE_NOT_FOUND for a command that does not exist.
  static Result<ChildProcess> spawn(const std::vector<std::string>& argv);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  // Kills and reaps whatever is left of the process tree: no process outlives its owner.
  ~ChildProcess() override;

  ProcessId pid() const override;

  // The parent's ends of the pipes as streams on `executor`; each may be taken once.
  ByteStream take_stdin(const boost::asio::any_io_executor& executor);
  ByteStream take_stdout(const boost::asio::any_io_executor& executor);

  void stop(StopLevel level) override;
  bool group_alive() const override;
  std::optional<ExitStatus> try_wait() override;
  const std::optional<ExitStatus>& exit_status() const override;
  // Blocks until the child exits and reaps it (for tools and tests; the proxy never blocks).
  ExitStatus wait();

  // The platform's own state; defined by each implementation (SystemSignals waits on it on
  // Windows).
  struct Native;
  Native& native() { return *native_; }

 private:
  explicit ChildProcess(std::unique_ptr<Native> native);

  std::unique_ptr<Native> native_;
};

// Makes sure the standard streams are open (on the null device when a parent closed them), so
// pipes created later can never land on them. Call first thing in main.
void ensure_standard_descriptors();

// Linux: processes the server leaves behind become our children when their parent dies, so
// ctxguard can see and reap them (PR_SET_CHILD_SUBREAPER). Elsewhere a no-op.
void become_subreaper();

// Ignores SIGPIPE where there is one: a reader that went away must be an error value from a
// write, not a dead proxy.
void ignore_sigpipe();

}  // namespace ctxguard::proxy
