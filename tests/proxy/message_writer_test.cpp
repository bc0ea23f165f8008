#include "proxy/message_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "posix_pipe.hpp"

namespace asio = boost::asio;
using ctxguard::proxy::MessageWriter;
using ctxguard::test::make_pipe;
using ctxguard::test::Pipe;
using ctxguard::test::read_available;

namespace {

// A real pipe: the writer gets the write end, the test reads the other end by hand.
Pipe pipe_read_by_hand() {
  Pipe pipe = make_pipe();
  ::fcntl(pipe.read.get(), F_SETFL, O_NONBLOCK);
  return pipe;
}

std::string message(int i) { return std::to_string(i) + ":" + std::string(10 * 1024, 'm'); }

}  // namespace

TEST_CASE("message writer: a reader that does not read holds the producer back, nothing is lost") {
  asio::io_context io;
  Pipe pipe = pipe_read_by_hand();
  MessageWriter writer(asio::posix::stream_descriptor(io, pipe.write.release()), 20 * 1024, "test");
  constexpr int kMessages = 100;
  int queued = 0;
  asio::co_spawn(io, writer.run(), asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < kMessages; ++i) {
          const bool sent = co_await writer.send(message(i));
          if (sent) ++queued;
        }
        writer.close();
      },
      asio::detached);

  io.poll();
  // The pipe holds at most 64 KiB and the queue at most 20 KiB (plus the one message that made it
  // cross the mark): the producer must be waiting well before all 1 MiB is queued.
  CHECK(queued < 12);

  std::string received;
  while (!io.stopped()) {
    received += read_available(pipe.read);
    if (io.poll() == 0 && queued == kMessages) {
      received += read_available(pipe.read);
      if (io.poll() == 0) break;
    }
  }
  received += read_available(pipe.read);
  CHECK(queued == kMessages);
  std::string expected;
  for (int i = 0; i < kMessages; ++i) expected += message(i) + "\n";
  CHECK(received == expected);
  CHECK_FALSE(writer.failed());
}

TEST_CASE("message writer: when the reader is gone, send reports it and run returns the error") {
  asio::io_context io;
  Pipe pipe = make_pipe();
  pipe.read.close();
  ::signal(SIGPIPE, SIG_IGN);
  MessageWriter writer(asio::posix::stream_descriptor(io, pipe.write.release()), 1024, "gone");
  boost::system::error_code result;
  bool second_sent = true;
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { result = co_await writer.run(); }, asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await writer.send("first");
        while (!writer.failed()) co_await asio::post(io, asio::use_awaitable);
        second_sent = co_await writer.send("second");
      },
      asio::detached);
  io.run();
  CHECK(result == asio::error::broken_pipe);
  CHECK(writer.failed());
  CHECK_FALSE(second_sent);
}

TEST_CASE("message writer: close() lets queued messages out, then ends end-of-file") {
  asio::io_context io;
  Pipe pipe = pipe_read_by_hand();
  MessageWriter writer(asio::posix::stream_descriptor(io, pipe.write.release()), 1 << 20, "test");
  asio::co_spawn(io, writer.run(), asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await writer.send("a");
        co_await writer.send("b");
        writer.close();
        const bool late = co_await writer.send("too late");
        CHECK_FALSE(late);
        co_await writer.wait_done();
      },
      asio::detached);
  io.run();
  CHECK(read_available(pipe.read) == "a\nb\n");
  char byte;
  CHECK(::read(pipe.read.get(), &byte, 1) == 0);  // end-of-file: the writer closed its end
}
