#pragma once
// Reading a whole file people keep (a configuration) into memory, bounded: a wrong path naming a
// huge file is refused instead of read.

#include <cstddef>
#include <optional>
#include <string>

namespace ctxguard {

// Reads the file at `path` into `text`. nullopt when it is read; else why not, as the end of a
// message that starts with the path: "cannot read it (REASON)", or past `max_bytes`, "larger
// than N bytes: is this the right file?".
std::optional<std::string> read_file_text(const std::string& path, std::size_t max_bytes,
                                          std::string& text);

}  // namespace ctxguard
