#include "proxy/win32_handles.hpp"

#include <atomic>
#include <string>

namespace ctxguard::proxy::win32 {
namespace {

// Big enough for a typical JSON-RPC line in one write; Windows grows it as needed anyway.
constexpr DWORD kPipeBufferBytes = 64 * 1024;

std::wstring unique_pipe_name() {
  static std::atomic<unsigned long> counter{0};
  return L"\\\\.\\pipe\\ctxguard-" + std::to_wstring(::GetCurrentProcessId()) + L"-" +
         std::to_wstring(++counter) + L"-" + std::to_wstring(::GetTickCount64());
}

}  // namespace

std::error_code last_error() {
  return {static_cast<int>(::GetLastError()), std::system_category()};
}

Result<PipePair> make_pipe(Flow flow, PlainEnd plain_end) {
  const std::wstring name = unique_pipe_name();
  const DWORD direction =
      flow == Flow::kOverlappedReads ? PIPE_ACCESS_INBOUND : PIPE_ACCESS_OUTBOUND;
  // FIRST_PIPE_INSTANCE: the call fails rather than join a pipe someone else made with the name.
  UniqueHandle overlapped(::CreateNamedPipeW(
      name.c_str(), direction | FILE_FLAG_OVERLAPPED | FILE_FLAG_FIRST_PIPE_INSTANCE,
      PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS, 1,
      kPipeBufferBytes, kPipeBufferBytes, 0, nullptr));
  if (!overlapped) return last_error();

  SECURITY_ATTRIBUTES attributes{};
  attributes.nLength = sizeof attributes;
  attributes.bInheritHandle = plain_end == PlainEnd::kForChild ? TRUE : FALSE;
  const DWORD access = flow == Flow::kOverlappedReads ? GENERIC_WRITE : GENERIC_READ;
  // FILE_WRITE_ATTRIBUTES lets a reader's side still set the pipe's mode, as some runtimes do.
  UniqueHandle plain(::CreateFileW(name.c_str(), access | FILE_WRITE_ATTRIBUTES, 0, &attributes,
                                   OPEN_EXISTING, 0, nullptr));
  if (!plain) return last_error();
  return PipePair{std::move(overlapped), std::move(plain)};
}

}  // namespace ctxguard::proxy::win32
