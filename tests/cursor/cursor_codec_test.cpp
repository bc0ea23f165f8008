#include "cursor/cursor_codec.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/token_estimator.hpp"
#include "cursor/mac.hpp"
#include "documented.hpp"
#include "support/letter_hex.hpp"

using ctxguard::Error;
using ctxguard::make_error_code;
using ctxguard::cursor::CursorCodec;
using ctxguard::cursor::CursorKind;
using ctxguard::cursor::CursorPayload;
using std::chrono::seconds;

namespace {

const std::string kOldKey = "0123456789abcdef-old-key";
const std::string kNewKey = "fedcba9876543210-new-key";
constexpr seconds kTtl{600};
constexpr std::int64_t kIssuedAt = 1'700'000'000;  // 2023-11-14

CursorCodec::WallClock::time_point at(std::int64_t unix_seconds) {
  return CursorCodec::WallClock::time_point(seconds(unix_seconds));
}

CursorPayload typical_payload() {
  CursorPayload payload;
  payload.kind = CursorKind::kArrayPage;
  payload.entry = 42;
  payload.part = 0;
  payload.path = "/result/items";
  payload.offset = 150;
  payload.limit = 50;
  payload.fields = {"id", "name"};
  payload.issued_at = kIssuedAt;
  return payload;
}

std::error_code error_of(const ctxguard::Result<CursorPayload>& result) {
  return result.has_value() ? std::error_code{} : result.error();
}

// An independent writer of the wire format, so tests can sign payloads the codec would never
// produce and check that decode rejects them (a leaked key must not crash the parser).
struct WireWriter {
  std::string bytes;

  WireWriter& byte(std::uint8_t value) {
    bytes += static_cast<char>(value);
    return *this;
  }
  WireWriter& varint(std::uint64_t value) {
    do {
      const auto group = static_cast<std::uint8_t>(value & 0x7f);
      value >>= 7;
      byte(value != 0 ? group | 0x80 : group);
    } while (value != 0);
    return *this;
  }
  WireWriter& u64(std::uint64_t value) {
    for (int shift = 56; shift >= 0; shift -= 8) byte(static_cast<std::uint8_t>(value >> shift));
    return *this;
  }
  WireWriter& raw(std::string_view text) {
    bytes += text;
    return *this;
  }
  WireWriter& string(std::string_view text) { return varint(text.size()).raw(text); }
  WireWriter& zigzag(std::int64_t value) {
    return varint((static_cast<std::uint64_t>(value) << 1) ^
                  static_cast<std::uint64_t>(value >> 63));
  }
};

// version || payload || the first 16 bytes of HMAC-SHA256(key, version || payload), signed here
// by hand (the MAC itself is checked against the RFC 4231 vectors in mac_test.cpp).
std::string sign(std::string_view payload, const std::string& key = kNewKey,
                 std::uint8_t version = CursorCodec::kVersion) {
  std::string bytes(1, static_cast<char>(version));
  bytes += payload;
  const auto mac = ctxguard::cursor::hmac_sha256(key, bytes);
  REQUIRE(mac);
  bytes.append(reinterpret_cast<const char*>(mac->data()), ctxguard::cursor::kTagBytes);
  return ctxguard::letter_hex_encode(bytes);
}

// The typical payload's wire form up to (not including) the fields.
WireWriter typical_head() {
  WireWriter wire;
  wire.byte(1).u64(42).varint(0).string("/result/items").varint(150).varint(50);
  return wire;
}

}  // namespace

TEST_CASE("cursor: a typical payload round trips") {
  const CursorCodec codec({kNewKey}, kTtl);
  const auto decoded = codec.decode(codec.encode(typical_payload()), at(kIssuedAt + 5));
  REQUIRE(decoded.has_value());
  CHECK(*decoded == typical_payload());
}

TEST_CASE("cursor: the codec writes exactly the documented wire format") {
  const CursorCodec codec({kNewKey}, kTtl, 0);  // with a salt of 0 the entry goes as it is
  WireWriter wire = typical_head();
  wire.varint(2).string("id").string("name").string("").zigzag(kIssuedAt);
  CHECK(codec.encode(typical_payload()) == sign(wire.bytes));
}

