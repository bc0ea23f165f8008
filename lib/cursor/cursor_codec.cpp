#include "cursor/cursor_codec.hpp"

#include <array>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>

#include "cursor/mac.hpp"
#include "support/letter_hex.hpp"

namespace ctxguard::cursor {
namespace {

// Wire layout, after the version byte (integers LEB128, least significant group first, but for
// the entry):
//   kind:u8  entry:u64 big-endian  part  path_len path  offset  limit  field_count (field_len
//   field)*  query_len query  issued_at
// then the tag. The entry travels XORed with the salt, so it is as long as any random number:
// fixed width keeps a cursor's length, and so the answer around it, the same in every session.
// issued_at is zigzag-encoded so negative values stay short and round trip.
constexpr std::size_t kRandomKeyBytes = 32;
constexpr std::size_t kEntryBytes = sizeof(std::uint64_t);

constexpr std::size_t varint_bytes(std::uint64_t value) {
  std::size_t n = 1;
  for (; value >= 0x80; value >>= 7) ++n;
  return n;
}

constexpr std::size_t kMaxPayloadBytes =
    1 + kEntryBytes + varint_bytes(std::numeric_limits<std::uint64_t>::max()) * 3 +
    varint_bytes(std::numeric_limits<std::uint32_t>::max()) * 2 + varint_bytes(kMaxPathBytes) +
    kMaxPathBytes + varint_bytes(kMaxFields) +
    kMaxFields * (varint_bytes(kMaxFieldBytes) + kMaxFieldBytes) + varint_bytes(kMaxQueryBytes) +
    kMaxQueryBytes;
// Anything longer cannot be a cursor we issued: refuse it before decoding or hashing it.
constexpr std::size_t kMaxCursorChars = (1 + kMaxPayloadBytes + kTagBytes) * 2;
// The smallest payload: the kind, the entry and seven one-byte varints.
constexpr std::size_t kMinPayloadBytes = 1 + kEntryBytes + 7;

void append_varint(std::string& out, std::uint64_t value) {
  for (; value >= 0x80; value >>= 7) out += static_cast<char>((value & 0x7f) | 0x80);
  out += static_cast<char>(value);
}

void append_u64(std::string& out, std::uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((value >> shift) & 0xff);
}

void append_string(std::string& out, std::string_view text) {
  append_varint(out, text.size());
  out += text;
}

std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>((value >> 1) ^ (~(value & 1) + 1));
}

// Reads the authenticated payload. Every read checks the remaining length first, so a payload
// that lies about its lengths fails instead of reading past the end (the MAC makes that a
// leaked-key or bug scenario, but the parser does not rely on it).
class PayloadReader {
 public:
  explicit PayloadReader(std::string_view bytes) : bytes_(bytes) {}

  bool at_end() const { return at_ == bytes_.size(); }

  std::optional<std::uint8_t> byte() {
    if (at_ == bytes_.size()) return std::nullopt;
    return static_cast<std::uint8_t>(bytes_[at_++]);
  }

  std::optional<std::uint64_t> u64() {
    if (bytes_.size() - at_ < kEntryBytes) return std::nullopt;
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < kEntryBytes; ++i) {
      value = (value << 8) | static_cast<std::uint8_t>(bytes_[at_++]);
    }
    return value;
  }

