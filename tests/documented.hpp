#pragma once
// What docs/ says, for the tests that hold the code to it (docs/protocol.md is the wire contract:
// a definition, a table or a message written there is checked against the one the code makes).

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "support/file_text.hpp"

namespace ctxguard::testing {

// The text of docs/NAME.
inline std::string documented(std::string_view name) {
  auto text =
      read_file_text(std::string(CTXGUARD_SOURCE_DIR "/docs/") + std::string(name), 1 << 22);
  INFO((text ? "" : text.error().message));
  REQUIRE(text.has_value());
  return *std::move(text);
}

// The section of `text` from the heading line `heading` to the next heading of its level or
// above (a copy: `text` is often a temporary).
inline std::string section_of(std::string_view text, std::string_view heading) {
  const std::size_t start = text.find(heading);
  INFO(heading);
  REQUIRE(start != std::string_view::npos);
  const std::size_t level = heading.find_first_not_of('#');
  std::size_t end = start + heading.size();
  while ((end = text.find("\n#", end)) != std::string_view::npos) {
    const std::size_t hashes = text.find_first_not_of('#', end + 1) - (end + 1);
    if (hashes <= level) break;
    end += 2;
  }
  return std::string(text.substr(start, end == std::string_view::npos ? text.npos : end - start));
}

}  // namespace ctxguard::testing
