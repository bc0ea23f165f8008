#pragma once
// Writing a whole buffer to a file descriptor, as the file writers (spill files, telemetry
// records) need it.

#include <string_view>

namespace ctxguard {

// Writes all of `content` to `fd`, resuming after interruptions and short writes; 0 or an errno
// (EIO when write() makes no progress).
int write_all(int fd, std::string_view content);

}  // namespace ctxguard
