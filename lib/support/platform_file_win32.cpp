// The file layer on Windows (support/platform_file.hpp). Files are opened with CreateFileW
// (UTF-16 names, binary, not inheritable), so no C runtime text mode stands in between.
#include <windows.h>
// windows.h first: shellapi.h needs its types.
#include <shellapi.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>

#include "support/platform_file.hpp"
#include "support/utf16.hpp"

namespace ctxguard::platform {

struct FileOpener {
  static File adopt(HANDLE handle) { return File(reinterpret_cast<std::intptr_t>(handle)); }
};

namespace {

namespace fs = std::filesystem;

// WriteFile takes a DWORD count.
constexpr std::size_t kMaxWriteBytes = std::size_t{1} << 30;

std::error_code last_error() {
  return {static_cast<int>(::GetLastError()), std::system_category()};
}

HANDLE native(std::intptr_t handle) { return reinterpret_cast<HANDLE>(handle); }

// Deleting and renaming stay possible while the file is open, as on POSIX: a spill file may be
// removed while the model's tool still reads it.
constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

Result<File> create_file(const fs::path& path, DWORD access, DWORD disposition, DWORD flags) {
  // lpSecurityAttributes null: the handle is not inherited by child processes.
  const HANDLE handle = ::CreateFileW(path.c_str(), access, kShareAll, nullptr, disposition,
                                      FILE_ATTRIBUTE_NORMAL | flags, nullptr);
  if (handle == INVALID_HANDLE_VALUE) return last_error();
  return FileOpener::adopt(handle);
}

std::int64_t filetime_ns(const FILETIME& time) {
  const std::uint64_t ticks =
      (static_cast<std::uint64_t>(time.dwHighDateTime) << 32) | time.dwLowDateTime;
  return static_cast<std::int64_t>(ticks) * 100;  // 100 ns ticks since 1601: only compared
}

}  // namespace

File::~File() {
  if (is_open()) ::CloseHandle(native(handle_));
}

File::File(File&& other) noexcept : handle_(std::exchange(other.handle_, -1)) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    if (is_open()) ::CloseHandle(native(handle_));
    handle_ = std::exchange(other.handle_, -1);
  }
  return *this;
}

bool File::is_open() const { return handle_ != -1; }

std::error_code File::write(std::string_view content) {
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    DWORD written = 0;
    const auto chunk = static_cast<DWORD>(std::min(left, kMaxWriteBytes));
    if (!::WriteFile(native(handle_), data, chunk, &written, nullptr)) return last_error();
    if (written == 0) return std::make_error_code(std::errc::io_error);
    data += written;
    left -= written;
  }
  return {};
}

std::error_code File::flush_to_disk() {
  return ::FlushFileBuffers(native(handle_)) ? std::error_code{} : last_error();
}

// Windows files carry ACLs inherited from their directory (a user's profile is theirs alone).
std::error_code File::restrict_to_owner() { return {}; }
std::error_code File::copy_permissions_of(const fs::path&) { return {}; }

std::error_code File::close() {
  if (!is_open()) return {};
  return ::CloseHandle(native(std::exchange(handle_, -1))) ? std::error_code{} : last_error();
}

Result<File> create_exclusive(const fs::path& path) {
  // CREATE_NEW fails on any existing name; FILE_FLAG_OPEN_REPARSE_POINT does not follow a link.
  return create_file(path, GENERIC_WRITE, CREATE_NEW, FILE_FLAG_OPEN_REPARSE_POINT);
}

Result<File> open_append(const fs::path& path) {
  // FILE_APPEND_DATA without FILE_WRITE_DATA: every write goes to the end, as O_APPEND.
  return create_file(path, FILE_APPEND_DATA | SYNCHRONIZE, OPEN_ALWAYS, 0);
}

Result<File> create_temporary(const fs::path& stem, fs::path& created) {
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path candidate = stem;
    candidate += L"-" + std::to_wstring(random() % 1'000'000'000u);
    auto file = create_exclusive(candidate);
    if (file) {
      created = std::move(candidate);
      return file;
    }
    if (file.error().value() != ERROR_FILE_EXISTS) return file.error();
  }
  return std::make_error_code(std::errc::file_exists);
}

std::error_code replace_file(const fs::path& from, const fs::path& to) {
  const BOOL moved =
      ::MoveFileExW(from.c_str(), to.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
  return moved ? std::error_code{} : last_error();
}

std::error_code remove_file(const fs::path& path) {
  return ::DeleteFileW(path.c_str()) ? std::error_code{} : last_error();
}

FileStamp file_stamp(const fs::path& path) {
  // Opened for no access at all: only its attributes are read, and no writer is disturbed.
  const HANDLE handle = ::CreateFileW(path.c_str(), 0, kShareAll, nullptr, OPEN_EXISTING,
                                      FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (handle == INVALID_HANDLE_VALUE) return {};
  BY_HANDLE_FILE_INFORMATION info{};
  const BOOL read = ::GetFileInformationByHandle(handle, &info);
  ::CloseHandle(handle);
  if (!read) return {};
  return FileStamp{
      .exists = true,
      .device = info.dwVolumeSerialNumber,
      .file = (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow,
      .size = (static_cast<std::uint64_t>(info.nFileSizeHigh) << 32) | info.nFileSizeLow,
      .modified_ns = filetime_ns(info.ftLastWriteTime),
      .changed_ns = filetime_ns(info.ftCreationTime)};
}

std::tm utc_calendar(std::time_t time) {
  std::tm utc{};
  ::gmtime_s(&utc, &time);
  return utc;
}

std::int64_t process_id() { return static_cast<std::int64_t>(::GetCurrentProcessId()); }

std::optional<fs::path> executable_path(std::string_view argv0) {
  std::wstring buffer(MAX_PATH, L'\0');
  while (true) {
    const DWORD length =
        ::GetModuleFileNameW(nullptr, buffer.data(), static_cast<DWORD>(buffer.size()));
    if (length == 0) break;
    if (length < buffer.size()) {
      buffer.resize(length);
      return fs::path(buffer);
    }
    buffer.resize(buffer.size() * 2);  // truncated: a long path
  }
  std::error_code error;
  fs::path path = fs::absolute(fs::path(argv0), error);
  if (argv0.empty() || error) return std::nullopt;
  return path;
}

std::vector<std::string> utf8_arguments(int argc, char** argv) {
  int count = 0;
  LPWSTR* wide = ::CommandLineToArgvW(::GetCommandLineW(), &count);
  if (wide == nullptr) return {argv, argv + argc};
  std::vector<std::string> arguments;
  for (int i = 0; i < count; ++i) arguments.push_back(narrow(wide[i]));
  ::LocalFree(wide);
  return arguments;
}

std::wstring widen(std::string_view text) {
  if (text.empty()) return {};
  const int size =
      ::MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
  std::wstring wide(static_cast<std::size_t>(size), L'\0');
  ::MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), wide.data(), size);
  return wide;
}

std::string narrow(std::wstring_view text) {
  if (text.empty()) return {};
  const int size = ::WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()),
                                         nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(size), '\0');
  ::WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), size,
                        nullptr, nullptr);
  return out;
}

// _putenv_s with an empty value removes the variable from the C runtime's copy and from the
// process environment that CreateProcessW hands on.
void unset_environment(const char* name) { ::_putenv_s(name, ""); }

}  // namespace ctxguard::platform
