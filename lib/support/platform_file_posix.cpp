// The file layer on Linux and macOS (support/platform_file.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "support/platform_file.hpp"

namespace ctxguard::platform {

struct FileOpener {
  static File adopt(int fd) { return File(fd); }
};

namespace {

namespace fs = std::filesystem;

constexpr mode_t kOwnerOnly = 0600;
// Bounded writes: Linux moves at most about 2 GB per write() anyway.
constexpr std::size_t kMaxWriteBytes = std::size_t{1} << 30;

std::error_code errno_code(int error = errno) { return {error, std::system_category()}; }

int descriptor(std::intptr_t handle) { return static_cast<int>(handle); }

Result<File> open_file(const fs::path& path, int flags) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, kOwnerOnly);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno_code();
  return FileOpener::adopt(fd);
}

std::int64_t nanoseconds(const timespec& time) {
  return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

}  // namespace

File::~File() {
  if (is_open()) ::close(descriptor(handle_));
}

File::File(File&& other) noexcept : handle_(std::exchange(other.handle_, -1)) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    if (is_open()) ::close(descriptor(handle_));
    handle_ = std::exchange(other.handle_, -1);
  }
  return *this;
}

bool File::is_open() const { return handle_ >= 0; }

std::error_code File::write(std::string_view content) {
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t written = ::write(descriptor(handle_), data, std::min(left, kMaxWriteBytes));
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno_code();
    }
    // write() of a non-zero count returning 0 would otherwise loop forever.
    if (written == 0) return errno_code(EIO);
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  return {};
}

std::error_code File::flush_to_disk() {
  return ::fsync(descriptor(handle_)) == 0 ? std::error_code{} : errno_code();
}

std::error_code File::restrict_to_owner() {
  // The mode given to open() is reduced by the umask; one like 0277 would otherwise leave the
  // owner unable to write, or read, the file.
  return ::fchmod(descriptor(handle_), kOwnerOnly) == 0 ? std::error_code{} : errno_code();
}

std::error_code File::copy_permissions_of(const fs::path& like) {
  struct stat original {};
  if (::stat(like.c_str(), &original) != 0) return errno_code();
  if (::fchmod(descriptor(handle_), original.st_mode & 07777) != 0) return errno_code();
  // Only root can give a file away; for anyone else the file already is theirs.
  (void)!::fchown(descriptor(handle_), original.st_uid, original.st_gid);
  return {};
}

std::error_code File::close() {
  if (!is_open()) return {};
  const int fd = descriptor(std::exchange(handle_, -1));
  // Linux releases the descriptor even when close() reports EINTR, so it is not retried (that
  // could close a descriptor another thread just opened) and not a failure.
  return ::close(fd) == 0 || errno == EINTR ? std::error_code{} : errno_code();
}

Result<File> create_exclusive(const fs::path& path) {
  return open_file(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW);
}

Result<File> open_append(const fs::path& path) {
  return open_file(path, O_WRONLY | O_APPEND | O_CREAT);
}

Result<File> create_temporary(const fs::path& stem, fs::path& created) {
  std::string name = stem.string() + "-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return errno_code();
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  created = name;
  return FileOpener::adopt(fd);
}

std::error_code replace_file(const fs::path& from, const fs::path& to) {
  return ::rename(from.c_str(), to.c_str()) == 0 ? std::error_code{} : errno_code();
}

std::error_code remove_file(const fs::path& path) {
  return ::unlink(path.c_str()) == 0 ? std::error_code{} : errno_code();
}

FileStamp file_stamp(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
#if defined(__APPLE__)
  const timespec modified = info.st_mtimespec;
  const timespec changed = info.st_ctimespec;
#else
  const timespec modified = info.st_mtim;
  const timespec changed = info.st_ctim;
#endif
  return FileStamp{.exists = true,
                   .device = static_cast<std::uint64_t>(info.st_dev),
                   .file = static_cast<std::uint64_t>(info.st_ino),
                   .size = static_cast<std::uint64_t>(info.st_size),
                   .modified_ns = nanoseconds(modified),
                   .changed_ns = nanoseconds(changed)};
}

std::tm utc_calendar(std::time_t time) {
  std::tm utc{};
  ::gmtime_r(&time, &utc);
  return utc;
}

std::int64_t process_id() { return ::getpid(); }

namespace {

// What the system itself says, where it says it.
std::optional<fs::path> path_from_system() {
  std::error_code error;
#if defined(__APPLE__)
  std::uint32_t size = 0;
  _NSGetExecutablePath(nullptr, &size);  // asks for the size
  std::vector<char> buffer(size + 1, '\0');
  if (_NSGetExecutablePath(buffer.data(), &size) != 0) return std::nullopt;
  fs::path path = fs::canonical(buffer.data(), error);
#elif defined(__linux__) && !defined(CTXGUARD_PORTABLE_POSIX)
  fs::path path = fs::read_symlink("/proc/self/exe", error);
#else
  fs::path path;
  error = std::make_error_code(std::errc::function_not_supported);
#endif
  if (error) return std::nullopt;
  return path;
}

// argv[0] as a shell resolved it: a path as given, or the first executable of that name on PATH.
std::optional<fs::path> path_from_argv0(std::string_view argv0) {
  if (argv0.empty()) return std::nullopt;
  std::error_code error;
  if (argv0.find('/') != std::string_view::npos) {
    fs::path path = fs::canonical(fs::path(argv0), error);
    if (error) return std::nullopt;
    return path;
  }
  const char* search = std::getenv("PATH");
  std::string_view dirs = search != nullptr ? search : "";
  while (true) {
    const std::size_t end = dirs.find(':');
    const std::string_view dir = dirs.substr(0, end);
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / argv0;
    if (::access(candidate.c_str(), X_OK) == 0) {
      fs::path path = fs::canonical(candidate, error);
      if (!error) return path;
    }
    if (end == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(end + 1);
  }
}

}  // namespace

std::optional<fs::path> executable_path(std::string_view argv0) {
  if (auto path = path_from_system()) return path;
  return path_from_argv0(argv0);
}

std::vector<std::string> utf8_arguments(int argc, char** argv) { return {argv, argv + argc}; }

void unset_environment(const char* name) { ::unsetenv(name); }

}  // namespace ctxguard::platform
