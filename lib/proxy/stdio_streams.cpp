#include "proxy/stdio_streams.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace ctxguard::proxy {
namespace {

// Streams own their descriptors and close them; duplicates keep 0 and 1 open for the process.
int duplicate(int fd) { return ::fcntl(fd, F_DUPFD_CLOEXEC, 3); }

}  // namespace

StdioStreams::StdioStreams(const boost::asio::any_io_executor& executor)
    : saved_in_flags_(::fcntl(STDIN_FILENO, F_GETFL)),
      saved_out_flags_(::fcntl(STDOUT_FILENO, F_GETFL)),
      in_(executor, duplicate(STDIN_FILENO)),
      out_(executor, duplicate(STDOUT_FILENO)) {}

void StdioStreams::close_stdout() {
  boost::system::error_code ignored;
  out_.close(ignored);  // when it was not moved out
  if (saved_out_flags_ >= 0) ::fcntl(STDOUT_FILENO, F_SETFL, saved_out_flags_);
  saved_out_flags_ = -1;  // descriptor 1 is no longer the client's: nothing to restore
  // /dev/null rather than a closed descriptor 1, which the next open() would reuse.
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  } else {
    ::close(STDOUT_FILENO);
  }
}

StdioStreams::~StdioStreams() {
  boost::system::error_code ignored;
  in_.close(ignored);
  out_.close(ignored);
  if (saved_in_flags_ >= 0) ::fcntl(STDIN_FILENO, F_SETFL, saved_in_flags_);
  if (saved_out_flags_ >= 0) ::fcntl(STDOUT_FILENO, F_SETFL, saved_out_flags_);
}

}  // namespace ctxguard::proxy
