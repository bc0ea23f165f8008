#pragma once
// The cryptography cursors need, and nothing more: HMAC-SHA256, random bytes and a comparison
// whose time does not depend on where two MACs differ. One implementation per platform, chosen
// at build time (docs/architecture.md, Platforms): OpenSSL's libcrypto on Linux and macOS,
// Windows' own CNG (bcrypt.dll) on Windows, so the Windows binary carries no OpenSSL.
//
// Nothing here throws; a failure is the library failing (out of memory, no entropy source).

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace ctxguard::cursor {

inline constexpr std::size_t kMacBytes = 32;  // SHA-256, untruncated
using Mac = std::array<unsigned char, kMacBytes>;

// HMAC-SHA256 of `data` under `key` (RFC 2104, FIPS 180-4); nullopt when the library fails.
std::optional<Mac> hmac_sha256(std::string_view key, std::string_view data);

// Fills `out` from the platform's CSPRNG; false when it cannot.
bool random_bytes(std::span<unsigned char> out);

// True when the two are equal, looking at every byte whatever the first difference (a MAC or a
// truncated one; spans of different sizes are never equal).
bool macs_equal(std::span<const unsigned char> expected, std::span<const unsigned char> received);

}  // namespace ctxguard::cursor