  // At most 10 groups, no bits beyond 64, and no overlong form (a zero final group after the
  // first), so each value has exactly one encoding.
  std::optional<std::uint64_t> varint(std::uint64_t max) {
    std::uint64_t value = 0;
    for (int group = 0; group < 10; ++group) {
      const auto next = byte();
      if (!next) return std::nullopt;
      if (group == 9 && *next > 1) return std::nullopt;
      value |= std::uint64_t{*next & 0x7fu} << (7 * group);
      if ((*next & 0x80) == 0) {
        if (*next == 0 && group > 0) return std::nullopt;
        if (value > max) return std::nullopt;
        return value;
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> string(std::size_t max_bytes) {
    const auto length = varint(max_bytes);
    if (!length || *length > bytes_.size() - at_) return std::nullopt;
    std::string text(bytes_.substr(at_, static_cast<std::size_t>(*length)));
    at_ += static_cast<std::size_t>(*length);
    return text;
  }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

std::optional<CursorPayload> parse_payload(std::string_view bytes) {
  constexpr auto kU32 = std::numeric_limits<std::uint32_t>::max();
  constexpr auto kU64 = std::numeric_limits<std::uint64_t>::max();
  PayloadReader reader(bytes);
  CursorPayload payload;

  const auto kind = reader.byte();
  if (!kind || *kind < static_cast<std::uint8_t>(CursorKind::kArrayPage) ||
      *kind > static_cast<std::uint8_t>(CursorKind::kAggregate)) {
    return std::nullopt;
  }
  payload.kind = static_cast<CursorKind>(*kind);

  const auto entry = reader.u64();
  const auto part = reader.varint(kU32);
  if (!entry || !part) return std::nullopt;
  payload.entry = *entry;
  payload.part = static_cast<std::uint32_t>(*part);

  auto path = reader.string(kMaxPathBytes);
  if (!path) return std::nullopt;
  payload.path = std::move(*path);

  const auto offset = reader.varint(kU64);
  const auto limit = reader.varint(kU32);
  const auto field_count = reader.varint(kMaxFields);
  if (!offset || !limit || !field_count) return std::nullopt;
  payload.offset = *offset;
  payload.limit = static_cast<std::uint32_t>(*limit);

  payload.fields.reserve(static_cast<std::size_t>(*field_count));
  for (std::uint64_t i = 0; i < *field_count; ++i) {
    auto field = reader.string(kMaxFieldBytes);
    if (!field) return std::nullopt;
    payload.fields.push_back(std::move(*field));
  }
  auto query = reader.string(kMaxQueryBytes);
  if (!query) return std::nullopt;
  payload.query = std::move(*query);

  const auto issued_at = reader.varint(kU64);
  if (!issued_at || !reader.at_end()) return std::nullopt;
  payload.issued_at = unzigzag(*issued_at);
  return payload;
}

// Unsigned differences so that extreme issued_at values (which only a leaked key could produce)
// cannot overflow.
bool is_expired(std::int64_t issued_at, std::int64_t now, std::int64_t ttl) {
  const auto distance = [](std::int64_t later, std::int64_t earlier) {
    return static_cast<std::uint64_t>(later) - static_cast<std::uint64_t>(earlier);
  };
  if (issued_at < now) return distance(now, issued_at) > static_cast<std::uint64_t>(ttl);
  return distance(issued_at, now) > static_cast<std::uint64_t>(kMaxFutureIssue.count());
}

std::uint64_t random_entry_salt() {
  std::array<unsigned char, sizeof(std::uint64_t)> bytes{};
  // The salt hides entry ids from other processes; it is not a key, so a CSPRNG that fails here
  // falls back to std::random_device rather than stopping ctxguard.
  if (!random_bytes(bytes)) {
    std::random_device device;
    return (std::uint64_t{device()} << 32) ^ device();
  }
  std::uint64_t salt = 0;
  for (unsigned char byte : bytes) salt = (salt << 8) | byte;
  return salt;
}

}  // namespace

CursorCodec::CursorCodec(std::vector<std::string> keys, std::chrono::seconds ttl)
    : CursorCodec(std::move(keys), ttl, random_entry_salt()) {}

CursorCodec::CursorCodec(std::vector<std::string> keys, std::chrono::seconds ttl,
                         std::uint64_t entry_salt)
    : keys_(std::move(keys)), ttl_(ttl), entry_salt_(entry_salt) {
  if (keys_.empty()) throw std::invalid_argument("cursor key ring is empty");
  for (const auto& key : keys_) {
    if (key.size() < kMinKeyBytes) {
      throw std::invalid_argument("cursor key shorter than " + std::to_string(kMinKeyBytes) +
                                  " bytes");
    }
    if (key.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
      throw std::invalid_argument("cursor key too long");
    }
  }
  if (ttl_ <= std::chrono::seconds::zero()) {
    throw std::invalid_argument("cursor ttl must be positive");
  }
  if (!hmac_sha256(keys_.back(), "probe")) {
    throw std::runtime_error("the crypto library cannot compute HMAC-SHA256");
  }
}

CursorCodec CursorCodec::with_random_key(std::chrono::seconds ttl) {
  std::array<unsigned char, kRandomKeyBytes> key{};
  if (!random_bytes(key)) {
    throw std::runtime_error("the system could not generate a random cursor key");
  }
  return CursorCodec({std::string(key.begin(), key.end())}, ttl);
}

std::string CursorCodec::encode(const CursorPayload& payload) const {
  std::string bytes;
  bytes.reserve(48 + payload.path.size() + kTagBytes);
  bytes += static_cast<char>(kVersion);
  bytes += static_cast<char>(payload.kind);
  append_u64(bytes, payload.entry ^ entry_salt_);
  append_varint(bytes, payload.part);
  append_string(bytes, payload.path);
  append_varint(bytes, payload.offset);
  append_varint(bytes, payload.limit);
  append_varint(bytes, payload.fields.size());
  for (const auto& field : payload.fields) append_string(bytes, field);
  append_string(bytes, payload.query);
  append_varint(bytes, zigzag(payload.issued_at));

  // The constructor proved HMAC works, so a failure here is the library running out of memory.
  const std::optional<Mac> mac = hmac_sha256(keys_.back(), bytes);
  if (!mac) throw std::bad_alloc();
  bytes.append(reinterpret_cast<const char*>(mac->data()), kTagBytes);
  return letter_hex_encode(bytes);
}

Result<CursorPayload> CursorCodec::decode(std::string_view cursor,
                                          WallClock::time_point now) const {
  if (cursor.size() > kMaxCursorChars) return make_error_code(Error::kCursorMalformed);
  const auto bytes = letter_hex_decode(cursor);
  if (!bytes || bytes->size() < 1 + kMinPayloadBytes + kTagBytes) {
    return make_error_code(Error::kCursorMalformed);
  }
  if (static_cast<std::uint8_t>((*bytes)[0]) != kVersion) {
    return make_error_code(Error::kCursorMalformed);
  }

  const std::string_view signed_part =
      std::string_view(*bytes).substr(0, bytes->size() - kTagBytes);
  const std::span<const unsigned char> received(
      reinterpret_cast<const unsigned char*>(bytes->data() + signed_part.size()), kTagBytes);
  bool authentic = false;
  for (const auto& key : keys_) {
    // A failed computation counts as a mismatch: when in doubt, never accept.
    const std::optional<Mac> expected = hmac_sha256(key, signed_part);
    if (expected && macs_equal(std::span(*expected).first(kTagBytes), received)) {
      authentic = true;
      break;
    }
  }
  if (!authentic) return make_error_code(Error::kCursorForged);

  auto payload = parse_payload(signed_part.substr(1));
  if (!payload) return make_error_code(Error::kCursorMalformed);
  payload->entry ^= entry_salt_;

  const std::int64_t now_seconds =
      std::chrono::floor<std::chrono::seconds>(now.time_since_epoch()).count();
  if (is_expired(payload->issued_at, now_seconds, ttl_.count())) {
    return make_error_code(Error::kCursorExpired);
  }
  return std::move(*payload);
}

}  // namespace ctxguard::cursor
