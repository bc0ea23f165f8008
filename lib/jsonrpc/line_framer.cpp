#include "jsonrpc/line_framer.hpp"

#include <algorithm>
#include <cstring>

namespace ctxguard::jsonrpc {
namespace {

std::string_view prefix(const char* data, std::size_t size) {
  return {data, std::min(size, LineFramer::kOversizedPrefixBytes)};
}

}  // namespace

LineFramer::LineFramer(std::size_t max_line_bytes, std::size_t read_chunk_bytes)
    : max_line_bytes_(std::max<std::size_t>(max_line_bytes, 1)),
      read_chunk_bytes_(std::max<std::size_t>(read_chunk_bytes, 1)) {}

std::span<char> LineFramer::prepare() {
  compact();
  if (buffer_.size() - end_ < read_chunk_bytes_) {
    // Grow geometrically so a long line costs amortised O(n) copies.
    buffer_.resize(std::max(buffer_.size() * 2, end_ + read_chunk_bytes_));
  }
  return {buffer_.data() + end_, buffer_.size() - end_};
}

void LineFramer::commit(std::size_t n) { end_ = std::min(end_ + n, buffer_.size()); }

std::optional<LineFramer::Line> LineFramer::next() {
  while (scanned_ < end_) {
    const char* base = buffer_.data();
    const void* hit = std::memchr(base + scanned_, '\n', end_ - scanned_);
    if (hit == nullptr) {
      scanned_ = end_;
      if (!discarding_ && end_ - begin_ > max_line_bytes_) {
        // Report the oversized line once, keep a short prefix for the log, drop the rest.
        discarding_ = true;
        Line line{Event::kOversized, prefix(base + begin_, end_ - begin_)};
        begin_ = scanned_ = end_;
        return line;
      }
      if (discarding_) begin_ = end_;
      return std::nullopt;
    }
    const auto newline = static_cast<std::size_t>(static_cast<const char*>(hit) - base);
    const std::size_t start = begin_;
    begin_ = scanned_ = newline + 1;
    if (discarding_) {
      discarding_ = false;
      continue;
    }
    std::size_t stop = newline;
    if (stop > start && base[stop - 1] == '\r') --stop;
    if (stop - start > max_line_bytes_) {
      return Line{Event::kOversized, prefix(base + start, stop - start)};
    }
    if (stop == start) continue;
    return Line{Event::kLine, std::string_view(base + start, stop - start)};
  }
  return std::nullopt;
}

std::optional<LineFramer::Line> LineFramer::finish() {
  if (auto line = next()) return line;
  if (discarding_ || begin_ == end_) return std::nullopt;
  std::size_t stop = end_;
  if (buffer_[stop - 1] == '\r') --stop;
  const std::size_t start = begin_;
  begin_ = scanned_ = end_;
  if (stop == start) return std::nullopt;
  return Line{Event::kLine, std::string_view(buffer_.data() + start, stop - start)};
}

void LineFramer::compact() {
  if (begin_ == 0) return;
  // Move the incomplete line to the front; cheap because it happens at most once per read.
  std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  scanned_ -= begin_;
  begin_ = 0;
  // After one huge message, give the memory back instead of keeping the high-water mark forever.
  if (buffer_.size() > 16 * read_chunk_bytes_ && end_ < read_chunk_bytes_) {
    std::string smaller(buffer_.data(), end_);
    buffer_.swap(smaller);
  }
}

}  // namespace ctxguard::jsonrpc
