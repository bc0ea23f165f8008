#include "proxy/listen_address.hpp"

#include <catch2/catch.hpp>

using boost::asio::ip::tcp;
using namespace ctxguard::proxy;

TEST_CASE(
    "listen address: a port alone is loopback, and addresses, brackets and localhost are read "
    "without DNS") {
  const auto parsed = [](std::string_view text) {
    const auto result = parse_listen_address(text);
    INFO(text << ": " << (result ? std::string() : result.error().message));
    REQUIRE(result.has_value());
    const auto& address = *result;
    return to_string(tcp::endpoint(address.address, address.port));
  };
  CHECK(parsed("9464") == "127.0.0.1:9464");
  CHECK(parsed("127.0.0.1:0") == "127.0.0.1:0");
  CHECK(parsed("[::1]:9464") == "[::1]:9464");
  CHECK(parsed("[::]:80") == "[::]:80");
  CHECK(parsed("0.0.0.0:9464") == "0.0.0.0:9464");
  CHECK(parsed("localhost:9464") == "127.0.0.1:9464");
  CHECK(parsed("LocalHost:65535") == "127.0.0.1:65535");
  CHECK(parsed("10.1.2.3:09464") == "10.1.2.3:9464");
}

TEST_CASE("listen address: malformed text is refused with a reason that quotes it") {
  const auto error = [](std::string_view text) {
    const auto result = parse_listen_address(text);
    REQUIRE_FALSE(result.has_value());
    std::string message = result.error().message;
    CHECK(message.find("'" + std::string(text) + "'") != std::string::npos);
    return message;
  };
  CHECK_THAT(error("abc"), Catch::Contains("PORT or ADDRESS:PORT"));
  CHECK_THAT(error(""), Catch::Contains("PORT or ADDRESS:PORT"));
  CHECK_THAT(error(" 9464"), Catch::Contains("PORT or ADDRESS:PORT"));
  CHECK_THAT(error("70000"), Catch::Contains("0 to 65535"));
  CHECK_THAT(error("1.2.3.4:65536"), Catch::Contains("0 to 65535"));
  CHECK_THAT(error("1.2.3.4:99999999999999999999"), Catch::Contains("0 to 65535"));
  CHECK_THAT(error("1.2.3.4:-1"), Catch::Contains("0 to 65535"));
  CHECK_THAT(error("1.2.3.4:+1"), Catch::Contains("0 to 65535"));
  CHECK_THAT(error("1.2.3.4:"), Catch::Contains("port is missing"));
  CHECK_THAT(error("[::1"), Catch::Contains("missing ']'"));
  CHECK_THAT(error("[::1]"), Catch::Contains("':PORT'"));
  CHECK_THAT(error("[::1]9464"), Catch::Contains("':PORT'"));
  CHECK_THAT(error("::1:9464"), Catch::Contains("brackets"));
  CHECK_THAT(error(":9464"), Catch::Contains("name the address"));
  CHECK_THAT(error("example.com:80"), Catch::Contains("not an IP address"));
  CHECK_THAT(error("1.2.3:80"), Catch::Contains("not an IP address"));
  CHECK_THAT(error("[127.0.0.1]:80"), Catch::Contains("only IPv6"));
  CHECK_THAT(error("[localhost]:80"), Catch::Contains("not an IP address"));
}

TEST_CASE("listen address: a Host header names this machine only by a loopback address") {
  using ctxguard::proxy::is_loopback_host;
  for (const char* host : {"127.0.0.1", "127.0.0.1:9464", "127.1.2.3:80", "localhost",
                           "LocalHost:9464", "[::1]", "[::1]:9464", "[0:0:0:0:0:0:0:1]:1"}) {
    CAPTURE(host);
    CHECK(is_loopback_host(host));
  }
  // What DNS rebinding sends (the attacker's name), other addresses, and malformed values.
  for (const char* host :
       {"evil.example", "evil.example:9464", "localhost.evil.example", "127.0.0.1.nip.io:9464",
        "0.0.0.0:9464", "192.0.2.1:9464", "[::]:9464", "[::ffff:127.0.0.1]:9464", "::1",
        "127.0.0.1:", "127.0.0.1:94a", "127.0.0.1:123456", "[::1", "[::1]x", "[127.0.0.1]:80", "",
        " 127.0.0.1", "localhost:9464:1"}) {
    CAPTURE(host);
    CHECK_FALSE(is_loopback_host(host));
  }
}

#include "proxy/telemetry_edges.hpp"

TEST_CASE("telemetry edges: requests are routed to /metrics, /health and 404") {
  using ctxguard::proxy::answer_status_request;
  const ctxguard::telemetry::TrafficMetrics traffic;
  ctxguard::telemetry::ProcessStatus process;
  const auto metrics = answer_status_request("/metrics?x=1", traffic, process);
  CHECK(metrics.status == 200);
  CHECK(metrics.content_type.starts_with("text/plain; version=0.0.4"));
  CHECK(metrics.body.find("ctxguard_server_up 1") != std::string::npos);
  const auto health = answer_status_request("/health", traffic, process);
  CHECK(health.content_type == "application/json");
  CHECK(health.body.find(R"("status":"ok")") != std::string::npos);
  CHECK(answer_status_request("/health?verbose", traffic, process).status == 200);
  // Nothing but the two pages, not even an index; the 404 never echoes the target.
  for (const char* target : {"/", "/metricsx", "/metrics/", "//metrics", "/METRICS", "/debug",
                             "/metrics/../etc/passwd", "http://127.0.0.1:9464/metrics", "*", ""}) {
    CAPTURE(target);
    const auto answer = answer_status_request(target, traffic, process);
    CHECK(answer.status == 404);
    CHECK(answer.body == "not found: try /metrics or /health\n");
  }
  process.server_running = false;
  CHECK(answer_status_request("/health", traffic, process).status == 503);
}
