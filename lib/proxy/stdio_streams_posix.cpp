// ctxguard's own stdio on Linux and macOS (proxy/stdio_streams.hpp).
#include <fcntl.h>
#include <unistd.h>

#include "proxy/stdio_streams.hpp"

namespace ctxguard::proxy {
namespace {

// Streams own their descriptors and close them; duplicates keep 0 and 1 open for the process.
int duplicate(int fd) { return ::fcntl(fd, F_DUPFD_CLOEXEC, 3); }

}  // namespace

struct StdioStreams::Native {
  explicit Native(const boost::asio::any_io_executor& executor)
      : saved_in_flags(::fcntl(STDIN_FILENO, F_GETFL)),
        saved_out_flags(::fcntl(STDOUT_FILENO, F_GETFL)),
        in(executor, duplicate(STDIN_FILENO)),
        out(executor, duplicate(STDOUT_FILENO)) {}

  int saved_in_flags;
  int saved_out_flags;
  ByteStream in;
  ByteStream out;
};

StdioStreams::StdioStreams(const boost::asio::any_io_executor& executor)
    : native_(std::make_unique<Native>(executor)) {}

ByteStream& StdioStreams::in() { return native_->in; }
ByteStream& StdioStreams::out() { return native_->out; }

void StdioStreams::close_stdout() {
  boost::system::error_code ignored;
  native_->out.close(ignored);  // when it was not moved out
  if (native_->saved_out_flags >= 0) ::fcntl(STDOUT_FILENO, F_SETFL, native_->saved_out_flags);
  native_->saved_out_flags = -1;  // descriptor 1 is no longer the client's: nothing to restore
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
  native_->in.close(ignored);
  native_->out.close(ignored);
  if (native_->saved_in_flags >= 0) ::fcntl(STDIN_FILENO, F_SETFL, native_->saved_in_flags);
  if (native_->saved_out_flags >= 0) ::fcntl(STDOUT_FILENO, F_SETFL, native_->saved_out_flags);
}

}  // namespace ctxguard::proxy
