#pragma once
// The file and process facts whose spelling differs by platform, behind one interface: POSIX in
// platform_file_posix.cpp (Linux, macOS), Windows in platform_file_win32.cpp, chosen at build
// time (docs/architecture.md, Platforms). Nothing else in lib/ outside proxy/ includes a
// platform header.
//
// Paths are std::filesystem::path, so Windows gets its UTF-16 names; the Windows binary also
// runs with UTF-8 as its code page (app/windows/ctxguard.manifest), so a path built from a
// UTF-8 std::string names the same file everywhere.
//
// Errors are std::error_code values in the system category (errno, or GetLastError()); nothing
// here throws but std::bad_alloc.

#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "support/error.hpp"

namespace ctxguard::platform {

// An open file, written only; closed when destroyed. Binary everywhere: what is written is what
// the file holds (no CRLF translation on Windows).
class File {
 public:
  File() = default;
  ~File();
  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  bool is_open() const;
  // All of `content`, resuming after interruptions and short writes.
  std::error_code write(std::string_view content);
  // Until the data is on the disk (fsync, FlushFileBuffers).
  std::error_code flush_to_disk();
  // Owner-only (0600) where files have modes, whatever the umask.
  std::error_code restrict_to_owner();
  // The mode and owner of `like` where files have them (root wrapping a user's file keeps the
  // file the user's); the owner is best effort. Nothing on Windows, where files have ACLs that
  // the directory gives.
  std::error_code copy_permissions_of(const std::filesystem::path& like);
  // Closes now and says whether the last writes failed on close.
  std::error_code close();

 private:
  friend struct FileOpener;
  explicit File(std::intptr_t handle) : handle_(handle) {}
  std::intptr_t handle_ = -1;  // a descriptor, or a Windows HANDLE
};

// A new file that did not exist: never replaces a file and never follows a link planted at the
// name (O_CREAT|O_EXCL|O_NOFOLLOW; CREATE_NEW). Owner-only (0600), not inherited by children.
Result<File> create_exclusive(const std::filesystem::path& path);
// Opened for appending, created owner-only (0600) when missing; not inherited by children.
Result<File> open_append(const std::filesystem::path& path);
// A new file named `stem` plus a unique suffix, in the directory of `stem` (mkstemp); `created`
// gets its path.
Result<File> create_temporary(const std::filesystem::path& stem, std::filesystem::path& created);

// Renames `from` over `to` in one step, replacing `to` if it exists (rename(2);
// MoveFileExW with MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH).
std::error_code replace_file(const std::filesystem::path& from, const std::filesystem::path& to);
// Removes a file; an error when it cannot (a missing file is an error too).
std::error_code remove_file(const std::filesystem::path& path);

// What a poll can see of a file: equal stamps mean an unchanged file. `exists` is false when
// the file cannot be looked at.
struct FileStamp {
  bool exists = false;
  std::uint64_t device = 0;  // with `file`: which file the name points at now
  std::uint64_t file = 0;
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;
  std::int64_t changed_ns = 0;  // status change where there is one (a chmod, a rename over it)
  bool operator==(const FileStamp&) const = default;
};
FileStamp file_stamp(const std::filesystem::path& path);

// The calendar time in UTC of `time` (gmtime_r; gmtime_s).
std::tm utc_calendar(std::time_t time);

// This process's id.
std::int64_t process_id();

// The running executable's own absolute path: from the system where it says (/proc/self/exe,
// _NSGetExecutablePath, GetModuleFileNameW), else from `argv0` as a shell found it (a path, or
// a name looked up on PATH). nullopt when neither says.
std::optional<std::filesystem::path> executable_path(std::string_view argv0);

// The command line as UTF-8 strings: `argv` itself on POSIX; on Windows the UTF-16 command line
// (GetCommandLineW) converted, so that no argument passes through the ANSI code page.
std::vector<std::string> utf8_arguments(int argc, char** argv);

// Removes `name` from this process's environment, so children do not inherit it.
void unset_environment(const char* name);

}  // namespace ctxguard::platform
