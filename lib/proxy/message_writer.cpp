#include "proxy/message_writer.hpp"

#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "proxy/use_tuple.hpp"

namespace ctxguard::proxy {

namespace asio = boost::asio;

namespace {
// Upper bound of messages gathered into one write (iovec limits are 1024 on Linux).
constexpr std::size_t kMaxGather = 256;
constexpr char kNewline = '\n';
// The most one write() is asked to take (Asio's default for transfer_all): also how often the
// progress of a long write is counted.
constexpr std::size_t kMaxWriteBytes = 65536;
}  // namespace

MessageWriter::MessageWriter(ByteStream stream, std::size_t high_water_bytes, std::string_view peer)
    : stream_(std::move(stream)),
      high_water_bytes_(high_water_bytes),
      peer_(peer),
      writer_event_(stream_.get_executor(), asio::steady_timer::time_point::max()),
      space_event_(stream_.get_executor(), asio::steady_timer::time_point::max()),
      done_event_(stream_.get_executor(), asio::steady_timer::time_point::max()) {}

asio::awaitable<void> MessageWriter::sleep_until_woken(asio::steady_timer& event) {
  co_await event.async_wait(kUseTuple);
}

asio::awaitable<bool> MessageWriter::send(std::string message) {
  // One message larger than the mark is still accepted when the queue is empty, or nothing could
  // ever pass; the bound is on what waits, not on one message.
  while (!failed_ && !closing_ && queued_bytes_ > 0 &&
         queued_bytes_ + message.size() > high_water_bytes_) {
    co_await sleep_until_woken(space_event_);
  }
  if (failed_ || closing_) co_return false;
  queued_bytes_ += message.size() + 1;
  queue_.push_back(std::move(message));
  wake(writer_event_);
  co_return true;
}

void MessageWriter::close() {
  closing_ = true;
  wake(writer_event_);
  wake(space_event_);
}

asio::awaitable<void> MessageWriter::wait_done() {
  while (!done_) co_await sleep_until_woken(done_event_);
}

asio::awaitable<boost::system::error_code> MessageWriter::run() {
  boost::system::error_code error;
  std::vector<std::string> writing;
  std::vector<asio::const_buffer> buffers;
  while (true) {
    if (queue_.empty()) {
      if (closing_) break;
      co_await sleep_until_woken(writer_event_);
      continue;
    }
    writing.clear();
    buffers.clear();
    while (!queue_.empty() && writing.size() < kMaxGather) {
      writing.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    for (const std::string& message : writing) {
      buffers.emplace_back(message.data(), message.size());
      buffers.emplace_back(&kNewline, 1);
    }
    // transfer_all, counting each partial write as it completes: a 64 MiB message to a slow
    // reader shows its progress (written_bytes_, the queued-bytes gauge) all along.
    std::size_t counted = 0;
    const auto count_progress = [this, &counted](const boost::system::error_code& failure,
                                                 std::size_t transferred) -> std::size_t {
      written_bytes_ += transferred - counted;
      queued_bytes_ -= transferred - counted;
      counted = transferred;
      return failure ? 0 : kMaxWriteBytes;
    };
    auto [ec, written] = co_await asio::async_write(stream_, buffers, count_progress, kUseTuple);
    count_progress(ec, written);
    if (ec) {
      error = ec;
      spdlog::warn("writing to the {} failed: {}; {} queued message(s) dropped", peer_,
                   ec.message(), writing.size() + queue_.size());
      break;
    }
    wake(space_event_);
  }
  failed_ = failed_ || static_cast<bool>(error);
  closing_ = true;
  queue_.clear();
  queued_bytes_ = 0;
  boost::system::error_code ignored;
  stream_.close(ignored);
  done_ = true;
  wake(space_event_);
  wake(done_event_);
  co_return error;
}

}  // namespace ctxguard::proxy
