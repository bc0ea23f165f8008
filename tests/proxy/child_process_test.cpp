#include "proxy/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "run_ctxguard.hpp"

using ctxguard::proxy::ChildProcess;

namespace {

boost::asio::io_context blocking_io;  // the pipes' streams are only ever used synchronously here

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

}  // namespace

TEST_CASE("child process: exit codes and signals are reported as a shell would") {
  auto exits = ChildProcess::spawn({"sh", "-c", "exit 42"});
  REQUIRE(exits.has_value());
  CHECK(exits->wait().shell_status() == 42);

  auto killed = ChildProcess::spawn({"sh", "-c", "kill -TERM $$"});
  REQUIRE(killed.has_value());
  const auto status = killed->wait();
  CHECK(status.signal == SIGTERM);
  CHECK(status.shell_status() == 143);
  CHECK(status.describe() == "killed by signal 15 (Terminated)");
}

TEST_CASE("child process: a missing command is an error value, not a child") {
  auto missing = ChildProcess::spawn({"ctxguard-no-such-command-anywhere"});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error() == std::errc::no_such_file_or_directory);
  CHECK_FALSE(ChildProcess::spawn({}).has_value());
}

TEST_CASE("child process: stdin and stdout are pipes to the parent") {
  auto child = ChildProcess::spawn({"sh", "-c", "read -r line; echo \"got $line\""});
  REQUIRE(child.has_value());
  auto in = child->take_stdin(blocking_io.get_executor());
  ::write(in.native_handle(), "hello\n", 6);
  in.close();
  CHECK(read_all(child->take_stdout(blocking_io.get_executor()).release()) == "got hello\n");
  CHECK(child->wait().shell_status() == 0);
}

TEST_CASE("child process: the child leads its own process group") {
  auto child = ChildProcess::spawn({"sh", "-c", "ps -o pgid= -p $$"});
  REQUIRE(child.has_value());
  child->take_stdin(blocking_io.get_executor()).close();
  const std::string pgid = read_all(child->take_stdout(blocking_io.get_executor()).release());
  CHECK(std::stol(pgid) == child->pid());
  child->wait();
}

TEST_CASE("child process: only descriptors 0-2 are inherited") {
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC on purpose
  REQUIRE(leaked > 2);
  auto child = ChildProcess::spawn({"sh", "-c", "ls /proc/self/fd | sort -n | tr '\\n' ' '"});
  REQUIRE(child.has_value());
  child->take_stdin(blocking_io.get_executor()).close();
  // `ls` itself opens one descriptor for the directory it lists: 0 1 2 and that one.
  const std::string fds = read_all(child->take_stdout(blocking_io.get_executor()).release());
  ::close(leaked);
  CHECK(fds == "0 1 2 3 ");
  child->wait();
}

TEST_CASE("child process: ignored signals are reset to default in the child") {
  ::signal(SIGPIPE, SIG_IGN);
  auto child = ChildProcess::spawn({"grep", "SigIgn", "/proc/self/status"});
  REQUIRE(child.has_value());
  child->take_stdin(blocking_io.get_executor()).close();
  const std::string line = read_all(
      child->take_stdout(blocking_io.get_executor()).release());  // "SigIgn:\t0000000000000000\n"
  REQUIRE(line.rfind("SigIgn:", 0) == 0);
  const unsigned long long ignored = std::stoull(line.substr(7), nullptr, 16);
  CHECK((ignored & (1ull << (SIGPIPE - 1))) == 0);
  child->wait();
}

TEST_CASE("child process: destroying the owner kills the whole group") {
  pid_t pgid = -1;
  {
    auto child = ChildProcess::spawn({"sh", "-c", "sleep 300 & sleep 301"});
    REQUIRE(child.has_value());
    pgid = static_cast<pid_t>(child->pid());
    CHECK(child->group_alive());
  }
  // SIGKILL is delivered before kill() returns, but the background sleep is only marked dead
  // when the kernel has torn it down: allow it a moment rather than sleeping a fixed time.
  for (int i = 0; i < 500 && ctxguard::testing::group_exists(pgid); ++i) ::usleep(2000);
  CHECK_FALSE(ctxguard::testing::group_exists(pgid));
}

TEST_CASE("child process: try_wait does not block while the child runs") {
  auto child = ChildProcess::spawn({"sleep", "300"});
  REQUIRE(child.has_value());
  CHECK_FALSE(child->try_wait());
  child->stop(ctxguard::proxy::StopLevel::kKill);
  CHECK(child->wait().signal == SIGKILL);
  CHECK(child->try_wait());  // stays known after reaping
}
