#pragma once
// Splits a byte stream into newline-delimited lines (the MCP stdio framing).
//
// The framer owns one growable buffer. Callers read straight into `prepare()`, `commit()` what
// arrived, then drain complete lines with `next()`. A line is returned without its terminator;
// a trailing '\r' (CRLF endings) is stripped too. Scanning resumes where it stopped, so a 64 MiB
// line read in 64 KiB pieces costs one pass, not one pass per piece.
//
// A line longer than `max_line_bytes` is not buffered: the framer reports it once as an
// `Event::kOversized` line (its first bytes kept as `text` for diagnostics) and discards the rest
// of it up to the next newline, so memory stays bounded whatever the peer sends.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ctxguard::jsonrpc {

class LineFramer {
 public:
  enum class Event { kLine, kOversized };

  struct Line {
    Event event;
    std::string_view text;  // valid until the next call of prepare(), commit() or next()
  };

  static constexpr std::size_t kOversizedPrefixBytes = 256;

  explicit LineFramer(std::size_t max_line_bytes,
                      std::size_t read_chunk_bytes = std::size_t{64} * 1024);

  // A writable region of at least `read_chunk_bytes` at the end of the buffered data.
  std::span<char> prepare();
  // Marks `n` bytes of the region returned by prepare() as received.
  void commit(std::size_t n);

  // The next complete line, or nullopt when more input is needed. Empty lines are skipped: they
  // carry no message and a JSON-RPC peer would reject them.
  std::optional<Line> next();

  // At end of input: the final line if it had no terminating newline.
  std::optional<Line> finish();

  // Bytes held for an incomplete line (for backpressure and tests).
  std::size_t buffered() const { return end_ - begin_; }

 private:
  void compact();

  std::size_t max_line_bytes_;
  std::size_t read_chunk_bytes_;
  std::string buffer_;
  std::size_t begin_ = 0;    // first byte of the current (incomplete) line
  std::size_t scanned_ = 0;  // bytes in [begin_, scanned_) hold no newline
  std::size_t end_ = 0;      // end of received bytes
  bool discarding_ = false;  // inside an oversized line, dropping bytes up to the next newline
};

}  // namespace ctxguard::jsonrpc
