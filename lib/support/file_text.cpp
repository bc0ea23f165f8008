#include "support/file_text.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace ctxguard {

std::optional<std::string> read_file_text(const std::string& path, std::size_t max_bytes,
                                          std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fmt::format("cannot read it ({})", std::strerror(errno));
  text.clear();
  std::array<char, 8192> buffer{};
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      return fmt::format("larger than {} bytes: is this the right file?", max_bytes);
    }
  }
  if (in.bad()) return fmt::format("cannot read it ({})", std::strerror(errno));
  return std::nullopt;
}

}  // namespace ctxguard
