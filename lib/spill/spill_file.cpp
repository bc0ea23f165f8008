#include "spill/spill_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include <spdlog/spdlog.h>

#include "support/write_all.hpp"

namespace ctxguard::spill {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxNameBytes = 48;
constexpr mode_t kFileMode = 0600;

std::error_code errno_code(int error) { return {error, std::system_category()}; }

// Keeps the name a single, shell-safe path component whatever the tool name or hint holds.
std::string sanitize(std::string_view text, std::size_t max_bytes) {
  std::string out(text.substr(0, max_bytes));
  for (char& c : out) {
    const bool safe = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-';
    if (!safe) c = '_';
  }
  return out;
}

// O_EXCL (with O_NOFOLLOW) never opens anything that exists, a symlink planted at the name
// included, so a file is only ever created, never replaced or followed.
int create_exclusive(const fs::path& path) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kFileMode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// Linux releases the descriptor even when close() reports EINTR, so it is not retried (that
// could close a descriptor another thread just opened) and not a failure.
int close_checked(int fd) { return ::close(fd) == 0 || errno == EINTR ? 0 : errno; }

[[noreturn]] void fail(const fs::path& dir, const std::string& reason) {
  throw std::runtime_error("spill directory " + dir.string() + " " + reason);
}

}  // namespace

SpillFile::~SpillFile() { ::unlink(path_.c_str()); }

SpillDirectory::SpillDirectory(fs::path dir) {
  // The model reads the path from the answer, from a working directory that may not be ours.
  std::error_code absolute_error;
  dir_ = fs::absolute(dir, absolute_error);
  if (absolute_error) dir_ = std::move(dir);

  struct stat info {};
  if (::stat(dir_.c_str(), &info) != 0) {
    const int error = errno;
    fail(dir_,
         error == ENOENT ? "does not exist" : "cannot be read: " + errno_code(error).message());
  }
  if (!S_ISDIR(info.st_mode)) fail(dir_, "is not a directory");

  // Access rules (ACLs, read-only mounts, SELinux) are only certain once a file is created.
  const fs::path probe = dir_ / ("ctxguard-" + std::to_string(::getpid()) + "-probe");
  const int fd = create_exclusive(probe);
  if (fd < 0) {
    fail(dir_, "is not writable (creating " + probe.filename().string() +
                   " failed: " + errno_code(errno).message() + ")");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

Result<std::shared_ptr<SpillFile>> SpillDirectory::write(std::string_view name_hint,
                                                         std::string_view extension,
                                                         std::string_view content) {
  std::string name = "ctxguard-" + std::to_string(::getpid()) + "-" + std::to_string(++sequence_) +
                     "-" + sanitize(name_hint, kMaxNameBytes) + "." +
                     sanitize(extension, kMaxNameBytes);
  fs::path path = dir_ / name;

  const int fd = create_exclusive(path);
  // Nothing to remove: the name may belong to a file that is not ours (EEXIST).
  if (fd < 0) return errno_code(errno);

  // From here the SpillFile owns the new file: returning an error destroys it, which unlinks.
  std::shared_ptr<SpillFile> file;
  try {
    file.reset(new SpillFile(path));
  } catch (...) {
    ::close(fd);
    ::unlink(path.c_str());
    throw;
  }

  // The mode given to open() is reduced by the umask; 0600 must hold whatever the umask (one
  // like 0277 would otherwise leave the owner unable to write, or read, the file).
  int error = ::fchmod(fd, kFileMode) == 0 ? 0 : errno;
  if (error == 0) error = write_all(fd, content);
  const int close_error = close_checked(fd);
  if (error == 0) error = close_error;
  if (error != 0) return errno_code(error);
  return file;
}

pipeline::ResultPipeline::SpillWriter pipeline_writer(SpillDirectory& dir) {
  return [&dir](std::string_view tool, std::string_view extension,
                std::string_view content) -> std::optional<pipeline::SpilledFile> {
    auto file = dir.write(tool, extension, content);
    if (!file) {
      spdlog::warn("cannot write a spill file in {}: {}", dir.dir().string(),
                   file.error().message());
      return std::nullopt;
    }
    std::string path = (*file)->path().string();
    return pipeline::SpilledFile{std::shared_ptr<const void>(std::move(*file)), std::move(path)};
  };
}

}  // namespace ctxguard::spill
