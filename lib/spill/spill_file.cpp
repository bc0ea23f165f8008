#include "spill/spill_file.hpp"

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include <spdlog/spdlog.h>

#include "support/platform_file.hpp"

namespace ctxguard::spill {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxNameBytes = 48;

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

[[noreturn]] void fail(const fs::path& dir, const std::string& reason) {
  throw std::runtime_error("spill directory " + dir.string() + " " + reason);
}

}  // namespace

SpillFile::~SpillFile() { platform::remove_file(path_); }

SpillDirectory::SpillDirectory(fs::path dir) {
  // The model reads the path from the answer, from a working directory that may not be ours.
  std::error_code absolute_error;
  dir_ = fs::absolute(dir, absolute_error);
  if (absolute_error) dir_ = std::move(dir);

  std::error_code status_error;
  const fs::file_status status = fs::status(dir_, status_error);
  if (status.type() == fs::file_type::not_found) fail(dir_, "does not exist");
  if (status_error) fail(dir_, "cannot be read: " + status_error.message());
  if (status.type() != fs::file_type::directory) fail(dir_, "is not a directory");

  // Access rules (ACLs, read-only mounts, SELinux) are only certain once a file is created.
  const fs::path probe = dir_ / ("ctxguard-" + std::to_string(platform::process_id()) + "-probe");
  auto file = platform::create_exclusive(probe);
  if (!file) {
    fail(dir_, "is not writable (creating " + probe.filename().string() +
                   " failed: " + file.error().message() + ")");
  }
  file->close();
  platform::remove_file(probe);
}

Result<std::shared_ptr<SpillFile>> SpillDirectory::write(std::string_view name_hint,
                                                         std::string_view extension,
                                                         std::string_view content) {
  std::string name = "ctxguard-" + std::to_string(platform::process_id()) + "-" +
                     std::to_string(++sequence_) + "-" + sanitize(name_hint, kMaxNameBytes) + "." +
                     sanitize(extension, kMaxNameBytes);
  fs::path path = dir_ / name;

  // Never replaces or follows what is there: the name may belong to a file that is not ours.
  auto created = platform::create_exclusive(path);
  if (!created) return created.error();

  // From here the SpillFile owns the new file: returning an error destroys it, which removes it.
  std::shared_ptr<SpillFile> file;
  try {
    file.reset(new SpillFile(path));
  } catch (...) {
    created->close();
    platform::remove_file(path);
    throw;
  }

  std::error_code error = created->restrict_to_owner();
  if (!error) error = created->write(content);
  const std::error_code close_error = created->close();
  if (!error) error = close_error;
  if (error) return error;
  return file;
}

}  // namespace ctxguard::spill
