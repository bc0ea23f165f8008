#pragma once
// Splits a byte stream into newline-delimited lines (the MCP stdio framing).
//
// The framer owns one growable buffer. Callers read straight into `prepare()`, `commit()` what
// arrived, then drain complete lines with `next()`. A line is returned without its terminator;
// a trailing '\r' (CRLF endings) is stripped too. Scanning resumes where it stopped, so a 64 MiB
// line read in 64 KiB pieces costs one pass, not one pass per piece.
//
// A line longer than `max_line_bytes` is not buffered: the framer keeps its first and last
// kOversizedEdgeBytes and its length, discards the rest, and reports it once, at its end, as an
// `Event::kOversized` line. Memory stays bounded whatever the peer sends, and the edges are
// enough to find a JSON-RPC message's `id` and `method` (serializers put them first or last) so
// the sender can be told why its message went nowhere.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ctxguard::jsonrpc {

class LineFramer {
 public:
  enum class Event { kLine, kOversized };

  // Views valid until the next call of prepare(), commit(), next() or finish().
  struct Line {
    Event event;
    std::string_view text;  // kLine: the line. kOversized: its first bytes
    std::string_view tail;  // kOversized: its last bytes (at most kOversizedEdgeBytes)
    std::size_t bytes = 0;  // the line's length without its terminator
  };

  static constexpr std::size_t kOversizedEdgeBytes = 256;

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

  // Bytes held for an incomplete line (for backpressure and tests): at most max_line_bytes + 1 +
  // read_chunk_bytes, the most prepare() ever offers room for. The 1: a line of exactly the limit
  // and its '\r' are held until the next read tells whether a '\n' (CRLF) follows.
  std::size_t buffered() const { return end_ - begin_; }

 private:
  void compact();
  // A line found whole in the buffer (without its terminator), or its report when over the limit.
  Line complete_line(std::string_view text) const;
  // Starts discarding the line at [begin_, end_), which has no newline yet.
  void start_discarding();
  // The discarded line, ended at `stop` (its newline, or the end of input).
  Line end_discarding(std::size_t stop);
  // Adds the next discarded bytes to the first and last ones kept.
  void keep_edges(std::string_view bytes);
  static Line oversized(std::string_view head, std::string_view tail, std::size_t bytes);

  std::size_t max_line_bytes_;
  std::size_t read_chunk_bytes_;
  std::string buffer_;
  std::size_t begin_ = 0;    // first byte of the current (incomplete) line
  std::size_t scanned_ = 0;  // bytes in [begin_, scanned_) hold no newline
  std::size_t end_ = 0;      // end of received bytes
  bool discarding_ = false;  // inside an oversized line, dropping bytes up to the next newline
  // The oversized line being discarded: its first and (so far) last bytes, its length so far.
  std::string head_;
  std::string tail_;
  std::size_t discarded_bytes_ = 0;
};

}  // namespace ctxguard::jsonrpc
