// The server process on Linux and macOS (proxy/child_process.hpp): posix_spawnp into a new
// process group, signals to the group.
//
// CTXGUARD_PORTABLE_POSIX makes a Linux build take the code macOS takes (no pipe2, no
// subreaper), so that path runs in this project's tests (scripts/test-sanitized.sh).
#include "proxy/child_process.hpp"

#include <fcntl.h>
#if defined(__linux__) && !defined(CTXGUARD_PORTABLE_POSIX)
#define CTXGUARD_LINUX_EXTRAS 1
#include <sys/prctl.h>
#endif
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

extern char** environ;

namespace ctxguard::proxy {

struct ChildProcess::Native {
  pid_t pid = -1;
  int stdin_fd = -1;
  int stdout_fd = -1;
  std::optional<ExitStatus> exit;

  std::optional<ExitStatus> reap(int waitpid_options);
  void signal_group(int signal) const {
    if (pid > 0) ::kill(-pid, signal);
  }
};

namespace {

std::error_code last_error() { return {errno, std::system_category()}; }

// A pipe whose both ends are close-on-exec; the spawn dup2()s the child's end onto 0 or 1, which
// clears the flag on the copy only.
Result<std::array<int, 2>> cloexec_pipe() {
  std::array<int, 2> fds{-1, -1};
#if defined(CTXGUARD_LINUX_EXTRAS)
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return last_error();
#else
  // Single-threaded at start-up, so there is no window for another thread's exec to inherit these.
  if (::pipe(fds.data()) != 0) return last_error();
  for (int fd : fds) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
#endif
  return fds;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

int signal_of(StopLevel level) {
  switch (level) {
    case StopLevel::kInterrupt:
      return SIGINT;
    case StopLevel::kTerminate:
      return SIGTERM;
    case StopLevel::kKill:
      break;
  }
  return SIGKILL;
}

// RAII for the posix_spawn attribute objects.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attributes{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

std::string_view to_string(StopLevel level) {
  switch (level) {
    case StopLevel::kInterrupt:
      return "SIGINT";
    case StopLevel::kTerminate:
      return "SIGTERM";
    case StopLevel::kKill:
      break;
  }
  return "SIGKILL";
}

std::string ExitStatus::describe() const {
  if (signal) {
    const char* name = ::strsignal(*signal);
    return "killed by signal " + std::to_string(*signal) + " (" + (name ? name : "?") + ")";
  }
  return "exited with status " + std::to_string(code);
}

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::make_error_code(std::errc::invalid_argument);

  auto to_child = cloexec_pipe();
  if (!to_child) return to_child.error();
  auto from_child = cloexec_pipe();
  if (!from_child) {
    for (int fd : *to_child) ::close(fd);
    return from_child.error();
  }
  auto [child_stdin, parent_stdin] = *to_child;
  auto [parent_stdout, child_stdout] = *from_child;

  SpawnSetup setup;
  posix_spawn_file_actions_adddup2(&setup.actions, child_stdin, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions, child_stdout, STDOUT_FILENO);

  short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
#if defined(__APPLE__)
  // macOS: close everything not explicitly inherited; keep stderr.
  flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
  posix_spawn_file_actions_addinherit_np(&setup.actions, STDERR_FILENO);
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Descriptors opened without O_CLOEXEC (a log file, whatever our parent leaked) stay with us.
  posix_spawn_file_actions_addclosefrom_np(&setup.actions, STDERR_FILENO + 1);
#endif
  posix_spawnattr_setpgroup(&setup.attributes, 0);  // a new group led by the child

  sigset_t defaults;
  sigemptyset(&defaults);
  for (int signal : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&defaults, signal);
  posix_spawnattr_setsigdefault(&setup.attributes, &defaults);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&setup.attributes, &empty);
  posix_spawnattr_setflags(&setup.attributes, flags);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  pid_t pid = -1;
  // posix_spawnp reports a failed exec (ENOENT, EACCES, ...) as its return value on glibc >= 2.24
  // and macOS, so a missing command is an error here rather than a child that exits with 127.
  const int error =
      ::posix_spawnp(&pid, args[0], &setup.actions, &setup.attributes, args.data(), environ);
  ::close(child_stdin);
  ::close(child_stdout);
  if (error != 0) {
    ::close(parent_stdin);
    ::close(parent_stdout);
    return std::error_code(error, std::system_category());
  }
  auto native = std::make_unique<Native>();
  native->pid = pid;
  native->stdin_fd = parent_stdin;
  native->stdout_fd = parent_stdout;
  return ChildProcess(std::move(native));
}

ChildProcess::ChildProcess(std::unique_ptr<Native> native) : native_(std::move(native)) {}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept = default;

ChildProcess::~ChildProcess() {
  if (!native_) return;  // moved from
  Native& child = *native_;
  close_fd(child.stdin_fd);
  close_fd(child.stdout_fd);
  if (child.pid <= 0) return;
  if (!child.exit || group_alive()) child.signal_group(SIGKILL);
  if (!child.exit) {
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

ProcessId ChildProcess::pid() const { return native_->pid; }

ByteStream ChildProcess::take_stdin(const boost::asio::any_io_executor& executor) {
  return ByteStream(executor, std::exchange(native_->stdin_fd, -1));
}

ByteStream ChildProcess::take_stdout(const boost::asio::any_io_executor& executor) {
  return ByteStream(executor, std::exchange(native_->stdout_fd, -1));
}

void ChildProcess::stop(StopLevel level) { native_->signal_group(signal_of(level)); }

bool ChildProcess::group_alive() const { return native_->pid > 0 && ::kill(-native_->pid, 0) == 0; }

std::optional<ExitStatus> ChildProcess::try_wait() { return native_->reap(WNOHANG); }

const std::optional<ExitStatus>& ChildProcess::exit_status() const { return native_->exit; }

ExitStatus ChildProcess::wait() {
  auto status = native_->reap(0);
  return status ? *status : ExitStatus{};
}

std::optional<ExitStatus> ChildProcess::Native::reap(int options) {
  if (pid <= 0) return exit;
  // Reap every exited member of the group, not just the leader: ctxguard is a subreaper on
  // Linux, so orphans of the server become our children, and unreaped they would look alive.
  pid_t target = -pid;
  while (true) {
    int status = 0;
    const pid_t reaped = ::waitpid(target, &status, exit ? WNOHANG : options);
    if (reaped < 0 && errno == EINTR) continue;
    if (reaped < 0 && errno == ECHILD && !exit && target != pid) {
      target = pid;  // the leader moved to another group; wait for it by pid
      continue;
    }
    if (reaped <= 0) break;
    if (reaped != pid) continue;
    if (WIFSIGNALED(status)) {
      exit = ExitStatus{0, WTERMSIG(status)};
    } else {
      exit = ExitStatus{WEXITSTATUS(status), std::nullopt};
    }
    target = -pid;
  }
  return exit;
}

void become_subreaper() {
#if defined(CTXGUARD_LINUX_EXTRAS)
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
}

void ensure_standard_descriptors() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

void ignore_sigpipe() { ::signal(SIGPIPE, SIG_IGN); }

}  // namespace ctxguard::proxy
