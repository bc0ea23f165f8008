// ctxguard's own stdio on Windows (proxy/stdio_streams.hpp).
//
// A client hands ctxguard anonymous pipes (or a console, or a file); none of them can join an
// I/O completion port. One thread copies stdin into a private overlapped pipe whose other end is
// in(); one copies what the session writes to out() on to stdout, so a client that reads slowly
// holds up that thread, never the event loop. This is how libuv serves such handles too.
#include <windows.h>
// windows.h first: io.h and fcntl.h need its types under MinGW.
#include <fcntl.h>
#include <io.h>

#include <array>
#include <chrono>
#include <memory>

#include "proxy/stdio_streams.hpp"
#include "proxy/win32_handles.hpp"

namespace ctxguard::proxy {
namespace {

using win32::UniqueHandle;

// How long ending the client's stream waits for what is still on its way to stdout.
constexpr DWORD kDrainMilliseconds = 5000;
constexpr std::size_t kRelayBufferBytes = 64 * 1024;

// Copies `from` to `to` until either ends, then closes what it owns: closing the pipe end is how
// the other side learns that the stream ended.
struct Relay {
  HANDLE from = nullptr;
  HANDLE to = nullptr;
  UniqueHandle owned;  // `from` or `to`, whichever is the pipe's end

  static DWORD WINAPI run(void* context) {
    const std::unique_ptr<Relay> relay(static_cast<Relay*>(context));
    std::array<char, kRelayBufferBytes> buffer{};
    while (true) {
      DWORD got = 0;
      if (!::ReadFile(relay->from, buffer.data(), static_cast<DWORD>(buffer.size()), &got,
                      nullptr) ||
          got == 0) {
        return 0;
      }
      for (DWORD done = 0; done < got;) {
        DWORD put = 0;
        if (!::WriteFile(relay->to, buffer.data() + done, got - done, &put, nullptr)) return 0;
        done += put;
      }
    }
  }
};

UniqueHandle start_relay(std::unique_ptr<Relay> relay) {
  UniqueHandle thread(::CreateThread(nullptr, 0, &Relay::run, relay.get(), 0, nullptr));
  if (thread) relay.release();  // the thread owns it now
  return thread;
}

}  // namespace

struct StdioStreams::Native {
  explicit Native(const boost::asio::any_io_executor& executor) : in(executor), out(executor) {}

  ByteStream in;
  ByteStream out;
  UniqueHandle reader;  // stdin to in()
  UniqueHandle writer;  // out() to stdout
  bool stdout_closed = false;
};

// A pipe or the thread that fills it failing leaves that stream closed: the session then sees
// its end at once, as it would see a client that went away.
StdioStreams::StdioStreams(const boost::asio::any_io_executor& executor)
    : native_(std::make_unique<Native>(executor)) {
  if (auto pipe = win32::make_pipe(win32::Flow::kOverlappedReads, win32::PlainEnd::kForThread)) {
    auto relay = std::make_unique<Relay>();
    relay->from = ::GetStdHandle(STD_INPUT_HANDLE);
    relay->to = pipe->plain.get();
    relay->owned = std::move(pipe->plain);
    native_->reader = start_relay(std::move(relay));
    native_->in.assign(pipe->overlapped.release());
  }
  if (auto pipe = win32::make_pipe(win32::Flow::kOverlappedWrites, win32::PlainEnd::kForThread)) {
    auto relay = std::make_unique<Relay>();
    relay->from = pipe->plain.get();
    relay->to = ::GetStdHandle(STD_OUTPUT_HANDLE);
    relay->owned = std::move(pipe->plain);
    native_->writer = start_relay(std::move(relay));
    native_->out.assign(pipe->overlapped.release());
  }
}

ByteStream& StdioStreams::in() { return native_->in; }
ByteStream& StdioStreams::out() { return native_->out; }

void StdioStreams::close_stdout() {
  if (native_->stdout_closed) return;
  native_->stdout_closed = true;
  boost::system::error_code ignored;
  native_->out.close(ignored);  // when it was not moved out
  // The relay drains the pipe, sees its end and returns; a client that reads nothing more does
  // not keep ctxguard waiting.
  if (native_->writer &&
      ::WaitForSingleObject(native_->writer.get(), kDrainMilliseconds) == WAIT_TIMEOUT) {
    ::CancelSynchronousIo(native_->writer.get());
  }
  // The null device on the C runtime's descriptor 1, and so on the process's standard output
  // handle: the client's pipe is closed, and nothing written later can reach it.
  const int null = ::_open("NUL", _O_WRONLY | _O_BINARY);
  if (null >= 0) {
    ::_dup2(null, 1);
    ::_close(null);
  }
}

StdioStreams::~StdioStreams() {
  boost::system::error_code ignored;
  native_->in.close(ignored);
  close_stdout();
  // The reader may be blocked reading a stdin that never ends; it owns nothing of ours and ends
  // with the process.
  if (native_->reader) ::CancelSynchronousIo(native_->reader.get());
}

}  // namespace ctxguard::proxy
