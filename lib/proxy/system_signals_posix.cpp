// The proxy's signals on Linux and macOS (proxy/system_signals.hpp).
#include <signal.h>

#include <boost/asio/signal_set.hpp>

#include "proxy/system_signals.hpp"

namespace ctxguard::proxy {

struct SystemSignals::Native {
  explicit Native(boost::asio::io_context& io) : signals(io, SIGCHLD, SIGINT, SIGTERM) {
    signals.add(SIGHUP);
  }

  void wait_next() {
    signals.async_wait([this](const boost::system::error_code& error, int signal) {
      if (error) return;  // cancelled: the proxy is going away
      switch (signal) {
        case SIGCHLD:
          deliver(SystemRequest::kServerChanged);
          break;
        case SIGINT:
          deliver(SystemRequest::kInterrupt);
          break;
        case SIGTERM:
          deliver(SystemRequest::kTerminate);
          break;
        case SIGHUP:
          deliver(SystemRequest::kReload);
          break;
        default:
          break;
      }
      wait_next();
    });
  }

  boost::asio::signal_set signals;
  Deliver deliver;
};

SystemSignals::SystemSignals(boost::asio::io_context& io) : native_(std::make_unique<Native>(io)) {}

SystemSignals::~SystemSignals() {
  boost::system::error_code ignored;
  native_->signals.cancel(ignored);
}

// SIGCHLD stands for the server's exit: nothing to watch on the process itself.
void SystemSignals::start(ChildProcess& /*server*/, Deliver deliver) {
  native_->deliver = std::move(deliver);
  native_->wait_next();
}

}  // namespace ctxguard::proxy
