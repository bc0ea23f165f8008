#pragma once
// Reading a whole file people keep (a configuration) into memory, bounded: a wrong path naming a
// huge file is refused instead of read.

#include <cstddef>
#include <string>

#include "support/error.hpp"

namespace ctxguard {

// The whole text of the file at `path`; or why not, naming the path: "PATH: cannot read it
// (REASON)", or past `max_bytes`, "PATH: larger than N bytes: is this the right file?".
Checked<std::string> read_file_text(const std::string& path, std::size_t max_bytes);

}  // namespace ctxguard
