#pragma once
// The digest of a long text, for the first answer of chunked text (docs/protocol.md 2.5): what a
// model needs to answer "how many errors, over what time span?" or "what are the sections?"
// without reading on. One pass over the text, deterministic, bounded in size (at most
// kTextDigestChars characters as JSON) whatever the text holds.
//
// By the text's kind:
//   - a log (pipeline::looks_like_log): {"kind": "log", "entries", "span": {"first",
//     "last"} (the first and the last timestamp as written), "levels": {"ERROR": n, ...} (the
//     level word of each entry), "messages": [{"template", "count", "firstLine"}] (the most
//     frequent entries with their numbers, ids and times masked as "<*>", most first)};
//   - Markdown (two or more "#" headings outside code fences): {"kind": "markdown",
//     "outline": [{"line", "heading"}] (headings in order, as many as fit)};
//   - other text: {"kind": "text", "longestLines": [{"line", "chars"}]} (the three longest).
// Line numbers are 1-based, as `startLine`/`endLine` take them.

#include <cstddef>
#include <memory>
#include <string_view>

#include <boost/json/object.hpp>

#include "pipeline/text/text_chunk.hpp"

namespace ctxguard::pipeline {

inline constexpr std::size_t kTextDigestChars = 700;

// The digest of `text`, whose lines are `lines`.
boost::json::object digest_text(std::string_view text, const LineIndex& lines);

// What a digest adds to an answer's `_ctxguard`: its JSON with its key, in estimated tokens, and
// its JSON in characters; `hint` is the sentence the answer's hint adds for it (counted in both).
struct DigestRoom {
  std::size_t tokens = 0;
  std::size_t chars = 0;
};
DigestRoom digest_room(const boost::json::object& digest, std::string_view hint);

struct LogDigest;

// The log form of the digest over some lines of a log only, added in order with their numbers:
// a line search's matches (docs/protocol.md 5.5). Lines that start no entry are not counted.
class LogLinesDigest {
 public:
  LogLinesDigest();
  ~LogLinesDigest();
  LogLinesDigest(const LogLinesDigest&) = delete;
  LogLinesDigest& operator=(const LogLinesDigest&) = delete;

  void add(std::string_view line, std::size_t number);
  // {"kind": "log", "entries", "span", "levels", "messages"}, within kTextDigestChars.
  boost::json::object finish() const;

 private:
  std::unique_ptr<LogDigest> digest_;
};

}  // namespace ctxguard::pipeline
