#pragma once
// Opaque, signed continuation tokens for `ctxguard_fetch`.
//
// A cursor is letter_hex(version || payload || tag), the tag being the first 16 bytes of
// HMAC-SHA256(key, version || payload) (support/letter_hex.hpp: two letters a-q a byte, so that
// its estimated tokens depend on its length only). The payload names a cache entry and a position
// in it; it is not secret (the model could decode it) but it cannot be forged or altered: every
// byte is covered by the tag, compared in constant time.
// The key is random per process unless configured. Keys form a ring so a reloaded configuration
// can rotate the key without breaking cursors already handed out: the newest key signs, every
// key verifies.
//
// The entry id travels XORed with the codec's entry salt, random per codec unless given: cache
// ids restart at 1 in every process and a configured key outlives the process, so a cursor of an
// earlier process decodes to an entry that is not there (and says so) instead of naming some
// other result.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.hpp"

namespace ctxguard::cursor {

enum class CursorKind : std::uint8_t {
  kArrayPage = 1,  // items [offset, offset + limit) of the array at `path`
  kTextRange = 2,  // bytes from `offset` of a text part (or of the JSON/string at `path`)
  kTextChunk = 3,  // chunk number `offset` of a chunked text part
  kTextLines = 4,  // lines `offset`..`limit` (1-based, inclusive) of a text part
  kValue = 5,      // the value at `path` (a result's own cursor: any value by JSON Pointer)
  kAggregate = 6,  // groups from `offset` of an aggregate of the array at `path` (`fields`: the
                   // aggregate, as its reader wrote it; `query`: its filter)
};

struct CursorPayload {
  CursorKind kind = CursorKind::kArrayPage;
  std::uint64_t entry = 0;          // ResultCache entry id
  std::uint32_t part = 0;           // which part of the cached result (see pipeline::PartRef)
  std::string path;                 // RFC 6901 pointer inside the part's JSON (array pages)
  std::uint64_t offset = 0;         // first item (array page) or first byte (text range)
  std::uint32_t limit = 0;          // items per page; 0 lets the server choose
  std::vector<std::string> fields;  // projection of each item; empty = all fields
  std::string query;                // a search continued (items or lines matching it)
  std::int64_t issued_at = 0;       // seconds since the Unix epoch

  bool operator==(const CursorPayload&) const = default;
};

// Bounds a decoded payload must respect (anything beyond is kCursorMalformed). encode() does not
// check them: a payload beyond them yields a cursor that decodes as kCursorMalformed, so callers
// building payloads from untrusted input (the fields of a fetch request) check them first.
inline constexpr std::size_t kMaxPathBytes = 4096;
inline constexpr std::size_t kMaxFields = 256;
inline constexpr std::size_t kMaxFieldBytes = 1024;
inline constexpr std::size_t kMaxQueryBytes = 1024;
// The tag: HMAC-SHA256 truncated to 128 bits (RFC 2104 section 5; RFC 4868's HMAC-SHA-256-128).
inline constexpr std::size_t kTagBytes = 16;
// Clock skew tolerated between the issuing and the verifying process (a reload, a slewed clock).
inline constexpr std::chrono::seconds kMaxFutureIssue{60};

class CursorCodec {
 public:
  using WallClock = std::chrono::system_clock;
  // The first byte of every cursor; a layout change takes a new version, old ones are malformed.
  static constexpr std::uint8_t kVersion = 3;
  static constexpr std::size_t kMinKeyBytes = 16;

  // `keys`: newest last, each at least 16 bytes; `ttl` > 0. Throws std::invalid_argument
  // otherwise (start-up / config edge only), and std::runtime_error if the crypto library
  // (cursor/mac) cannot compute an HMAC at all (checked here so the data path never meets it).
  // `entry_salt` is given where runs must repeat byte for byte (the fuzz targets: a cursor's
  // bytes decide its estimated tokens), and by a codec that replaces another in the same process
  // (a key rotation), which takes the old one's entry_salt() so that its cursors keep naming
  // the same entries.
  CursorCodec(std::vector<std::string> keys, std::chrono::seconds ttl);
  CursorCodec(std::vector<std::string> keys, std::chrono::seconds ttl, std::uint64_t entry_salt);
  // A fresh 32-byte key from the platform's CSPRNG (cursor/mac). Throws std::runtime_error if it
  // fails.
  static CursorCodec with_random_key(std::chrono::seconds ttl);

  // Signed with the newest key. Typical array-page cursors are 80-110 characters; the same payload
  // gives a cursor of the same length under any key and salt. Never throws except std::bad_alloc.
  std::string encode(const CursorPayload& payload) const;

  // Errors: Error::kCursorMalformed (not base64url, wrong version, truncated, trailing bytes,
  // oversized fields), Error::kCursorForged (MAC mismatch under every key),
  // Error::kCursorExpired (`now` - issued_at > ttl, or issued_at - `now` > kMaxFutureIssue).
  // The MAC is checked before any payload field is parsed. Never throws except std::bad_alloc.
  Result<CursorPayload> decode(std::string_view cursor, WallClock::time_point now) const;

  std::chrono::seconds ttl() const { return ttl_; }
  std::uint64_t entry_salt() const { return entry_salt_; }

 private:
  std::vector<std::string> keys_;
  std::chrono::seconds ttl_;
  std::uint64_t entry_salt_;
};

}  // namespace ctxguard::cursor
