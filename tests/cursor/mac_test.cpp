#include "cursor/mac.hpp"

#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

namespace {

using ctxguard::cursor::hmac_sha256;
using ctxguard::cursor::kMacBytes;
using ctxguard::cursor::Mac;
using ctxguard::cursor::macs_equal;

std::string hex(const Mac& mac) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : mac) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0x0f];
  }
  return out;
}

std::string mac_hex(const std::string& key, const std::string& data) {
  const auto mac = hmac_sha256(key, data);
  REQUIRE(mac);
  return hex(*mac);
}

}  // namespace

// RFC 4231, section 4: the same vectors every platform's implementation must give.
TEST_CASE("HMAC-SHA256 gives the RFC 4231 test vectors", "[mac]") {
  CHECK(mac_hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(mac_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(mac_hex(std::string(20, '\xaa'), std::string(50, '\xdd')) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  // A key longer than the block size is hashed first.
  CHECK(
      mac_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First") ==
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("HMAC-SHA256 takes an empty key and empty data", "[mac]") {
  CHECK(mac_hex("", "") == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST_CASE("macs_equal compares every byte", "[mac]") {
  const Mac mac = *hmac_sha256("key", "data");
  CHECK(macs_equal(mac, mac));
  for (std::size_t i : {std::size_t{0}, kMacBytes / 2, kMacBytes - 1}) {
    Mac other = mac;
    other[i] ^= 0x01;
    CHECK_FALSE(macs_equal(mac, other));
  }
}

TEST_CASE("random_bytes fills the buffer with fresh bytes", "[mac]") {
  Mac first{};
  Mac second{};
  REQUIRE(ctxguard::cursor::random_bytes(first));
  REQUIRE(ctxguard::cursor::random_bytes(second));
  // 2^-256 of a false failure.
  CHECK(first != second);
  CHECK(std::any_of(first.begin(), first.end(), [](unsigned char byte) { return byte != 0; }));
}
