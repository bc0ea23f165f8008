#include "support/file_text.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace ctxguard {

Checked<std::string> read_file_text(const std::string& path, std::size_t max_bytes) {
  const auto cannot_read = [&path] {
    return Problem{fmt::format("{}: cannot read it ({})", path, std::strerror(errno))};
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) return cannot_read();
  std::string text;
  std::array<char, 8192> buffer{};
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      return Problem{
          fmt::format("{}: larger than {} bytes: is this the right file?", path, max_bytes)};
    }
  }
  if (in.bad()) return cannot_read();
  return {boost::system::in_place_value, std::move(text)};
}

}  // namespace ctxguard
