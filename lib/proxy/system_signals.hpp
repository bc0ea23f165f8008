#pragma once
// What the operating system asks of a running proxy, whatever the platform says it with: the
// platform seam for signals (docs/architecture.md, Platforms). POSIX in system_signals_posix.cpp
// (SIGCHLD, SIGINT, SIGTERM, SIGHUP through one signal set), Windows in
// system_signals_win32.cpp (the server's process handle, Ctrl+C / Ctrl+Break and console close).
//
// Windows has no SIGHUP: there the configuration reloads when its file changes (the reloader's
// poll), and the client ends a session by closing ctxguard's stdin, as MCP clients do everywhere.
//
// Executor: the io_context's thread; requests are delivered there.

#include <functional>
#include <memory>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "proxy/child_process.hpp"

namespace ctxguard::proxy {

enum class SystemRequest {
  kServerChanged,  // the server's process may have exited (SIGCHLD; its handle signalled)
  kInterrupt,      // SIGINT, Ctrl+C
  kTerminate,      // SIGTERM; Ctrl+Break, the console closing
  kReload,         // SIGHUP: reload the configuration, reopen the record files
};
std::string_view to_string(SystemRequest request);

class SystemSignals {
 public:
  using Deliver = std::function<void(SystemRequest)>;

  // Catches the signals from now on, before the server exists, so that its exit cannot be missed.
  explicit SystemSignals(boost::asio::io_context& io);
  ~SystemSignals();
  SystemSignals(const SystemSignals&) = delete;
  SystemSignals& operator=(const SystemSignals&) = delete;

  // Delivers each request to `deliver` on the io thread from now until the io_context stops or
  // this object goes away. `server` must outlive the delivery.
  void start(ChildProcess& server, Deliver deliver);

 private:
  struct Native;
  std::unique_ptr<Native> native_;
};

}  // namespace ctxguard::proxy
