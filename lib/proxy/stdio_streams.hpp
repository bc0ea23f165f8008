#pragma once
// ctxguard's own stdin and stdout as streams of the event loop: the platform seam for the
// proxy's stdio (docs/architecture.md, Platforms).
//
// POSIX (stdio_streams_posix.cpp): Asio switches a descriptor to O_NONBLOCK, and that flag lives
// on the open file description, which is shared with whatever started us (a terminal, the
// client's pipe); the flags are put back when this object goes away.
//
// Windows (stdio_streams_win32.cpp): the handles a client gives (anonymous pipes, a console, a
// file) cannot join an I/O completion port, so one thread reads stdin and one writes stdout, each
// relaying through a private overlapped pipe whose other end is the stream the session uses.

#include <memory>

#include <boost/asio/any_io_executor.hpp>

#include "proxy/byte_stream.hpp"

namespace ctxguard::proxy {

class StdioStreams {
 public:
  explicit StdioStreams(const boost::asio::any_io_executor& executor);
  ~StdioStreams();
  StdioStreams(const StdioStreams&) = delete;
  StdioStreams& operator=(const StdioStreams&) = delete;

  // Each may be moved out once; what was set up for them is undone regardless.
  ByteStream& in();
  ByteStream& out();

  // Ends the client's stream now rather than at exit: once the stream out() gave is closed,
  // the process's own stdout still holds the client's pipe open, and a client reading to its end
  // would wait for ctxguard to exit (--metrics-linger keeps it running). Points stdout at the
  // null device. Call it once everything for the client was written.
  void close_stdout();

 private:
  struct Native;
  std::unique_ptr<Native> native_;
};

}  // namespace ctxguard::proxy