TEST_CASE("cursor: a typical cursor stays under 120 characters") {
  const CursorCodec codec({kNewKey}, kTtl);
  const std::string cursor = codec.encode(typical_payload());
  WARN("typical cursor (" << cursor.size() << " chars): " << cursor);
  CHECK(cursor.size() < 120);

  CursorPayload text_range;
  text_range.kind = CursorKind::kTextRange;
  text_range.entry = 7;
  text_range.part = 1;
  text_range.offset = 20'000;
  text_range.issued_at = kIssuedAt;
  CHECK(codec.encode(text_range).size() < 80);
}

TEST_CASE("cursor: one payload gives one length under any key and salt, in letters a-q only") {
  // An answer is planned around its cursors: their length and their estimated tokens must not
  // change with the process's random key and salt, or the same result would be shown
  // differently from one session to the next (docs/protocol.md section 9).
  const std::string first = CursorCodec({kNewKey}, kTtl, 0).encode(typical_payload());
  const std::size_t tokens = ctxguard::budget::estimate_tokens(first);
  std::mt19937_64 random(11);
  for (int i = 0; i < 200; ++i) {
    std::string key(32, '\0');
    for (auto& c : key) c = static_cast<char>(random());
    const std::string cursor = CursorCodec({key}, kTtl, random()).encode(typical_payload());
    CAPTURE(cursor);
    CHECK(cursor.size() == first.size());
    CHECK(cursor.find_first_not_of("abcdefghijklmnopq") == std::string::npos);
    CHECK(std::adjacent_find(cursor.begin(), cursor.end()) == cursor.end());
    CHECK(ctxguard::budget::estimate_tokens(cursor) == tokens);
  }
}

TEST_CASE("cursor: every kind round trips with a query") {
  const CursorCodec codec({kNewKey}, kTtl);
  for (const CursorKind kind :
       {CursorKind::kArrayPage, CursorKind::kTextRange, CursorKind::kTextChunk,
        CursorKind::kTextLines, CursorKind::kValue, CursorKind::kAggregate}) {
    CursorPayload payload = typical_payload();
    payload.kind = kind;
    payload.query = "status=\"in progress\" guest.name~smith";
    const auto decoded = codec.decode(codec.encode(payload), at(kIssuedAt));
    REQUIRE(decoded.has_value());
    CHECK(*decoded == payload);
  }
}

TEST_CASE("cursor: every field round trips, including unicode and maximum values") {
  const CursorCodec codec({kNewKey}, kTtl);
  CursorPayload payload;
  payload.kind = CursorKind::kTextRange;
  payload.entry = std::numeric_limits<std::uint64_t>::max();
  payload.part = std::numeric_limits<std::uint32_t>::max();
  payload.path = "/données/日本語/~0~1/🙂/" + std::string(1, '\0') + "/end";
  payload.offset = std::numeric_limits<std::uint64_t>::max();
  payload.limit = std::numeric_limits<std::uint32_t>::max();
  payload.fields = {"név", "", "emoji 🙂", std::string("nul\0inside", 10)};
  payload.issued_at = kIssuedAt;
  const auto decoded = codec.decode(codec.encode(payload), at(kIssuedAt));
  REQUIRE(decoded.has_value());
  CHECK(*decoded == payload);
}

TEST_CASE("cursor: zero values and empty strings round trip") {
  const CursorCodec codec({kNewKey}, kTtl);
  CursorPayload payload;
  payload.issued_at = 0;
  const auto decoded = codec.decode(codec.encode(payload), at(0));
  REQUIRE(decoded.has_value());
  CHECK(*decoded == payload);
}

