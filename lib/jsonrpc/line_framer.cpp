#include "jsonrpc/line_framer.hpp"

#include <algorithm>
#include <cstring>

namespace ctxguard::jsonrpc {
LineFramer::LineFramer(std::size_t max_line_bytes, std::size_t read_chunk_bytes)
    : max_line_bytes_(std::max<std::size_t>(max_line_bytes, 1)),
      read_chunk_bytes_(std::max<std::size_t>(read_chunk_bytes, 1)) {}

std::span<char> LineFramer::prepare() {
  compact();
  if (buffer_.size() - end_ < read_chunk_bytes_) {
    // Grow geometrically so a long line costs amortised O(n) copies, but never past what the
    // longest line allowed needs: a 200 MiB line under a 256 MiB limit takes 256 MiB, not 512.
    const std::size_t needed = end_ + read_chunk_bytes_;
    const std::size_t most = std::max(needed, max_line_bytes_ + read_chunk_bytes_ + 1);
    buffer_.resize(std::min(std::max(buffer_.size() * 2, needed), most));
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
      if (discarding_) {
        keep_edges({base + begin_, end_ - begin_});
        discarded_bytes_ += end_ - begin_;
        begin_ = end_;
      } else if (end_ - begin_ > max_line_bytes_ + (base[end_ - 1] == '\r' ? 1 : 0)) {
        // A last '\r' may be the first half of a CRLF terminator, not a byte of the line.
        start_discarding();
      }
      return std::nullopt;
    }
    const auto newline = static_cast<std::size_t>(static_cast<const char*>(hit) - base);
    if (discarding_) return end_discarding(newline);
    const std::size_t start = begin_;
    begin_ = scanned_ = newline + 1;
    std::size_t stop = newline;
    if (stop > start && base[stop - 1] == '\r') --stop;
    if (stop == start) continue;
    return complete_line({base + start, stop - start});
  }
  return std::nullopt;
}

std::optional<LineFramer::Line> LineFramer::finish() {
  if (auto line = next()) return line;
  if (discarding_) return end_discarding(end_);
  if (begin_ == end_) return std::nullopt;
  std::size_t stop = end_;
  if (buffer_[stop - 1] == '\r') --stop;
  const std::size_t start = begin_;
  begin_ = scanned_ = end_;
  if (stop == start) return std::nullopt;
  return complete_line({buffer_.data() + start, stop - start});
}

LineFramer::Line LineFramer::complete_line(std::string_view text) const {
  if (text.size() <= max_line_bytes_) return Line{Event::kLine, text, {}, text.size()};
  // Over the limit but arrived whole in one read: reported like a discarded one.
  return oversized(text.substr(0, kOversizedEdgeBytes),
                   text.substr(text.size() - std::min(text.size(), kOversizedEdgeBytes)),
                   text.size());
}

void LineFramer::start_discarding() {
  const std::string_view line(buffer_.data() + begin_, end_ - begin_);
  head_.clear();
  tail_.clear();
  keep_edges(line);
  discarded_bytes_ = line.size();
  discarding_ = true;
  begin_ = scanned_ = end_;
}

LineFramer::Line LineFramer::end_discarding(std::size_t stop) {
  keep_edges({buffer_.data() + begin_, stop - begin_});
  discarded_bytes_ += stop - begin_;
  begin_ = scanned_ = std::min(stop + 1, end_);
  discarding_ = false;
  // CRLF: the '\r' belongs to the terminator, not to the line.
  if (!tail_.empty() && tail_.back() == '\r') {
    tail_.pop_back();
    --discarded_bytes_;
  }
  const std::string_view tail(tail_);
  return oversized(head_, tail.substr(tail.size() - std::min(tail.size(), kOversizedEdgeBytes)),
                   discarded_bytes_);
}

void LineFramer::keep_edges(std::string_view bytes) {
  // The head fills up first: a limit below kOversizedEdgeBytes is crossed before it is complete.
  if (head_.size() < kOversizedEdgeBytes) {
    head_.append(bytes.substr(0, kOversizedEdgeBytes - head_.size()));
  }
  // One byte more than reported: it may turn out to be the '\r' of a CRLF terminator.
  constexpr std::size_t kept = kOversizedEdgeBytes + 1;
  if (bytes.size() >= kept) {
    tail_.assign(bytes.substr(bytes.size() - kept));
    return;
  }
  tail_.append(bytes);
  if (tail_.size() > kept) tail_.erase(0, tail_.size() - kept);
}

LineFramer::Line LineFramer::oversized(std::string_view head, std::string_view tail,
                                       std::size_t bytes) {
  // A short line's head may still hold the '\r' of a CRLF terminator; `bytes` does not count it.
  return Line{Event::kOversized, head.substr(0, std::min(head.size(), bytes)), tail, bytes};
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
