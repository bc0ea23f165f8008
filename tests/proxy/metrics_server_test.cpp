#include "proxy/metrics_server.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <future>
#include <optional>
#include <stdexcept>
#include <thread>

#include <boost/asio/post.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;
using namespace ctxguard::proxy;
using namespace std::chrono_literals;

namespace {

// How long a test waits for something that should happen at once: a failure bound, never a
// pause that makes a test pass.
constexpr auto kBound = 10s;

// A send on a connection the server has closed must fail the test, not kill the runner with
// SIGPIPE: Linux says so per call (MSG_NOSIGNAL), macOS per socket (SO_NOSIGPIPE, in Client).
#ifdef MSG_NOSIGNAL
constexpr int kSendFlags = MSG_NOSIGNAL;
#else
constexpr int kSendFlags = 0;
#endif

using Response = http::response<http::string_body>;

// A blocking loopback client on raw sockets (SO_RCVTIMEO bounds every wait); responses are parsed
// with Beast's parser, so a malformed one fails the test.
class Client {
 public:
  explicit Client(const tcp::endpoint& server) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    const timeval timeout{std::chrono::duration_cast<std::chrono::seconds>(kBound).count(), 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
#ifdef SO_NOSIGPIPE
    const int on = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof on);
#endif
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(server.port());
    address.sin_addr.s_addr = htonl(server.address().to_v4().to_uint());
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  }
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), kSendFlags);
      REQUIRE(n > 0);
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // The next response, or nothing when the connection ends first.
  std::optional<Response> read_response(bool head = false) {
    http::response_parser<http::string_body> parser;
    parser.skip(head);
    parser.eager(true);
    while (!parser.is_done()) {
      if (!pending_.empty()) {
        boost::beast::error_code error;
        const std::size_t used = parser.put(asio::buffer(pending_), error);
        pending_.erase(0, used);
        if (error && error != http::error::need_more) FAIL("bad response: " << error.message());
        if (!error && used > 0) continue;
      }
      if (!receive()) return std::nullopt;
    }
    return parser.release();
  }

  // True once the server has closed the connection (end of file or reset), false after kBound.
  bool wait_for_close() {
    while (receive()) pending_.clear();
    return errno_ != EAGAIN && errno_ != EWOULDBLOCK;
  }

  // True when nothing arrives within `time` (a check that can pass wrongly, never fail wrongly).
  bool quiet_for(std::chrono::milliseconds time) const {
    pollfd entry{fd_, POLLIN, 0};
    return ::poll(&entry, 1, static_cast<int>(time.count())) == 0;
  }

 private:
  bool receive() {
    char buffer[4096];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    errno_ = n < 0 ? errno : 0;
    if (n <= 0) return false;
    pending_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  int fd_;
  int errno_ = 0;
  std::string pending_;
};

std::string request(std::string_view method, std::string_view target,
                    std::string_view extra_headers = "") {
  return std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: localhost\r\n" +
         std::string(extra_headers) + "\r\n";
}

// A server on port 0 whose io_context runs on its own thread, as the proxy's would.
class RunningServer {
 public:
  explicit RunningServer(HttpHandler handler, MetricsServerOptions options = {}) {
    auto started = MetricsServer::start(io_, ListenAddress{asio::ip::address_v4::loopback(), 0},
                                        std::move(handler), options);
    REQUIRE(started.has_value());
    server_ = std::move(*started);
    endpoint_ = server_->local_endpoint();
    thread_ = std::thread([this] {
      io_.run();
      returned_.set_value();
    });
  }
  ~RunningServer() {
    try {
      if (thread_.joinable()) stop();
    } catch (...) {
      io_.stop();
      if (thread_.joinable()) thread_.join();
    }
  }
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;

  const tcp::endpoint& endpoint() const { return endpoint_; }

  // Stops the server on its thread (or destroys it); true once io_context::run() has returned
  // by itself, that is with nothing of the server left pending.
  bool stop(bool destroy = false) {
    asio::post(io_, [this, destroy] {
      if (destroy) {
        server_.reset();
      } else {
        server_->stop();
      }
    });
    const bool returned = returned_.get_future().wait_for(kBound) == std::future_status::ready;
    if (!returned) io_.stop();
    thread_.join();
    return returned;
  }

 private:
  asio::io_context io_;
  std::unique_ptr<MetricsServer> server_;
  tcp::endpoint endpoint_;
  std::promise<void> returned_;
  std::thread thread_;
};

HttpAnswer metrics_page(std::string_view target) {
  if (target.starts_with("/metrics")) return {200, "text/plain; version=0.0.4", "up 1\n"};
  return {404, "text/plain; charset=utf-8", "not found\n"};
}

}  // namespace

