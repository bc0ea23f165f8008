#include "proxy/status_report.hpp"

#include <chrono>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include "config/profile.hpp"
#include "cursor/cursor_codec.hpp"

namespace {

namespace json = boost::json;
using ctxguard::proxy::SessionStatus;

// The parts a StatusReport reads, fresh: no calls, no reloads.
struct Parts {
  boost::asio::io_context io;
  ctxguard::cursor::CursorCodec codec{{std::string(32, 'k')}, std::chrono::seconds(600)};
  ctxguard::config::ProfilePtr profile = ctxguard::config::Profile::of({});
  ctxguard::proxy::Interceptor interceptor{profile, codec};
  ctxguard::proxy::ConfigReloader reloader{
      io, {}, profile, [](const ctxguard::config::ProfilePtr&) {}};
  ctxguard::telemetry::CallTelemetry telemetry;
  ctxguard::proxy::StatusReport report{interceptor, reloader, telemetry};
};

SessionStatus running_session() {
  SessionStatus session;
  session.server_pid = 77;
  session.messages_from_client = 3;
  session.messages_from_server = 2;
  session.queued_to_client_bytes = 10;
  return session;
}

}  // namespace

TEST_CASE("status report: the session's figures reach the process status") {
  Parts parts;
  const auto started = std::chrono::steady_clock::now();
  const auto process =
      parts.report.process_status(running_session(), started + std::chrono::seconds(5));
  CHECK(process.server_pid == 77);
  CHECK(process.server_running);
  CHECK(process.client_connected);
  CHECK(process.messages_from_client == 3);
  CHECK(process.messages_from_server == 2);
  CHECK(process.queued_to_client_bytes == 10);
  CHECK(process.uptime >= std::chrono::seconds(5));
  CHECK(process.cache_max_bytes == parts.interceptor.cache().max_bytes());
}

TEST_CASE("status report: /health is 200 while the server runs, 503 naming its end after") {
  Parts parts;
  SessionStatus session = running_session();
  const auto up = parts.report.answer("/health", session);
  CHECK(up.status == 200);
  CHECK(json::parse(up.body).at("status").as_string() == "ok");

  session.client_connected = false;
  session.server_exit = ctxguard::proxy::ExitStatus{.code = 0, .signal = 9};
  const auto down = parts.report.answer("/health", session);
  CHECK(down.status == 503);
  const json::value body = json::parse(down.body);
  CHECK(body.at("status").as_string() == "down");
  CHECK(down.body.find("killed by signal 9") != std::string::npos);
  CHECK(parts.report.answer("/metrics", session).body.find("ctxguard_server_up 0") !=
        std::string::npos);
}
