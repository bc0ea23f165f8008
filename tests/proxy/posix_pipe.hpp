// POSIX pipes for tests that drive the proxy's streams by hand: descriptors the test owns, closed
// when they go, and a non-blocking read of whatever is there.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <utility>

#include <catch2/catch.hpp>

namespace ctxguard::test {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&&) = delete;
  ~Fd() { close(); }

  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

struct Pipe {
  Fd read;
  Fd write;
};

inline Pipe make_pipe() {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  return {Fd(fds[0]), Fd(fds[1])};
}

// Reads what is there without waiting; `fd` must be non-blocking.
inline std::string read_available(const Fd& fd) {
  std::string text;
  char buffer[65536];
  ssize_t n = 0;
  while ((n = ::read(fd.get(), buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace ctxguard::test
