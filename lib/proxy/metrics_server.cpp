#include "proxy/metrics_server.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <optional>
#include <unordered_set>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "proxy/use_tuple.hpp"

namespace ctxguard::proxy {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::ip::tcp;

namespace {

// After a failed accept (out of descriptors, say), wait this long before the next.
constexpr std::chrono::milliseconds kAcceptRetry{500};
// What a closing connection still reads and drops, at most (see linger()).
constexpr std::chrono::milliseconds kLingerTime{1000};
constexpr std::size_t kLingerBytes = std::size_t{64} * 1024;
// Targets are logged up to this length.
constexpr std::size_t kLoggedTargetLength = 200;

}  // namespace

namespace detail {

class Connection;

// What the accept loop, the connections and the MetricsServer object share.
struct MetricsServerState {
  MetricsServerState(asio::io_context& io, HttpHandler answer, MetricsServerOptions limits)
      : acceptor(io),
        slot_freed(io, asio::steady_timer::time_point::max()),
        retry(io),
        handler(std::move(answer)),
        options(limits) {}

  void stop();

  tcp::acceptor acceptor;
  // Never expires: cancel() wakes the accept loop when a connection ends (or on stop).
  asio::steady_timer slot_freed;
  asio::steady_timer retry;
  HttpHandler handler;
  MetricsServerOptions options;
  // Open connections; each removes itself when its coroutine is done.
  std::unordered_set<Connection*> connections;
  bool stopped = false;
  bool limit_logged = false;
};

// One accepted socket, registered with the state for as long as it exists so stop() can close it.
class Connection {
 public:
  Connection(std::shared_ptr<MetricsServerState> state, tcp::socket socket)
      : state_(std::move(state)), stream_(std::move(socket)) {
    state_->connections.insert(this);
  }
  ~Connection() {
    state_->connections.erase(this);
    if (state_->stopped) return;  // the io_context may be shutting down: leave its timers alone
    try {
      state_->slot_freed.cancel();
    } catch (const std::exception& error) {
      spdlog::warn("metrics server: {}", error.what());
    }
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  MetricsServerState& state() { return *state_; }
  beast::tcp_stream& stream() { return stream_; }
  void close() { stream_.close(); }

 private:
  std::shared_ptr<MetricsServerState> state_;
  beast::tcp_stream stream_;
};

}  // namespace detail

namespace {

using detail::Connection;
using State = detail::MetricsServerState;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

std::string_view shortened(std::string_view text) {
  return text.substr(0, std::min(text.size(), kLoggedTargetLength));
}

HttpAnswer text_answer(unsigned status, std::string body) {
  return HttpAnswer{status, "text/plain; charset=utf-8", std::move(body)};
}

// The handler's answer; whatever goes wrong in it is a 500 and one log line.
HttpAnswer ask(const HttpHandler& handler, std::string_view target) {
  try {
    HttpAnswer answer = handler(target);
    if (answer.status >= 200 && answer.status <= 599) return answer;
    spdlog::error("metrics server: the handler answered {} with status {}", shortened(target),
                  answer.status);
  } catch (const std::exception& error) {
    spdlog::error("metrics server: the handler failed on {}: {}", shortened(target), error.what());
  } catch (...) {
    spdlog::error("metrics server: the handler failed on {}", shortened(target));
  }
  return text_answer(500, "internal error\n");
}

Response make_response(const HttpAnswer& answer, unsigned version, bool keep_alive) {
  Response response{static_cast<http::status>(answer.status), version};
  response.set(http::field::server, "ctxguard");
  response.set(http::field::cache_control, "no-store");
  response.set(http::field::content_type, answer.content_type);
  response.keep_alive(keep_alive);
  return response;
}

// The method, then the Host header (see loopback_hosts_only), before the handler is asked.
HttpAnswer answer_for(const Request& request, const HttpHandler& handler,
                      const MetricsServerOptions& options) {
  const http::verb method = request.method();
  if (method != http::verb::get && method != http::verb::head) {
    return text_answer(405, "method not allowed\n");
  }
  if (options.loopback_hosts_only) {
    const auto host = request.find(http::field::host);
    if (host != request.end() && !is_loopback_host(host->value())) {
      return text_answer(403,
                         "forbidden: the Host header must name 127.0.0.1, [::1] or localhost\n");
    }
  }
  return ask(handler, request.target());
}

// Beast's handle_request: a request in, a response out, no socket.
Response respond(const Request& request, const HttpHandler& handler,
                 const MetricsServerOptions& options) {
  const bool head = request.method() == http::verb::head;
  const bool get = request.method() == http::verb::get;
  HttpAnswer answer = answer_for(request, handler, options);
  Response response = make_response(answer, request.version(), request.keep_alive());
  if (!get && !head) response.set(http::field::allow, "GET, HEAD");
  if (head) {
    response.content_length(answer.body.size());  // what GET would send, without it
  } else {
    response.body() = std::move(answer.body);
    response.prepare_payload();
  }
  return response;
}

// The answer to a request that could not be read, if it deserves one.
std::optional<HttpAnswer> refusal(const beast::error_code& error) {
  if (error == http::error::header_limit || error == http::error::buffer_overflow) {
    return text_answer(431, "request header too large\n");
  }
  if (error == http::error::body_limit) return text_answer(413, "request body too large\n");
  if (error == http::error::end_of_stream || error == http::error::partial_message) {
    return std::nullopt;  // the client left
  }
  if (error.category() == http::make_error_code(http::error::bad_method).category()) {
    return text_answer(400, "bad request\n");
  }
  return std::nullopt;  // timeout, reset, stop(): nobody to answer
}

std::chrono::milliseconds linger_time(const MetricsServerOptions& options) {
  return std::min(options.idle_timeout, kLingerTime);
}

// Ends a connection after its last answer: closing a socket with unread input sends a reset,
// which can destroy the answer before the client reads it. So the sending side is shut down and
// what still arrives is dropped until the client closes, for a bounded time and size.
awaitable<void> linger(Connection& connection) {
  beast::tcp_stream& stream = connection.stream();
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.expires_after(linger_time(connection.state().options));
  std::array<char, 4096> sink{};
  std::size_t dropped = 0;
  while (dropped < kLingerBytes) {
    auto [error, n] = co_await stream.async_read_some(asio::buffer(sink), kUseTuple);
    if (error || connection.state().stopped) break;
    dropped += n;
  }
}

awaitable<void> send_refusal(Connection& connection, const HttpAnswer& answer) {
  Response response = make_response(answer, 11, false);
  response.body() = answer.body;
  response.prepare_payload();
  connection.stream().expires_after(connection.state().options.idle_timeout);
  auto [error, n] = co_await http::async_write(connection.stream(), response, kUseTuple);
  if (error || connection.state().stopped) co_return;
  co_await linger(connection);
}

// Read -> respond -> write, until the client closes, asks to close, times out, or stop().
awaitable<void> serve(std::shared_ptr<Connection> connection) {
  const State& state = connection->state();
  const MetricsServerOptions& options = state.options;
  beast::tcp_stream& stream = connection->stream();
  // Room for one request at its limits, and a little of the next one pipelined behind it.
  beast::flat_buffer buffer(std::size_t{options.header_limit} + options.body_limit + 1024);
  while (true) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(options.header_limit);
    parser.body_limit(options.body_limit);
    stream.expires_after(options.idle_timeout);
    auto [read_error, n] = co_await http::async_read(stream, buffer, parser, kUseTuple);
    if (state.stopped) co_return;
    if (read_error) {
      spdlog::debug("metrics server: connection ends: {}", read_error.message());
      const std::optional<HttpAnswer> answer = refusal(read_error);
      if (answer) co_await send_refusal(*connection, *answer);
      co_return;
    }
    Response response = respond(parser.get(), state.handler, options);
    stream.expires_after(options.idle_timeout);
    auto [write_error, written] = co_await http::async_write(stream, response, kUseTuple);
    if (state.stopped || write_error) co_return;
    if (!response.keep_alive()) break;
  }
  co_await linger(*connection);
}

void log_failure(std::string_view what, const std::exception_ptr& failure) {
  if (!failure) return;
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& error) {
    spdlog::error("metrics server: {} failed: {}", what, error.what());
  } catch (...) {
    spdlog::error("metrics server: {} failed", what);
  }
}

awaitable<void> accept_connections(std::shared_ptr<State> state) {
  while (!state->stopped) {
    if (state->connections.size() >= state->options.max_connections) {
      if (!state->limit_logged) {
        spdlog::warn("metrics server: {} connections open, the most it serves; new ones wait",
                     state->connections.size());
        state->limit_logged = true;
      }
      co_await state->slot_freed.async_wait(kUseTuple);
      continue;
    }
    auto [error, socket] = co_await state->acceptor.async_accept(kUseTuple);
    if (state->stopped) break;
    if (error) {
      if (error == asio::error::connection_aborted) continue;  // the client gave up first
      spdlog::warn("metrics server: accepting a connection failed: {}", error.message());
      state->retry.expires_after(kAcceptRetry);
      co_await state->retry.async_wait(kUseTuple);
      continue;
    }
    auto connection = std::make_shared<Connection>(state, std::move(socket));
    asio::co_spawn(state->acceptor.get_executor(), serve(std::move(connection)),
                   [](const std::exception_ptr& failure) { log_failure("a connection", failure); });
  }
}

}  // namespace

