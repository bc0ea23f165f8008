// Fuzz target: cursor::CursorCodec, the only thing between a model's fetch arguments and the
// cache.
//
// Input: a mode byte, then either
//   even: a cursor string, decoded as a model would send it back (the seeds are real cursors of
//     kKey issued at kNow), or
//   odd: the fields of a payload, which is encoded, decoded, and decoded again after tampering.
// Invariants:
//   - anything not issued by this codec is rejected: a cursor that decodes is byte-identical to
//     the encoding of what it decodes to (encode is deterministic, so that is the cursor this
//     codec issued for it), and a tampered, truncated or extended cursor decodes only if it is
//     one this process encoded;
//   - encode then decode gives the same payload back, or kCursorExpired when issued_at is out of
//     the ttl window, or kCursorMalformed when a field is beyond the decoder's bounds;
//   - a cursor is kCursorForged under another key, and valid under a ring that still holds its
//     key (key rotation);
//   - decode fails only with kCursorMalformed, kCursorForged or kCursorExpired.

#include <chrono>
#include <string>
#include <unordered_set>

#include "cursor/cursor_codec.hpp"
#include "fuzz_support.hpp"

namespace {

using ctxguard::Error;
using ctxguard::cursor::CursorCodec;
using ctxguard::cursor::CursorKind;
using ctxguard::cursor::CursorPayload;
using ctxguard::fuzz::excerpt;
using ctxguard::fuzz::FuzzInput;
using ctxguard::fuzz::require;

// The seeds under tests/fuzz/corpus/cursor_fuzz were encoded with this key at this time.
const std::string kKey = "ctxguard-fuzz-cursor-key-0123456";
const std::string kOtherKey = "another-process-cursor-key-6543";
constexpr std::chrono::seconds kTtl{600};
const CursorCodec::WallClock::time_point kNow{std::chrono::seconds(1'750'000'000)};
constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
// The entry salt of every codec here: the same for all three, as a key rotation in one process
// keeps it, and 0 so that the seeds decode to the entries on their wire.
constexpr std::uint64_t kEntrySalt = 0;
// Cursors encoded in this process, kept as 64-bit hashes (a cursor is up to 9 KB: a million of
// them passed libFuzzer's 2 GB under ASan after 1.7 M runs); cleared past this many, ~40 MB.
constexpr std::size_t kMaxIssued = 1'000'000;

const CursorCodec& codec() {
  static const CursorCodec instance({kKey}, kTtl, kEntrySalt);
  return instance;
}
const CursorCodec& other_codec() {
  static const CursorCodec instance({kOtherKey}, kTtl, kEntrySalt);
  return instance;
}
const CursorCodec& rotated_codec() {  // kOtherKey is new and signs; kKey still verifies
  static const CursorCodec instance({kKey, kOtherKey}, kTtl, kEntrySalt);
  return instance;
}
std::unordered_set<std::size_t>& issued() {
  static std::unordered_set<std::size_t> hashes;
  return hashes;
}
std::size_t hash_of(std::string_view cursor) { return std::hash<std::string_view>{}(cursor); }

bool is_error(const ctxguard::Result<CursorPayload>& decoded, Error error) {
  return !decoded && decoded.error() == make_error_code(error);
}

void check_rejection(const ctxguard::Result<CursorPayload>& decoded, std::string_view cursor) {
  if (decoded) return;
  require(is_error(decoded, Error::kCursorMalformed) || is_error(decoded, Error::kCursorForged) ||
              is_error(decoded, Error::kCursorExpired),
          "decode fails only as malformed, forged or expired",
          decoded.error().message() + ": " + excerpt(cursor));
}

// Decoding a string a model sent back.
void decode_any(std::string_view cursor) {
  const auto decoded = codec().decode(cursor, kNow);
  check_rejection(decoded, cursor);
  if (decoded) {
    require(codec().encode(*decoded) == cursor,
            "a cursor that decodes is byte-identical to one this codec encodes", excerpt(cursor));
  }
  const auto other = other_codec().decode(cursor, kNow);
  check_rejection(other, cursor);
  require(!(decoded && other), "a cursor verifies under one key only", excerpt(cursor));
  if (decoded) {
    require(is_error(other, Error::kCursorForged), "a cursor is forged under another key",
            excerpt(cursor));
  }
  const auto rotated = rotated_codec().decode(cursor, kNow);
  check_rejection(rotated, cursor);
  if (decoded) {
    require(rotated && *rotated == *decoded, "a rotated key ring still verifies the old key",
            excerpt(cursor));
  }
  if (rotated && !decoded) {
    require(other && *rotated == *other, "a key ring accepts only what one of its keys signed",
            excerpt(cursor));
  }
}

CursorPayload payload_from(FuzzInput& input) {
  const auto number = [&input](int bytes) {
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value = value << 8 | input.byte();
    return value;
  };
  // Lengths up to a little past the decoder's bounds, so both sides of them are reached.
  const auto text = [&input](std::size_t unit) {
    const std::size_t length = std::size_t{input.byte()} * unit;
    return std::string(length, static_cast<char>(input.byte()));
  };
  CursorPayload payload;
  payload.kind = static_cast<CursorKind>(input.in_range(1, 5));
  payload.entry = number(8);
  payload.part = static_cast<std::uint32_t>(number(4));
  payload.path = text(17);  // up to 4335 bytes; kMaxPathBytes is 4096
  payload.offset = number(8);
  payload.limit = static_cast<std::uint32_t>(number(4));
  const std::uint8_t field_count = input.byte();
  // Many fields are cheap to fake: a count past kMaxFields repeats one short field.
  if (field_count >= 250) {
    payload.fields.assign(256 + field_count % 3, "f");
  } else {
    for (std::size_t i = 0; i < field_count % 6; ++i) payload.fields.push_back(text(5));
  }
  payload.query = text(5);  // up to 1275 bytes; kMaxQueryBytes is 1024
  // issued_at near kNow (the ttl window and the tolerated skew), or anywhere.
  const auto skew = static_cast<std::int16_t>(number(2));
  const std::int64_t now_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(kNow.time_since_epoch()).count();
  payload.issued_at = input.flag() ? static_cast<std::int64_t>(number(8)) : now_seconds + skew;
  return payload;
}

bool within_bounds(const CursorPayload& payload) {
  if (payload.path.size() > ctxguard::cursor::kMaxPathBytes) return false;
  if (payload.fields.size() > ctxguard::cursor::kMaxFields) return false;
  for (const std::string& field : payload.fields) {
    if (field.size() > ctxguard::cursor::kMaxFieldBytes) return false;
  }
  return payload.query.size() <= ctxguard::cursor::kMaxQueryBytes;
}

bool within_ttl(std::int64_t issued_at) {
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(kNow.time_since_epoch()).count();
  // Distances as unsigned differences: issued_at may be anything, and the true distance between
  // two int64 values always fits a uint64.
  if (issued_at <= now) {
    return static_cast<std::uint64_t>(now) - static_cast<std::uint64_t>(issued_at) <=
           static_cast<std::uint64_t>(kTtl.count());
  }
  return static_cast<std::uint64_t>(issued_at) - static_cast<std::uint64_t>(now) <=
         static_cast<std::uint64_t>(ctxguard::cursor::kMaxFutureIssue.count());
}

// A cursor changed by one edit must not decode, unless the edit made another cursor this
// process encoded.
void require_tamper_rejected(const std::string& tampered, std::string_view how) {
  if (issued().count(hash_of(tampered)) != 0) return;
  const auto decoded = codec().decode(tampered, kNow);
  check_rejection(decoded, tampered);
  require(!decoded, "a tampered cursor is rejected", std::string(how) + ": " + excerpt(tampered));
}

void round_trip(FuzzInput& input) {
  const CursorPayload payload = payload_from(input);
  const std::string cursor = codec().encode(payload);
  if (issued().size() >= kMaxIssued) issued().clear();
  issued().insert(hash_of(cursor));

  const auto decoded = codec().decode(cursor, kNow);
  if (!within_bounds(payload)) {
    require(is_error(decoded, Error::kCursorMalformed),
            "a payload beyond the bounds decodes as malformed");
  } else if (!within_ttl(payload.issued_at)) {
    require(is_error(decoded, Error::kCursorExpired),
            "a payload issued outside the ttl window decodes as expired",
            "issued_at " + std::to_string(payload.issued_at));
  } else {
    require(decoded && *decoded == payload, "encode then decode gives the payload back",
            decoded ? std::string() : decoded.error().message());
  }
  require(is_error(other_codec().decode(cursor, kNow), Error::kCursorForged),
          "a cursor is forged under another key");

  // One edit at a position the input picks: a changed character, a cut, an extension.
  const std::size_t at = input.byte() % cursor.size();
  std::string changed = cursor;
  changed[at] = kAlphabet[(kAlphabet.find(cursor[at]) + 1 + input.byte() % 63) % 64];
  require_tamper_rejected(changed, "one character changed");
  require_tamper_rejected(cursor.substr(0, at), "truncated");
  require_tamper_rejected(cursor + std::string(1 + input.byte() % 4, 'A'), "extended");
  require_tamper_rejected(cursor.substr(0, at) + cursor.substr(at + 1), "one character removed");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput input(data, size);
  if (input.byte() % 2 == 0) {
    decode_any(input.rest());
  } else {
    round_trip(input);
  }
  return 0;
}
