#pragma once
// Reading a whole file people keep (a configuration) into memory, bounded: a wrong path naming a
// huge file is refused instead of read.

#include <cstddef>
#include <string>

#include "support/error.hpp"

namespace ctxguard {

// The whole text of the file at `path`; or why not, as the end of a message that starts with the
// path: "cannot read it (REASON)", or past `max_bytes`, "larger than N bytes: is this the right
// file?".
Checked<std::string> read_file_text(const std::string& path, std::size_t max_bytes);

}  // namespace ctxguard
