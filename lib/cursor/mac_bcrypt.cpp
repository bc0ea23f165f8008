// The cursor MAC on Windows: CNG (bcrypt.dll), part of every Windows since Vista. Its MACs are
// byte-identical to OpenSSL's (the RFC 4231 vectors in tests/cursor/mac_test.cpp), and it keeps
// OpenSSL, a 3.5 MB static library, out of the Windows binary.
#include <windows.h>
// windows.h first: bcrypt.h uses its types.
#include <bcrypt.h>

#include <limits>

#include "cursor/mac.hpp"

namespace ctxguard::cursor {
namespace {

bool succeeded(NTSTATUS status) { return status >= 0; }

// The HMAC-SHA256 provider, opened once: opening it is the costly step (a registry lookup).
BCRYPT_ALG_HANDLE hmac_provider() {
  static const BCRYPT_ALG_HANDLE provider = [] {
    BCRYPT_ALG_HANDLE handle = nullptr;
    if (!succeeded(BCryptOpenAlgorithmProvider(&handle, BCRYPT_SHA256_ALGORITHM, nullptr,
                                               BCRYPT_ALG_HANDLE_HMAC_FLAG))) {
      handle = nullptr;
    }
    return handle;
  }();
  return provider;
}

constexpr auto kMaxUlong = static_cast<std::size_t>(std::numeric_limits<ULONG>::max());

}  // namespace

std::optional<Mac> hmac_sha256(std::string_view key, std::string_view data) {
  const BCRYPT_ALG_HANDLE provider = hmac_provider();
  if (provider == nullptr || key.size() > kMaxUlong || data.size() > kMaxUlong) {
    return std::nullopt;
  }
  // BCRYPT_HASH_REUSABLE_FLAG is not needed: one hash object per MAC, freed at once.
  BCRYPT_HASH_HANDLE hash = nullptr;
  auto* key_bytes = reinterpret_cast<PUCHAR>(const_cast<char*>(key.data()));
  if (!succeeded(BCryptCreateHash(provider, &hash, nullptr, 0, key_bytes,
                                  static_cast<ULONG>(key.size()), 0))) {
    return std::nullopt;
  }
  Mac mac{};
  auto* data_bytes = reinterpret_cast<PUCHAR>(const_cast<char*>(data.data()));
  const bool done =
      succeeded(BCryptHashData(hash, data_bytes, static_cast<ULONG>(data.size()), 0)) &&
      succeeded(BCryptFinishHash(hash, mac.data(), static_cast<ULONG>(mac.size()), 0));
  BCryptDestroyHash(hash);
  if (!done) return std::nullopt;
  return mac;
}

bool random_bytes(std::span<unsigned char> out) {
  if (out.size() > kMaxUlong) return false;
  return succeeded(BCryptGenRandom(nullptr, out.data(), static_cast<ULONG>(out.size()),
                                   BCRYPT_USE_SYSTEM_PREFERRED_RNG));
}

}  // namespace ctxguard::cursor
