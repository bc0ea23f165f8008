#include "cursor/mac.hpp"

namespace ctxguard::cursor {

bool macs_equal(const Mac& expected, std::span<const unsigned char, kMacBytes> received) {
  // volatile: the compiler may not stop at the first difference it could prove.
  volatile unsigned char difference = 0;
  for (std::size_t i = 0; i < kMacBytes; ++i) {
    difference = static_cast<unsigned char>(difference | (expected[i] ^ received[i]));
  }
  return difference == 0;
}

}  // namespace ctxguard::cursor
