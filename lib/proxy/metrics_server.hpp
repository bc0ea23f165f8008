#pragma once
// A tiny HTTP/1.1 server for --metrics-listen: GET and HEAD only, answered by a handler
// the caller provides (/metrics, /health, 404 for the rest).
//
// It shares the single-threaded io_context of the stdio relay, so it never blocks and bounds all
// that a local peer can make it hold: request header and body sizes, an idle/read/write timeout
// per connection, and a limit on open connections (beyond it, new connections wait in the
// kernel's backlog until one closes). Keep-alive and pipelined requests are served in order.
// It writes nothing to stdout; problems go to the log.
//
// Executor: start(), stop(), local_endpoint() and the destructor run on the io_context's thread
// (or while it is not running); the handler is called there too. Destroy the server before the
// io_context.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "proxy/listen_address.hpp"
#include "support/error.hpp"

namespace ctxguard::proxy {

namespace detail {
struct MetricsServerState;
}  // namespace detail

struct HttpAnswer {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Answers a GET or HEAD of `target` (path and query, as sent). An exception becomes a 500 and a
// log line; the connection stays usable.
using HttpHandler = std::function<HttpAnswer(std::string_view target)>;

struct MetricsServerOptions {
  // A connection that takes longer than this to send a request or to read an answer is closed.
  std::chrono::milliseconds idle_timeout{10'000};
  std::size_t max_connections = 16;
  std::uint32_t header_limit = 8 * 1024;  // larger headers: 431
  std::uint64_t body_limit = 1024;        // larger bodies: 413 (GET and HEAD have none)
  // A request whose Host header does not name this machine by a loopback address (see
  // is_loopback_host) gets 403 and the handler is not asked, so a web page that reaches a
  // loopback port by DNS rebinding cannot read it. Requests without Host (HTTP/1.0) are served.
  // For servers bound to a loopback address.
  bool loopback_hosts_only = false;
};

class MetricsServer {
 public:
  // Binds (SO_REUSEADDR) and listens. Errors (address in use, permission denied, no such local
  // address) are returned, never thrown.
  static Result<std::unique_ptr<MetricsServer>> start(boost::asio::io_context& io,
                                                      const ListenAddress& address,
                                                      HttpHandler handler,
                                                      MetricsServerOptions options = {});

  // stop()s.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Where it listens: the real port when port 0 was asked.
  boost::asio::ip::tcp::endpoint local_endpoint() const;

  // Closes the listening socket and every connection, answers in flight included; nothing of the
  // server is left pending on the io_context afterwards. Idempotent.
  void stop();

 private:
  explicit MetricsServer(std::shared_ptr<detail::MetricsServerState> state);

  // Shared with the accept loop and every connection's coroutine: they may outlive this object
  // by the time it takes their cancelled operations to complete.
  std::shared_ptr<detail::MetricsServerState> state_;
};

}  // namespace ctxguard::proxy