TEST_CASE("cursor: a payload at the size limits round trips") {
  const CursorCodec codec({kNewKey}, kTtl);
  CursorPayload payload = typical_payload();
  payload.path = "/" + std::string(ctxguard::cursor::kMaxPathBytes - 1, 'p');
  payload.fields.assign(ctxguard::cursor::kMaxFields,
                        std::string(ctxguard::cursor::kMaxFieldBytes, 'f'));
  const auto decoded = codec.decode(codec.encode(payload), at(kIssuedAt));
  REQUIRE(decoded.has_value());
  CHECK(*decoded == payload);
}

TEST_CASE("cursor: a payload beyond the size limits does not decode") {
  const CursorCodec codec({kNewKey}, kTtl);
  CursorPayload long_path = typical_payload();
  long_path.path = std::string(ctxguard::cursor::kMaxPathBytes + 1, 'p');
  CHECK(error_of(codec.decode(codec.encode(long_path), at(kIssuedAt))) ==
        make_error_code(Error::kCursorMalformed));

  CursorPayload many_fields = typical_payload();
  many_fields.fields.assign(ctxguard::cursor::kMaxFields + 1, "f");
  CHECK(error_of(codec.decode(codec.encode(many_fields), at(kIssuedAt))) ==
        make_error_code(Error::kCursorMalformed));

  CursorPayload long_field = typical_payload();
  long_field.fields = {std::string(ctxguard::cursor::kMaxFieldBytes + 1, 'f')};
  CHECK(error_of(codec.decode(codec.encode(long_field), at(kIssuedAt))) ==
        make_error_code(Error::kCursorMalformed));
}

TEST_CASE("cursor: every single-bit flip of the signed bytes is rejected") {
  const CursorCodec codec({kNewKey}, kTtl);
  const auto bytes = ctxguard::letter_hex_decode(codec.encode(typical_payload()));
  REQUIRE(bytes.has_value());
  for (std::size_t index = 0; index < bytes->size(); ++index) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = *bytes;
      flipped[index] = static_cast<char>(flipped[index] ^ (1 << bit));
      const auto result = codec.decode(ctxguard::letter_hex_encode(flipped), at(kIssuedAt));
      CAPTURE(index, bit);
      REQUIRE_FALSE(result.has_value());
      // The version byte is checked first; every other byte is covered by the MAC.
      CHECK(result.error() ==
            make_error_code(index == 0 ? Error::kCursorMalformed : Error::kCursorForged));
    }
  }
}

TEST_CASE("cursor: replacing any character of the text form is rejected") {
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ ";
  const CursorCodec codec({kNewKey}, kTtl);
  const std::string cursor = codec.encode(typical_payload());
  for (std::size_t index = 0; index < cursor.size(); ++index) {
    for (const char replacement : kAlphabet) {
      if (replacement == cursor[index]) continue;
      std::string changed = cursor;
      changed[index] = replacement;
      CAPTURE(index, replacement);
      CHECK_FALSE(codec.decode(changed, at(kIssuedAt)).has_value());
    }
  }
}

TEST_CASE("cursor: truncation at every length is rejected") {
  const CursorCodec codec({kNewKey}, kTtl);
  const std::string cursor = codec.encode(typical_payload());
  for (std::size_t length = 0; length < cursor.size(); ++length) {
    CAPTURE(length);
    CHECK_FALSE(codec.decode(cursor.substr(0, length), at(kIssuedAt)).has_value());
  }
  const auto bytes = ctxguard::letter_hex_decode(cursor);
  REQUIRE(bytes.has_value());
  for (std::size_t length = 0; length < bytes->size(); ++length) {
    CAPTURE(length);
    const auto result =
        codec.decode(ctxguard::letter_hex_encode(bytes->substr(0, length)), at(kIssuedAt));
    CHECK_FALSE(result.has_value());
  }
}

TEST_CASE("cursor: appended characters or bytes are rejected") {
  const CursorCodec codec({kNewKey}, kTtl);
  const std::string cursor = codec.encode(typical_payload());
  CHECK_FALSE(codec.decode(cursor + "a", at(kIssuedAt)).has_value());
  CHECK_FALSE(codec.decode(cursor + "aa", at(kIssuedAt)).has_value());
  CHECK_FALSE(codec.decode(cursor + "aaaa", at(kIssuedAt)).has_value());
  CHECK_FALSE(codec.decode(cursor + "AA", at(kIssuedAt)).has_value());
  CHECK_FALSE(codec.decode(" " + cursor, at(kIssuedAt)).has_value());
  CHECK_FALSE(codec.decode(cursor + "\n", at(kIssuedAt)).has_value());
}

