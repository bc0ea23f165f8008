#include "cursor/mac.hpp"

namespace ctxguard::cursor {

bool macs_equal(std::span<const unsigned char> expected, std::span<const unsigned char> received) {
  if (expected.size() != received.size()) return false;
  // volatile: the compiler may not stop at the first difference it could prove.
  volatile unsigned char difference = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    difference = static_cast<unsigned char>(difference | (expected[i] ^ received[i]));
  }
  return difference == 0;
}

}  // namespace ctxguard::cursor
