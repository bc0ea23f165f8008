// Fuzz target: jsonrpc::LineFramer, the stdio framing every byte from both peers goes through.
//
// Input: [max line bytes] [read chunk bytes] [4 piece sizes] then the byte stream. The stream is
// fed in pieces cycling through the piece sizes, as reads of a pipe would split it.
// Invariants, against a plain split of the stream at '\n':
//   - the lines delivered are exactly the reference's lines of at most max_line_bytes (a
//     trailing '\r' stripped, empty lines skipped), in order;
//   - each longer line is reported as oversized exactly once, in its place, never delivered;
//   - buffered() never exceeds max_line_bytes + 1 + one read chunk (the 1: a line of exactly
//     max_line_bytes and its '\r' wait for the read that tells whether '\n' follows).
// What an oversized event carries is not checked: the framer is free to report a prefix, a tail
// or both, and to report at the start or at the end of the line.

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "jsonrpc/line_framer.hpp"

namespace {

using ctxguard::fuzz::FuzzInput;
using ctxguard::fuzz::require;
using ctxguard::jsonrpc::LineFramer;

// One event: a delivered line, or an oversized one (text empty).
struct Event {
  bool oversized = false;
  std::string text;
};

std::vector<Event> reference_split(std::string_view stream, std::size_t max_line_bytes) {
  std::vector<Event> events;
  std::size_t start = 0;
  while (start < stream.size()) {
    std::size_t end = stream.find('\n', start);
    if (end == std::string_view::npos) end = stream.size();
    std::string_view line = stream.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) {
      const bool oversized = line.size() > max_line_bytes;
      events.push_back(Event{oversized, oversized ? std::string() : std::string(line)});
    }
    start = end + 1;
  }
  return events;
}

std::string describe(const Event& event) {
  return event.oversized ? std::string("<oversized>")
                         : "\"" + ctxguard::fuzz::excerpt(event.text) + "\"";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput input(data, size);
  const std::size_t max_line_bytes = input.in_range(1, 64);
  const std::size_t read_chunk = input.in_range(1, 32);
  std::array<std::size_t, 4> pieces{};
  for (std::size_t& piece : pieces) piece = input.in_range(1, 48);
  const std::string_view stream = input.rest();

  LineFramer framer(max_line_bytes, read_chunk);
  std::vector<Event> seen;
  const auto collect = [&seen](const LineFramer::Line& line) {
    const bool oversized = line.event == LineFramer::Event::kOversized;
    seen.push_back(Event{oversized, oversized ? std::string() : std::string(line.text)});
  };
  const auto check_buffered = [&](const char* when) {
    require(framer.buffered() <= max_line_bytes + 1 + read_chunk,
            "buffered() <= max_line_bytes + 1 + read chunk", [&] {
              return std::string(when) + ": buffered " + std::to_string(framer.buffered()) +
                     ", max line " + std::to_string(max_line_bytes) + ", chunk " +
                     std::to_string(read_chunk);
            });
  };

  std::size_t at = 0;
  for (std::size_t read = 0; at < stream.size(); ++read) {
    const std::span<char> space = framer.prepare();
    require(space.size() >= read_chunk, "prepare() offers at least one read chunk");
    // A read never returns more than one chunk here: the proxy asks for the whole span, but the
    // bound on buffered() is stated per read chunk.
    const std::size_t n =
        std::min({pieces[read % pieces.size()], read_chunk, space.size(), stream.size() - at});
    std::memcpy(space.data(), stream.data() + at, n);
    framer.commit(n);
    at += n;
    check_buffered("after commit");
    while (auto line = framer.next()) collect(*line);
    check_buffered("after next");
  }
  if (auto last = framer.finish()) collect(*last);
  require(!framer.finish().has_value(), "finish() delivers the final line once");

  const std::vector<Event> expected = reference_split(stream, max_line_bytes);
  for (std::size_t i = 0; i < std::max(expected.size(), seen.size()); ++i) {
    const std::string where =
        "event " + std::to_string(i) + " of " + std::to_string(expected.size()) + " expected, " +
        std::to_string(seen.size()) + " seen; max line " + std::to_string(max_line_bytes) + ": ";
    require(i < expected.size(), "no event beyond the reference's", where + describe(seen[i]));
    require(i < seen.size(), "every line of the stream is delivered or reported",
            where + "missing " + describe(expected[i]));
    const Event& want = expected[i];
    const Event& got = seen[i];
    require(got.oversized == want.oversized && got.text == want.text,
            "lines equal the reference split at '\\n'",
            where + "expected " + describe(want) + ", got " + describe(got));
  }
  return 0;
}