TEST_CASE("metrics server: a GET is answered with the handler's status, body and headers") {
  std::string seen_target;  // written on the io thread before the answer is sent
  RunningServer server([&](std::string_view target) {
    seen_target = target;
    return metrics_page(target);
  });
  Client client(server.endpoint());
  client.send(request("GET", "/metrics?x=1"));
  const auto response = client.read_response();
  REQUIRE(response);
  CHECK(seen_target == "/metrics?x=1");
  CHECK(response->result_int() == 200);
  CHECK(response->body() == "up 1\n");
  CHECK((*response)[http::field::content_type] == "text/plain; version=0.0.4");
  CHECK((*response)[http::field::content_length] == "5");
  CHECK((*response)[http::field::server] == "ctxguard");
  CHECK((*response)[http::field::cache_control] == "no-store");
  CHECK(response->keep_alive());

  client.send(request("GET", "/nothing"));
  const auto missing = client.read_response();
  REQUIRE(missing);
  CHECK(missing->result_int() == 404);
  CHECK(missing->body() == "not found\n");
}

TEST_CASE("metrics server: HEAD gets GET's headers and no body") {
  RunningServer server(metrics_page);
  Client client(server.endpoint());
  // If the HEAD answer carried a body, the GET's answer behind it would not parse.
  client.send(request("HEAD", "/metrics") + request("GET", "/metrics"));
  const auto head = client.read_response(true);
  REQUIRE(head);
  CHECK(head->result_int() == 200);
  CHECK((*head)[http::field::content_length] == "5");
  CHECK(head->body().empty());
  const auto get = client.read_response();
  REQUIRE(get);
  CHECK(get->body() == "up 1\n");
}

TEST_CASE(
    "metrics server: methods other than GET and HEAD get 405 with Allow, the handler is not "
    "asked") {
  std::atomic<int> asked = 0;
  RunningServer server([&](std::string_view target) {
    ++asked;
    return metrics_page(target);
  });
  Client client(server.endpoint());
  for (const char* method : {"POST", "PUT", "DELETE", "BREW"}) {
    client.send(request(method, "/metrics", "Content-Length: 2\r\n") + "{}");
    const auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->result_int() == 405);
    CHECK((*response)[http::field::allow] == "GET, HEAD");
  }
  CHECK(asked == 0);
}

TEST_CASE(
    "metrics server: with loopback_hosts_only, a Host that is not a loopback address gets 403 "
    "and the handler is not asked") {
  std::atomic<int> asked = 0;
  RunningServer server(
      [&](std::string_view target) {
        ++asked;
        return metrics_page(target);
      },
      MetricsServerOptions{.loopback_hosts_only = true});
  Client client(server.endpoint());
  // What a page that rebound its own name to 127.0.0.1 sends.
  for (const char* host : {"rebound.example:9464", "rebound.example", "0.0.0.0:9464"}) {
    client.send("GET /metrics HTTP/1.1\r\nHost: " + std::string(host) + "\r\n\r\n");
    const auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->result_int() == 403);
    CHECK(response->body() ==
          "forbidden: the Host header must name 127.0.0.1, [::1] or localhost\n");
  }
  CHECK(asked == 0);
  for (const char* host : {"127.0.0.1:9464", "localhost", "[::1]:9464"}) {
    client.send("GET /metrics HTTP/1.1\r\nHost: " + std::string(host) + "\r\n\r\n");
    const auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->result_int() == 200);
  }
  client.send("GET /metrics HTTP/1.0\r\n\r\n");  // no Host at all
  const auto old = client.read_response();
  REQUIRE(old);
  CHECK(old->result_int() == 200);
  CHECK(asked == 4);
}

TEST_CASE("metrics server: without loopback_hosts_only, any Host is served") {
  RunningServer server(metrics_page);
  Client client(server.endpoint());
  client.send("GET /metrics HTTP/1.1\r\nHost: metrics.example:9464\r\n\r\n");
  const auto response = client.read_response();
  REQUIRE(response);
  CHECK(response->result_int() == 200);
}

TEST_CASE(
    "metrics server: keep-alive serves requests one after another and pipelined on one "
    "connection, and Connection: close ends it") {
  RunningServer server(metrics_page);
  Client client(server.endpoint());
  for (int i = 0; i < 2; ++i) {
    client.send(request("GET", "/metrics"));
    const auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->body() == "up 1\n");
  }
  client.send(request("GET", "/metrics") + request("GET", "/other"));
  const auto first = client.read_response();
  const auto second = client.read_response();
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->result_int() == 200);
  CHECK(second->result_int() == 404);

  client.send(request("GET", "/metrics", "Connection: close\r\n"));
  const auto last = client.read_response();
  REQUIRE(last);
  CHECK(last->body() == "up 1\n");
  CHECK_FALSE(last->keep_alive());
  CHECK(client.wait_for_close());
}

TEST_CASE("metrics server: an HTTP/1.0 request without keep-alive is answered and closed") {
  RunningServer server(metrics_page);
  Client client(server.endpoint());
  client.send("GET /metrics HTTP/1.0\r\n\r\n");
  const auto response = client.read_response();
  REQUIRE(response);
  CHECK(response->version() == 10);
  CHECK(response->body() == "up 1\n");
  CHECK(client.wait_for_close());
}