TEST_CASE("cursor: a cursor is valid up to exactly ttl seconds after issue") {
  const CursorCodec codec({kNewKey}, kTtl);
  const std::string cursor = codec.encode(typical_payload());
  CHECK(codec.decode(cursor, at(kIssuedAt)).has_value());
  CHECK(codec.decode(cursor, at(kIssuedAt + kTtl.count() - 1)).has_value());
  CHECK(codec.decode(cursor, at(kIssuedAt + kTtl.count())).has_value());
  // Sub-second precision of `now` does not stretch the ttl.
  CHECK(codec.decode(cursor, at(kIssuedAt + kTtl.count()) + std::chrono::milliseconds(999))
            .has_value());
  CHECK(error_of(codec.decode(cursor, at(kIssuedAt + kTtl.count() + 1))) ==
        make_error_code(Error::kCursorExpired));
  CHECK(error_of(codec.decode(cursor, at(kIssuedAt + 100 * kTtl.count()))) ==
        make_error_code(Error::kCursorExpired));
}

TEST_CASE("cursor: a cursor issued more than 60 seconds in the future is rejected") {
  const CursorCodec codec({kNewKey}, kTtl);
  const std::string cursor = codec.encode(typical_payload());
  CHECK(codec.decode(cursor, at(kIssuedAt - 60)).has_value());
  CHECK(error_of(codec.decode(cursor, at(kIssuedAt - 61))) ==
        make_error_code(Error::kCursorExpired));
  CHECK(error_of(codec.decode(cursor, at(0))) == make_error_code(Error::kCursorExpired));
}

TEST_CASE("cursor: extreme issue times are expired without overflowing") {
  const CursorCodec codec({kNewKey}, kTtl);
  for (const std::int64_t issued_at :
       {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
        std::int64_t{-1}}) {
    CursorPayload payload = typical_payload();
    payload.issued_at = issued_at;
    CAPTURE(issued_at);
    CHECK(error_of(codec.decode(codec.encode(payload), at(kIssuedAt))) ==
          make_error_code(Error::kCursorExpired));
  }
  CursorPayload payload = typical_payload();
  payload.issued_at = -5;
  const auto decoded = codec.decode(codec.encode(payload), at(0));
  REQUIRE(decoded.has_value());
  CHECK(decoded->issued_at == -5);
}

TEST_CASE("cursor: a cursor signed with an unknown key is forged") {
  const CursorCodec issuer({kOldKey}, kTtl);
  const CursorCodec verifier({kNewKey}, kTtl);
  CHECK(error_of(verifier.decode(issuer.encode(typical_payload()), at(kIssuedAt))) ==
        make_error_code(Error::kCursorForged));
}

TEST_CASE("cursor: after key rotation old cursors verify and new ones use the new key") {
  const CursorCodec before({kOldKey}, kTtl);
  // A rotation in the same process keeps the entry salt: its cursors name the same entries.
  const CursorCodec rotated({kOldKey, kNewKey}, kTtl, before.entry_salt());
  const CursorCodec after({kNewKey}, kTtl, before.entry_salt());

  const std::string old_cursor = before.encode(typical_payload());
  const auto still_valid = rotated.decode(old_cursor, at(kIssuedAt));
  REQUIRE(still_valid.has_value());
  CHECK(*still_valid == typical_payload());

  const std::string new_cursor = rotated.encode(typical_payload());
  CHECK(new_cursor != old_cursor);
  CHECK(after.decode(new_cursor, at(kIssuedAt)).has_value());
  CHECK(error_of(before.decode(new_cursor, at(kIssuedAt))) ==
        make_error_code(Error::kCursorForged));
  // Once the old key leaves the ring, its cursors stop verifying.
  CHECK(error_of(after.decode(old_cursor, at(kIssuedAt))) == make_error_code(Error::kCursorForged));
}

