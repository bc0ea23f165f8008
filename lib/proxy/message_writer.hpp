#pragma once
// The one writer of an output stream (the client's stdout or the server's stdin).
//
// Two async_writes on one stream may interleave, so every producer queues here and a single
// coroutine, run(), drains the queue, gathering queued messages into one write. The queue is
// bounded by bytes: send() suspends its caller while the queue is above the high-water mark, so
// a slow reader slows the peer that feeds it instead of growing memory without bound.
//
// Executor: everything runs on one strand-free io_context thread.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include "proxy/byte_stream.hpp"

namespace ctxguard::proxy {

class MessageWriter {
 public:
  MessageWriter(ByteStream stream, std::size_t high_water_bytes, std::string_view peer);

  // Queues one message (without its newline), waiting while the queue is full. Returns false when
  // the stream has failed or was closed: the message is dropped and the caller decides what that
  // means.
  boost::asio::awaitable<bool> send(std::string message);

  // Writes the queue until close() and the queue is empty, or until a write fails. Returns the
  // write error, if any. Then closes the stream, so the reader on the other end sees end-of-file.
  boost::asio::awaitable<boost::system::error_code> run();

  // Asks run() to finish once everything queued so far is written.
  void close();

  // Completes once run() has returned (everything written, or the stream failed).
  boost::asio::awaitable<void> wait_done();

  bool failed() const { return failed_; }
  // Bytes waiting to be written (the backpressure figure /metrics reports).
  std::size_t queued_bytes() const { return queued_bytes_; }
  // Bytes written so far (newlines included), counted as each write() returns: whether a reader
  // is still taking data, however slowly.
  std::uint64_t written_bytes() const { return written_bytes_; }
  std::string_view peer() const { return peer_; }

 private:
  static void wake(boost::asio::steady_timer& event) { event.cancel(); }
  static boost::asio::awaitable<void> sleep_until_woken(boost::asio::steady_timer& event);

  ByteStream stream_;
  std::size_t high_water_bytes_;
  std::string peer_;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  std::uint64_t written_bytes_ = 0;
  // Timers that never expire, used as events: cancel() wakes every waiter.
  boost::asio::steady_timer writer_event_;
  boost::asio::steady_timer space_event_;
  boost::asio::steady_timer done_event_;
  bool closing_ = false;
  bool done_ = false;
  bool failed_ = false;
};

}  // namespace ctxguard::proxy
