#pragma once
// Parsing JSON so that nothing the server sent changes value on its way through ctxguard.
//
// Boost.JSON 1.81 parses doubles with a fast algorithm that is off by one ulp for about one
// number in five with 16-17 significant digits (measured: 1238.8249400479617 comes back as
// ...615). A proxy that rewrites results must not alter data, so doubles are re-read here with
// parse_double (double_chars.hpp), which rounds correctly. Together with the writer
// (json_writer.hpp), which prints the shortest text that reads back the same double, every number
// survives a rewrite JSON-equal: what a client's JSON.parse makes of it is unchanged.

#include <cstddef>
#include <limits>
#include <new>
#include <string_view>

#include <boost/json/memory_resource.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include "support/error.hpp"

namespace ctxguard {

// Deep enough for any real MCP payload; Boost.JSON's default of 32 rejects legitimate results.
inline constexpr std::size_t kMaxJsonDepth = 4096;

// Thrown by a memory resource that refuses to grow past its limit (pipeline::JsonArena, the
// parser's scratch); parse_json turns it into Error::kJsonTooLarge.
struct JsonMemoryLimit : std::bad_alloc {
  const char* what() const noexcept override { return "JSON memory limit reached"; }
};

// Heap memory for JSON values that counts what it holds and refuses (JsonMemoryLimit) to hold
// more than its limit: the parser's scratch in parse_json, the blocks of pipeline::JsonArena.
class BoundedHeapResource final : public boost::json::memory_resource {
 public:
  explicit BoundedHeapResource(std::size_t limit = std::numeric_limits<std::size_t>::max())
      : limit_(limit) {}

  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* do_allocate(std::size_t n, std::size_t align) override {
    if (n > limit_ - bytes_) throw JsonMemoryLimit();
    bytes_ += n;
    return ::operator new(n, std::align_val_t(align));
  }
  void do_deallocate(void* p, std::size_t n, std::size_t align) override {
    bytes_ -= n;
    // Unsized: clang before 19 does not declare sized deallocation by default.
    ::operator delete(p, std::align_val_t(align));
  }
  bool do_is_equal(const memory_resource& other) const noexcept override { return this == &other; }

  std::size_t limit_;
  std::size_t bytes_ = 0;
};

// Parses exactly one JSON text (surrounding whitespace allowed) into storage `sp`. Invalid
// UTF-8 in strings is accepted and kept: judging it is the peers' business. Numbers too large
// for a double become +-infinity, as in JavaScript.
//
// `max_scratch_bytes` bounds the parser's own stack, which holds every value of an array until
// the array ends (16 bytes each, doubling as it grows): 100 MiB of `[0,1,2,...]` needs 2.4 GB
// of it. Past the limit, or when `sp` throws JsonMemoryLimit, the result is kJsonTooLarge and
// everything allocated is given back.
Result<boost::json::value> parse_json(
    std::string_view text, boost::json::storage_ptr sp = {},
    std::size_t max_scratch_bytes = std::numeric_limits<std::size_t>::max());

}  // namespace ctxguard