TEST_CASE("cursor: the entry travels salted, so another process's cursor names another entry") {
  const CursorCodec salted({kNewKey}, kTtl, 0x0123456789abcdef);
  const CursorCodec other({kNewKey}, kTtl, 0xfedcba9876543210);
  const CursorCodec plain({kNewKey}, kTtl, 0);
  const std::string cursor = salted.encode(typical_payload());
  // The same key verifies it everywhere (a configured secret), but the entry it names differs.
  const auto here = salted.decode(cursor, at(kIssuedAt));
  const auto there = other.decode(cursor, at(kIssuedAt));
  REQUIRE(here.has_value());
  REQUIRE(there.has_value());
  CHECK(here->entry == typical_payload().entry);
  CHECK(there->entry != typical_payload().entry);
  // On the wire: the entry XOR the salt.
  CHECK(plain.decode(cursor, at(kIssuedAt))->entry ==
        (typical_payload().entry ^ std::uint64_t{0x0123456789abcdef}));
  // Codecs built without a salt draw their own.
  CHECK(CursorCodec({kNewKey}, kTtl).entry_salt() != CursorCodec({kNewKey}, kTtl).entry_salt());
}

TEST_CASE("cursor: random keys differ per codec and verify their own cursors") {
  const CursorCodec first = CursorCodec::with_random_key(kTtl);
  const CursorCodec second = CursorCodec::with_random_key(kTtl);
  const std::string cursor = first.encode(typical_payload());
  CHECK(first.decode(cursor, at(kIssuedAt)).has_value());
  CHECK(error_of(second.decode(cursor, at(kIssuedAt))) == make_error_code(Error::kCursorForged));
  CHECK(first.ttl() == kTtl);
}

TEST_CASE("cursor: bad key rings and ttls are refused at construction") {
  CHECK_THROWS_AS(CursorCodec({}, kTtl), std::invalid_argument);
  CHECK_THROWS_AS(CursorCodec({std::string(15, 'k')}, kTtl), std::invalid_argument);
  CHECK_THROWS_AS(CursorCodec({kOldKey, "short"}, kTtl), std::invalid_argument);
  CHECK_THROWS_AS(CursorCodec({kNewKey}, seconds(0)), std::invalid_argument);
  CHECK_THROWS_AS(CursorCodec({kNewKey}, seconds(-1)), std::invalid_argument);
  CHECK_NOTHROW(CursorCodec({std::string(16, 'k')}, seconds(1)));
}

TEST_CASE("cursor: strings that are not cursors are malformed") {
  const CursorCodec codec({kNewKey}, kTtl);
  const auto malformed = make_error_code(Error::kCursorMalformed);
  CHECK(error_of(codec.decode("", at(kIssuedAt))) == malformed);
  CHECK(error_of(codec.decode("not a cursor!", at(kIssuedAt))) == malformed);
  CHECK(error_of(codec.decode("AQ==", at(kIssuedAt))) == malformed);
  CHECK(error_of(codec.decode("A", at(kIssuedAt))) == malformed);
  CHECK(error_of(codec.decode("AQ", at(kIssuedAt))) == malformed);
  CHECK(error_of(codec.decode("{\"entry\":1}", at(kIssuedAt))) == malformed);
  CHECK(error_of(codec.decode(std::string(10'000'000, 'A'), at(kIssuedAt))) == malformed);
  CHECK(error_of(codec.decode(std::string(10'000'000, '\xff'), at(kIssuedAt))) == malformed);
}

TEST_CASE("cursor: an unknown version is malformed even with a valid MAC") {
  const CursorCodec codec({kNewKey}, kTtl);
  WireWriter wire = typical_head();
  wire.varint(0).string("").zigzag(kIssuedAt);
  CHECK(codec.decode(sign(wire.bytes), at(kIssuedAt)).has_value());
  // Version 1 had no query, version 2 was base64url: their cursors are malformed now, never
  // misread.
  for (const int version : {0, 1, 2, 255}) {
    CAPTURE(version);
    CHECK(error_of(codec.decode(sign(wire.bytes, kNewKey, static_cast<std::uint8_t>(version)),
                                at(kIssuedAt))) == make_error_code(Error::kCursorMalformed));
  }
}