TEST_CASE(
    "metrics server: requests over the limits or malformed are refused, and the server "
    "serves others") {
  RunningServer server(metrics_page);
  struct Case {
    std::string bytes;
    unsigned status;
  };
  const Case cases[] = {
      {request("GET", "/metrics", "X-Big: " + std::string(16384, 'a') + "\r\n"), 431},
      {request("GET", "/metrics", "Content-Length: 5000\r\n") + std::string(5000, 'b'), 413},
      {"NOT HTTP AT ALL\r\n\r\n", 400},
  };
  for (const Case& refused : cases) {
    INFO("expected " << refused.status);
    Client client(server.endpoint());
    client.send(refused.bytes);
    const auto response = client.read_response();
    REQUIRE(response);
    CHECK(response->result_int() == refused.status);
    CHECK_FALSE(response->keep_alive());
    CHECK(client.wait_for_close());
  }
  Client next(server.endpoint());
  next.send(request("GET", "/metrics", "X-Fits: " + std::string(4096, 'c') + "\r\n"));
  const auto response = next.read_response();
  REQUIRE(response);
  CHECK(response->result_int() == 200);
}

TEST_CASE(
    "metrics server: a client that sends nothing, or half a request, is closed after the "
    "idle timeout") {
  RunningServer server(metrics_page, MetricsServerOptions{.idle_timeout = 100ms});
  const auto start = std::chrono::steady_clock::now();
  Client silent(server.endpoint());
  Client slow(server.endpoint());
  slow.send("GET /metrics HTTP/1.1\r\nHost: loc");
  CHECK(silent.wait_for_close());
  CHECK(slow.wait_for_close());
  CHECK(std::chrono::steady_clock::now() - start >= 100ms);

  Client next(server.endpoint());
  next.send(request("GET", "/metrics"));
  CHECK(next.read_response());
}

TEST_CASE(
    "metrics server: connections beyond the limit wait until one closes, and the server "
    "keeps serving") {
  RunningServer server(metrics_page, MetricsServerOptions{.max_connections = 2});
  Client first(server.endpoint());
  Client second(server.endpoint());
  for (Client* client : {&first, &second}) {  // both accepted and served
    client->send(request("GET", "/metrics"));
    REQUIRE(client->read_response());
  }
  Client third(server.endpoint());
  third.send(request("GET", "/metrics"));
  CHECK(third.quiet_for(200ms));  // not accepted while two are open
  first.close();
  const auto answer = third.read_response();
  REQUIRE(answer);
  CHECK(answer->body() == "up 1\n");
  second.send(request("GET", "/metrics"));
  CHECK(second.read_response());
}

TEST_CASE("metrics server: a handler that throws gets a 500, and the next request is answered") {
  RunningServer server([](std::string_view target) -> HttpAnswer {
    if (target == "/throw") throw std::runtime_error("broken metrics");
    if (target == "/throw-int") throw 42;
    if (target == "/bad-status") return {42, "text/plain", ""};
    return metrics_page(target);
  });
  Client client(server.endpoint());
  for (const char* target : {"/throw", "/throw-int", "/bad-status"}) {
    INFO(target);
    client.send(request("GET", target));
    const auto failed = client.read_response();
    REQUIRE(failed);
    CHECK(failed->result_int() == 500);
    CHECK(failed->keep_alive());
  }
  client.send(request("GET", "/metrics"));
  const auto next = client.read_response();
  REQUIRE(next);
  CHECK(next->result_int() == 200);
}

TEST_CASE("metrics server: stop() closes every connection and lets io_context::run() return") {
  RunningServer server(metrics_page);
  Client idle(server.endpoint());
  idle.send(request("GET", "/metrics"));
  REQUIRE(idle.read_response());
  Client partial(server.endpoint());
  partial.send("GET /metr");
  CHECK(server.stop());
  CHECK(idle.wait_for_close());
  CHECK(partial.wait_for_close());
}

TEST_CASE("metrics server: destroying the server with connections open is safe") {
  RunningServer server(metrics_page, MetricsServerOptions{.max_connections = 1});
  Client open(server.endpoint());
  open.send(request("GET", "/metrics"));
  REQUIRE(open.read_response());
  Client waiting(server.endpoint());  // in the backlog: the limit is reached
  CHECK(server.stop(/*destroy=*/true));
  CHECK(open.wait_for_close());
  CHECK(waiting.wait_for_close());
}

TEST_CASE(
    "metrics server: start() on a port already in use returns the error, it does not "
    "throw") {
  asio::io_context io;
  const ListenAddress any_port{asio::ip::address_v4::loopback(), 0};
  auto first = MetricsServer::start(io, any_port, metrics_page);
  REQUIRE(first.has_value());
  const ListenAddress taken{asio::ip::address_v4::loopback(), (*first)->local_endpoint().port()};
  const auto second = MetricsServer::start(io, taken, metrics_page);
  REQUIRE(second.has_error());
  CHECK(second.error() == std::errc::address_in_use);

  const ListenAddress foreign{asio::ip::make_address("192.0.2.1"), 0};  // not this machine's
  const auto third = MetricsServer::start(io, foreign, metrics_page);
  REQUIRE(third.has_error());
  CHECK(third.error() == std::errc::address_not_available);
}
