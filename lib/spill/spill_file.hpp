#pragma once
// Spill files (--spill-dir): the full original answer written where a model that can read files
// (Claude Code) can grep or jq it instead of paging. A SpillFile owns its file: the file is
// created with mode 0600 (O_CREAT | O_EXCL | O_NOFOLLOW, never replacing anything) and removed
// when the SpillFile is destroyed, i.e. when the cache entry holding it expires or is evicted.
// Only this module touches the file system for it.

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "support/error.hpp"

namespace ctxguard::spill {

class SpillFile {
 public:
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;
  ~SpillFile();  // removes the file (errors ignored: it may be gone already)

  const std::filesystem::path& path() const { return path_; }

 private:
  friend class SpillDirectory;
  explicit SpillFile(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

class SpillDirectory {
 public:
  // Throws std::runtime_error with a clear message when `dir` does not exist, is not a
  // directory, or is not writable (checked by creating and removing a probe file): start-up only.
  explicit SpillDirectory(std::filesystem::path dir);

  // Writes `content` to a new file in the directory named
  // "ctxguard-<pid>-<sequence>-<name>.<extension>", where `name` is `name_hint` with every byte
  // outside [A-Za-z0-9_-] replaced by '_' and cut to 48 bytes, and `extension` is "json" or
  // "txt" as given. The whole content is written (short writes retried) before the file is
  // returned; on any failure the partial file is removed and the errno comes back as the error.
  Result<std::shared_ptr<SpillFile>> write(std::string_view name_hint, std::string_view extension,
                                           std::string_view content);

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  unsigned long long sequence_ = 0;
};

}  // namespace ctxguard::spill