TEST_CASE("cursor: authenticated but malformed payloads are rejected without reading past them") {
  // Signed with the real key, as if the key had leaked: only the parser stands in the way.
  const CursorCodec codec({kNewKey}, kTtl);
  const auto issued = WireWriter().zigzag(kIssuedAt).bytes;
  const auto head = [] { return typical_head(); };
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"unknown kind 0", WireWriter()
                             .byte(0)
                             .u64(42)
                             .varint(0)
                             .string("")
                             .varint(0)
                             .varint(0)
                             .varint(0)
                             .raw(issued)
                             .bytes},
      {"unknown kind 3", WireWriter()
                             .byte(3)
                             .u64(42)
                             .varint(0)
                             .string("")
                             .varint(0)
                             .varint(0)
                             .varint(0)
                             .raw(issued)
                             .bytes},
      {"trailing byte", head().varint(0).raw(issued).byte(0).bytes},
      {"missing issued_at", head().varint(0).bytes},
      {"truncated varint", head().varint(0).raw(issued.substr(0, 2)).bytes},
      {"overlong varint (zero final group)", WireWriter()
                                                 .byte(1)
                                                 .byte(0x80)
                                                 .byte(0x00)
                                                 .varint(0)
                                                 .string("")
                                                 .varint(0)
                                                 .varint(0)
                                                 .varint(0)
                                                 .raw(issued)
                                                 .bytes},
      {"varint of 11 groups", WireWriter()
                                  .byte(1)
                                  .u64(42)
                                  .raw(std::string(10, '\x80'))
                                  .byte(1)
                                  .varint(0)
                                  .string("")
                                  .varint(0)
                                  .varint(0)
                                  .varint(0)
                                  .raw(issued)
                                  .bytes},
      {"varint beyond 64 bits", WireWriter()
                                    .byte(1)
                                    .u64(42)
                                    .raw(std::string(9, '\xff'))
                                    .byte(2)
                                    .varint(0)
                                    .string("")
                                    .varint(0)
                                    .varint(0)
                                    .varint(0)
                                    .raw(issued)
                                    .bytes},
      {"part beyond 32 bits", WireWriter()
                                  .byte(1)
                                  .u64(42)
                                  .varint(std::uint64_t{1} << 32)
                                  .string("")
                                  .varint(0)
                                  .varint(0)
                                  .varint(0)
                                  .raw(issued)
                                  .bytes},
      {"limit beyond 32 bits", WireWriter()
                                   .byte(1)
                                   .u64(42)
                                   .varint(0)
                                   .string("")
                                   .varint(0)
                                   .varint(std::uint64_t{1} << 32)
                                   .varint(0)
                                   .raw(issued)
                                   .bytes},
      {"path length beyond the buffer",
       WireWriter().byte(1).u64(42).varint(0).varint(100).raw("/abc").bytes},
      {"path length of 2^64-1",
       WireWriter().byte(1).u64(42).varint(0).varint(~std::uint64_t{0}).raw("/abc").bytes},
      {"path longer than 4096 bytes", WireWriter()
                                          .byte(1)
                                          .u64(42)
                                          .varint(0)
                                          .string(std::string(4097, 'p'))
                                          .varint(0)
                                          .varint(0)
                                          .varint(0)
                                          .raw(issued)
                                          .bytes},
      {"more than 256 fields",
       [&] {
         WireWriter wire = head();
         wire.varint(257);
         for (int i = 0; i < 257; ++i) wire.string("f");
         return wire.raw(issued).bytes;
       }()},
      {"field count beyond the buffer", head().varint(200).string("a").raw(issued).bytes},
      {"field length beyond the buffer", head().varint(1).varint(50).raw("abc").bytes},
      {"field longer than the limit",
       head()
           .varint(1)
           .string(std::string(ctxguard::cursor::kMaxFieldBytes + 1, 'f'))
           .raw(issued)
           .bytes},
      {"issued_at varint cut by the MAC", head().varint(0).string("").byte(0x80).bytes},
      {"query longer than the limit",
       head()
           .varint(0)
           .string(std::string(ctxguard::cursor::kMaxQueryBytes + 1, 'q'))
           .raw(issued)
           .bytes},
      {"an unknown kind", WireWriter()
                              .byte(7)
                              .u64(42)
                              .varint(0)
                              .string("")
                              .varint(0)
                              .varint(0)
                              .varint(0)
                              .string("")
                              .raw(issued)
                              .bytes},
  };
  for (const auto& [name, payload] : cases) {
    CAPTURE(name);
    CHECK(error_of(codec.decode(sign(payload), at(kIssuedAt))) ==
          make_error_code(Error::kCursorMalformed));
  }
}