void detail::MetricsServerState::stop() {
  if (stopped) return;
  stopped = true;
  boost::system::error_code ignored;
  acceptor.close(ignored);
  slot_freed.cancel();
  retry.cancel();
  // Each connection's pending operation completes with operation_aborted; the coroutines see
  // `stopped` and end, and with them the last references to this state.
  for (Connection* connection : connections) connection->close();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(asio::io_context& io,
                                                            const ListenAddress& address,
                                                            HttpHandler handler,
                                                            MetricsServerOptions options) {
  options.max_connections = std::max<std::size_t>(options.max_connections, 1);
  auto state = std::make_shared<State>(io, std::move(handler), options);
  const tcp::endpoint endpoint(address.address, address.port);
  boost::system::error_code error;
  state->acceptor.open(endpoint.protocol(), error);
  if (!error) state->acceptor.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) state->acceptor.bind(endpoint, error);
  if (!error) state->acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) return std::error_code(error);
  spdlog::debug("metrics server listening on {}", to_string(state->acceptor.local_endpoint()));
  asio::co_spawn(io, accept_connections(state), [](const std::exception_ptr& failure) {
    log_failure("the accept loop", failure);
  });
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(state)));
}

MetricsServer::MetricsServer(std::shared_ptr<State> state) : state_(std::move(state)) {}

MetricsServer::~MetricsServer() {
  try {
    stop();
  } catch (const std::exception& error) {
    spdlog::warn("metrics server: stopping: {}", error.what());
  }
}

tcp::endpoint MetricsServer::local_endpoint() const {
  boost::system::error_code ignored;
  return state_->acceptor.local_endpoint(ignored);
}

void MetricsServer::stop() { state_->stop(); }

}  // namespace ctxguard::proxy
