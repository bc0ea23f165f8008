#include "support/write_all.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

namespace ctxguard {

namespace {

// Bounded writes: Linux moves at most about 2 GB per write() anyway.
constexpr std::size_t kMaxWriteBytes = std::size_t{1} << 30;

}  // namespace

int write_all(int fd, std::string_view content) {
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, std::min(left, kMaxWriteBytes));
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    // write() of a non-zero count returning 0 would otherwise loop forever.
    if (written == 0) return EIO;
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  return 0;
}

}  // namespace ctxguard
