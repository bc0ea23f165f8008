// The cursor MAC on Linux and macOS: OpenSSL's libcrypto.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <limits>

#include "cursor/mac.hpp"

namespace ctxguard::cursor {

std::optional<Mac> hmac_sha256(std::string_view key, std::string_view data) {
  if (key.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) return std::nullopt;
  Mac mac{};
  unsigned int length = 0;
  const unsigned char* done =
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac.data(), &length);
  if (done == nullptr || length != kMacBytes) return std::nullopt;
  return mac;
}

bool random_bytes(std::span<unsigned char> out) {
  if (out.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) return false;
  return RAND_bytes(out.data(), static_cast<int>(out.size())) == 1;
}

}  // namespace ctxguard::cursor