TEST_CASE("cursor: every truncation of an authenticated payload is malformed") {
  const CursorCodec codec({kNewKey}, kTtl);
  WireWriter wire = typical_head();
  wire.varint(2).string("id").string("name").string("").zigzag(kIssuedAt);
  for (std::size_t length = 0; length < wire.bytes.size(); ++length) {
    CAPTURE(length);
    CHECK(error_of(codec.decode(sign(wire.bytes.substr(0, length)), at(kIssuedAt))) ==
          make_error_code(Error::kCursorMalformed));
  }
}

TEST_CASE("cursor: mutated authenticated payloads either fail or re-encode to the same cursor") {
  // Canonical format: whatever the parser accepts, the encoder writes back byte for byte, so
  // no payload has two accepted encodings.
  const CursorCodec codec({kNewKey}, kTtl);
  WireWriter wire = typical_head();
  wire.varint(2).string("id").string("name").string("").zigzag(kIssuedAt);
  std::mt19937 random(7);
  const auto pick = [&](std::size_t high) {
    return std::uniform_int_distribution<std::size_t>(0, high)(random);
  };
  std::size_t accepted = 0;
  for (int round = 0; round < 20'000; ++round) {
    std::string bytes = wire.bytes;
    for (std::size_t edits = 1 + pick(2); edits > 0; --edits) {
      const std::size_t at = pick(bytes.size() - 1);
      switch (pick(2)) {
        case 0:
          bytes[at] = static_cast<char>(pick(255));
          break;
        case 1:
          bytes.insert(at, 1, static_cast<char>(pick(255)));
          break;
        default:
          bytes.erase(at, 1);
          break;
      }
    }
    const std::string cursor = sign(bytes);
    const auto result = codec.decode(cursor, at(kIssuedAt));
    if (result.has_value()) {
      ++accepted;
      CHECK(codec.encode(*result) == cursor);
    } else {
      CHECK((result.error() == make_error_code(Error::kCursorMalformed) ||
             result.error() == make_error_code(Error::kCursorExpired)));
    }
  }
  CHECK(accepted > 100);
}

TEST_CASE("cursor codec: every kind is in docs/protocol.md 6's table") {
  const std::string table =
      ctxguard::testing::section_of(ctxguard::testing::documented("protocol.md"), "## 6. Cursors");
  const std::size_t row = table.find("| `kind` |");
  REQUIRE(row != std::string::npos);
  const std::string kinds = table.substr(row, table.find('\n', row) - row);
  for (const CursorKind kind :
       {CursorKind::kArrayPage, CursorKind::kTextRange, CursorKind::kTextChunk,
        CursorKind::kTextLines, CursorKind::kValue, CursorKind::kAggregate}) {
    const std::string named = std::to_string(static_cast<int>(kind)) + " = ";
    INFO(named);
    CHECK(kinds.find(named) != std::string::npos);
  }
  CHECK(kinds.find(std::to_string(static_cast<int>(CursorKind::kAggregate) + 1) + " = ") ==
        std::string::npos);
}
