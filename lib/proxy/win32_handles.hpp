#pragma once
// Windows handles, pipes and strings for the proxy's platform files (child_process_win32,
// stdio_streams_win32, system_signals_win32); included by nothing else.
//
// An anonymous pipe (CreatePipe) cannot do overlapped I/O, and Asio's stream_handle needs it, so
// a pipe here is a named pipe with a name no one else can guess or take (one instance, remote
// clients refused), as libuv and Python's subprocess make them: the end Asio drives is
// overlapped, the other end plain, for a child's stdio or a thread's blocking calls.

#include <windows.h>

#include <utility>

#include "support/error.hpp"

namespace ctxguard::proxy {
class ChildProcess;
}  // namespace ctxguard::proxy

namespace ctxguard::proxy::win32 {

// Owns one handle; closes it when destroyed.
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(HANDLE handle) : handle_(handle) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(other.release()) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;

  HANDLE get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr && handle_ != INVALID_HANDLE_VALUE; }
  HANDLE release() { return std::exchange(handle_, nullptr); }
  void reset(HANDLE handle = nullptr) {
    if (*this) ::CloseHandle(handle_);
    handle_ = handle;
  }

 private:
  HANDLE handle_ = nullptr;
};

// The calling thread's last error as a system error code.
std::error_code last_error();

// Which way the bytes go from the overlapped end's point of view.
enum class Flow { kOverlappedReads, kOverlappedWrites };

struct PipePair {
  UniqueHandle overlapped;  // for Asio: FILE_FLAG_OVERLAPPED, never inheritable
  UniqueHandle plain;       // for a child or a thread: blocking
};

// Who the plain end is for: a child process (inheritable) or a thread of ours (not).
enum class PlainEnd { kForChild, kForThread };

Result<PipePair> make_pipe(Flow flow, PlainEnd plain_end);

// The process handle of a server ChildProcess started (child_process_win32.cpp).
HANDLE process_handle(ChildProcess& child);

}  // namespace ctxguard::proxy::win32
