// The proxy's signals on Windows (proxy/system_signals.hpp): the server's exit is its process
// handle becoming signalled; Ctrl+C arrives as SIGINT and Ctrl+Break (or the console closing) as
// SIGBREAK through the C runtime, which Asio's signal_set watches.
#include <windows.h>

#include <csignal>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/windows/object_handle.hpp>

#include "proxy/system_signals.hpp"
#include "proxy/win32_handles.hpp"

namespace ctxguard::proxy {

struct SystemSignals::Native {
  explicit Native(boost::asio::io_context& io)
      : signals(io, SIGINT, SIGTERM, SIGBREAK), server_exit(io) {}

  void wait_next_signal() {
    signals.async_wait([this](const boost::system::error_code& error, int signal) {
      if (error) return;  // cancelled: the proxy is going away
      deliver(signal == SIGINT ? SystemRequest::kInterrupt : SystemRequest::kTerminate);
      wait_next_signal();
    });
  }

  boost::asio::signal_set signals;
  boost::asio::windows::object_handle server_exit;
  Deliver deliver;
};

SystemSignals::SystemSignals(boost::asio::io_context& io) : native_(std::make_unique<Native>(io)) {}

SystemSignals::~SystemSignals() {
  boost::system::error_code ignored;
  native_->signals.cancel(ignored);
  native_->server_exit.cancel(ignored);
}

void SystemSignals::start(ChildProcess& server, Deliver deliver) {
  native_->deliver = std::move(deliver);
  native_->wait_next_signal();
  // A handle of our own to wait on: the object_handle closes it.
  HANDLE copy = nullptr;
  if (::DuplicateHandle(::GetCurrentProcess(), win32::process_handle(server), ::GetCurrentProcess(),
                        &copy, SYNCHRONIZE, FALSE, 0)) {
    native_->server_exit.assign(copy);
    // Signalled once, and for good: one wait is all there is to see.
    native_->server_exit.async_wait([this](const boost::system::error_code& error) {
      if (!error) native_->deliver(SystemRequest::kServerChanged);
    });
  }
}

}  // namespace ctxguard::proxy
