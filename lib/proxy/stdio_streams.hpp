#pragma once
// ctxguard's own stdin and stdout as Asio streams.
//
// Asio switches a descriptor to O_NONBLOCK, and that flag lives on the open file description,
// which is shared with whatever started us (a terminal, the client's pipe). The flags are put
// back when this object goes away so the parent's end is left as it was.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace ctxguard::proxy {

class StdioStreams {
 public:
  explicit StdioStreams(const boost::asio::any_io_executor& executor);
  ~StdioStreams();
  StdioStreams(const StdioStreams&) = delete;
  StdioStreams& operator=(const StdioStreams&) = delete;

  // Each may be moved out once; the saved flags are restored regardless.
  boost::asio::posix::stream_descriptor& in() { return in_; }
  boost::asio::posix::stream_descriptor& out() { return out_; }

  // Ends the client's stream now rather than at exit: once the stream out() gave (a duplicate)
  // is closed, descriptor 1 itself still holds the pipe open, and a client reading to its end
  // would wait for ctxguard to exit (--metrics-linger keeps it running). Puts descriptor 1's
  // flags back and points it at /dev/null. Call it once everything for the client was written.
  void close_stdout();

 private:
  int saved_in_flags_;
  int saved_out_flags_;
  boost::asio::posix::stream_descriptor in_;
  boost::asio::posix::stream_descriptor out_;
};

}  // namespace ctxguard::proxy
