// A whole Session driven through pipes, with a fake server process and system requests delivered by
// hand: no process is spawned. Each test runs the io_context until what it expects has
// happened, within a limit, and reads what the session wrote to each peer.

#include "proxy/session.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include "config/profile.hpp"
#include "cursor/cursor_codec.hpp"
#include "posix_pipe.hpp"
#include "proxy/child_process.hpp"
#include "proxy/interceptor.hpp"

namespace ctxguard::proxy {

// Phases by name in failure messages.
std::ostream& operator<<(std::ostream& out, Phase phase) { return out << to_string(phase); }

}  // namespace ctxguard::proxy

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using ctxguard::proxy::ExitStatus;
using ctxguard::proxy::Phase;
using ctxguard::proxy::SessionEvent;
using ctxguard::proxy::StopLevel;
using ctxguard::proxy::SystemRequest;
using ctxguard::test::Fd;
using ctxguard::test::make_pipe;
using ctxguard::test::Pipe;
using std::chrono::milliseconds;
using namespace std::chrono_literals;

void write_line(const Fd& fd, std::string_view line) {
  const std::string text = std::string(line) + '\n';
  REQUIRE(::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

// One of the session's outputs as its peer reads it: whole lines, and whether it ended.
class LineSink {
 public:
  explicit LineSink(Fd fd) : fd_(std::move(fd)) { ::fcntl(fd_.get(), F_SETFL, O_NONBLOCK); }

  // Reads what is there without waiting.
  void drain() {
    char buffer[65536];
    while (fd_.get() >= 0 && !ended_) {
      const ssize_t n = ::read(fd_.get(), buffer, sizeof buffer);
      if (n <= 0) {
        ended_ = n == 0;
        return;
      }
      pending_.append(buffer, static_cast<std::size_t>(n));
      for (std::size_t end; (end = pending_.find('\n')) != std::string::npos;) {
        lines_.push_back(pending_.substr(0, end));
        pending_.erase(0, end + 1);
      }
    }
  }
  // The peer goes away without reading what is left.
  void stop_reading() { fd_.close(); }

  const std::vector<std::string>& lines() const { return lines_; }
  bool ended() const { return ended_; }

 private:
  Fd fd_;
  std::string pending_;
  std::vector<std::string> lines_;
  bool ended_ = false;
};

ExitStatus exited(int code) { return {.code = code, .signal = std::nullopt}; }
ExitStatus killed(int signal) { return {.code = 0, .signal = signal}; }

// The MCP server's process, played by the test. Its stdout is a pipe's write end, which closes
// when it ends (as a dead process's would), unless a stranger holds it open.
class FakeServer final : public ctxguard::proxy::ServerProcess {
 public:
  enum class Output { kClosed, kHeldOpen };

  explicit FakeServer(Fd output) : output_(std::move(output)) {}

  void writes(std::string_view line) const { write_line(output_, line); }
  void close_output() { output_.close(); }
  void end(const ExitStatus& status, Output output = Output::kClosed) {
    if (ended_) return;
    ended_ = status;
    if (output == Output::kClosed) output_.close();
  }

  bool obeys_sigterm = true;
  std::vector<StopLevel> stops;  // asked of its tree, in order

  ctxguard::proxy::ProcessId pid() const override { return 4242; }
  std::optional<ExitStatus> try_wait() override {
    if (ended_) exit_ = ended_;
    return exit_;
  }
  const std::optional<ExitStatus>& exit_status() const override { return exit_; }
  void stop(StopLevel level) override {
    stops.push_back(level);
    if (level == StopLevel::kKill) end(killed(SIGKILL));
    if (level == StopLevel::kTerminate && obeys_sigterm) end(killed(SIGTERM));
  }
  bool group_alive() const override { return !ended_; }

 private:
  Fd output_;
  std::optional<ExitStatus> ended_;  // how it ended, before try_wait reaps it
  std::optional<ExitStatus> exit_;
};

// The timeouts the tests are written for, whatever the defaults become.
ctxguard::config::Settings test_settings() {
  ctxguard::config::Settings settings;
  settings.lifecycle.shutdown_timeout = 5000ms;
  settings.lifecycle.kill_timeout = 2000ms;
  return settings;
}

// A session between the test's pipes and a FakeServer, started.
class Harness {
 public:
  explicit Harness(ctxguard::config::Settings with = test_settings()) : settings_(std::move(with)) {
    ctxguard::proxy::ignore_sigpipe();  // a reader that went away must be an error value
    session.start();
  }

  void client_sends(std::string_view line) const { write_line(client_in_.write, line); }
  void client_closes_input() { client_in_.write.close(); }

  // Runs the session until `done()` holds; false when it did not within `limit`, or when the
  // session stopped without it.
  bool run_until(const std::function<bool()>& done, milliseconds limit = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      client.drain();
      server_reads.drain();
      if (done()) return true;
      if (io_.stopped() || std::chrono::steady_clock::now() >= deadline) return false;
      io_.run_one_for(10ms);
    }
  }
  bool run_until(Phase phase, milliseconds limit = 10s) {
    return run_until([this, phase] { return session.phase() == phase; }, limit);
  }
  // The server exits and the session hears of it.
  void server_exits(const ExitStatus& status) {
    server.end(status);
    session.on_request(SystemRequest::kServerChanged);
  }

 private:
  ctxguard::config::Settings settings_;
  asio::io_context io_;
  Pipe client_in_ = make_pipe();
  Pipe client_out_ = make_pipe();
  Pipe server_in_ = make_pipe();
  Pipe server_out_ = make_pipe();
  ctxguard::cursor::CursorCodec codec_{{std::string(32, 'k')}, std::chrono::seconds(600)};

 public:
  ctxguard::proxy::Interceptor interceptor{ctxguard::config::Profile::of({}), codec_};
  LineSink client{std::move(client_out_.read)};       // what the client reads
  LineSink server_reads{std::move(server_in_.read)};  // what the server reads
  FakeServer server{std::move(server_out_.write)};
  std::vector<Phase> phases;
  bool client_output_closed = false;
  ctxguard::proxy::Session session{io_, settings_, streams(), server, interceptor, hooks()};

 private:
  ctxguard::proxy::SessionStreams streams() {
    return {ctxguard::proxy::ByteStream(io_, client_in_.read.release()),
            ctxguard::proxy::ByteStream(io_, client_out_.write.release()),
            ctxguard::proxy::ByteStream(io_, server_in_.write.release()),
            ctxguard::proxy::ByteStream(io_, server_out_.read.release()),
            [this] { client_output_closed = true; }};
  }
  ctxguard::proxy::Session::Hooks hooks() {
    return {.on_hangup = {}, .on_phase = [this](Phase phase) { phases.push_back(phase); }};
  }
};

json::value parse(const std::string& line) { return json::parse(line); }

}  // namespace

TEST_CASE("session: a request and its answer are relayed both ways, byte for byte") {
  Harness h;
  const std::string request = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":0.0}})";
  const std::string answer = R"({"jsonrpc":"2.0","id":1,"result":{"n":1e999}})";
  h.client_sends(request);
  REQUIRE(h.run_until([&] { return h.server_reads.lines().size() == 1; }));
  CHECK(h.server_reads.lines()[0] == request);
  h.server.writes(answer);
  REQUIRE(h.run_until([&] { return h.client.lines().size() == 1; }));
  CHECK(h.client.lines()[0] == answer);

  CHECK(h.session.phase() == Phase::kRelaying);
  const auto status = h.session.status();
  CHECK(status.messages_from_client == 1);
  CHECK(status.messages_from_server == 1);
  CHECK(status.client_connected);
  CHECK(status.server_pid == 4242);
  CHECK_FALSE(status.server_exit);
}

TEST_CASE(
    "session: the client's end of input ends the server's, and the answer in flight arrives") {
  Harness h;
  h.client_sends(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  h.client_closes_input();
  REQUIRE(h.run_until([&] { return h.server_reads.ended(); }));
  CHECK(h.server_reads.lines().size() == 1);
  CHECK_FALSE(h.session.status().client_connected);
  CHECK(h.session.phase() == Phase::kRelaying);  // the server may still answer

  h.server.writes(R"({"jsonrpc":"2.0","id":7,"result":{}})");
  h.server_exits(exited(0));
  REQUIRE(h.run_until(Phase::kDone));
  REQUIRE(h.run_until([&] { return h.client.ended(); }));
  CHECK(h.client.lines() == std::vector<std::string>{R"({"jsonrpc":"2.0","id":7,"result":{}})"});
  CHECK(h.phases ==
        std::vector{Phase::kServerExited, Phase::kFinishing, Phase::kDelivered, Phase::kDone});
  CHECK(h.server.stops.empty());  // it exited on its own within the shutdown timeout
  CHECK(h.session.exit_status() == 0);
}

TEST_CASE("session: when the server exits, each request in flight gets -32000, in order") {
  Harness h;
  h.client_sends(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{}}})");
  h.client_sends(R"({"jsonrpc":"2.0","id":"two","method":"ping"})");
  REQUIRE(h.run_until([&] { return h.server_reads.lines().size() == 2; }));

  h.server_exits(exited(3));
  REQUIRE(h.run_until(Phase::kDone));
  REQUIRE(h.run_until([&] { return h.client.ended(); }));
  REQUIRE(h.client.lines().size() == 2);
  const json::value first = parse(h.client.lines()[0]);
  const json::value second = parse(h.client.lines()[1]);
  CHECK(first.at("id").as_int64() == 1);
  CHECK(first.at("error").at("code").as_int64() == -32000);
  CHECK(first.at("error").at("message").as_string() ==
        "MCP server exited with status 3 before answering tools/call");
  CHECK(second.at("id").as_string() == "two");
  CHECK(second.at("error").at("message").as_string() ==
        "MCP server exited with status 3 before answering ping");
  CHECK(h.client_output_closed);
  CHECK(h.phases ==
        std::vector{Phase::kServerExited, Phase::kFinishing, Phase::kDelivered, Phase::kDone});
  CHECK(h.session.exit_status() == 3);
  CHECK(h.interceptor.router().in_flight(ctxguard::session::Direction::kClientToServer) == 0);
}

TEST_CASE("session: a server line that is not JSON-RPC is dropped, the lines around it pass") {
  Harness h;
  const std::string notice = R"({"jsonrpc":"2.0","method":"notifications/message","params":{}})";
  h.server.writes("server starting on stdio...");
  h.server.writes(R"({"not":"json-rpc"})");
  h.server.writes(notice);
  REQUIRE(h.run_until([&] { return h.session.status().messages_from_server == 3; }));
  REQUIRE(h.run_until([&] { return !h.client.lines().empty(); }));
  CHECK(h.client.lines() == std::vector<std::string>{notice});
  CHECK(h.interceptor.non_protocol_lines_dropped() == 2);
}

TEST_CASE("session: a server that closes its output but runs on is stopped, its request answered") {
  auto settings = test_settings();
  settings.lifecycle.shutdown_timeout = 50ms;
  Harness h(settings);
  h.client_sends(R"({"jsonrpc":"2.0","id":5,"method":"ping"})");
  REQUIRE(h.run_until([&] { return h.server_reads.lines().size() == 1; }));

  h.server.close_output();
  REQUIRE(h.run_until(Phase::kServerMute));
  // After a grace for its exit to be seen: its input closed, then SIGTERM (which it obeys).
  REQUIRE(h.run_until([&] { return h.server_reads.ended(); }));
  REQUIRE(h.run_until(Phase::kDone));
  CHECK(h.server.stops == std::vector{StopLevel::kTerminate});
  CHECK(h.phases ==
        std::vector{Phase::kServerMute, Phase::kFinishing, Phase::kDelivered, Phase::kDone});
  REQUIRE(h.run_until([&] { return h.client.ended(); }));
  REQUIRE(h.client.lines().size() == 1);
  const json::value error = parse(h.client.lines()[0]);
  CHECK(error.at("id").as_int64() == 5);
  CHECK(std::string_view(error.at("error").at("message").as_string())
            .starts_with("MCP server killed by signal 15"));
  CHECK(h.session.exit_status() == 128 + SIGTERM);
}

TEST_CASE("session: SIGTERM goes to the server's group, and one that ignores it is killed") {
  auto settings = test_settings();
  settings.lifecycle.kill_timeout = 100ms;
  Harness h(settings);
  h.server.obeys_sigterm = false;
  h.session.on_request(SystemRequest::kTerminate);
  REQUIRE(h.run_until(Phase::kDone));
  // Passed on at once, again when the grace (the kill timeout) is over, then SIGKILL.
  CHECK(h.server.stops ==
        std::vector{StopLevel::kTerminate, StopLevel::kTerminate, StopLevel::kKill});
  CHECK(h.session.exit_status() == 128 + SIGKILL);
}

TEST_CASE("session: a client that stops reading is taken as gone") {
  Harness h;
  h.client.stop_reading();
  h.server.writes(R"({"jsonrpc":"2.0","method":"notifications/message","params":{}})");
  REQUIRE(h.run_until([&] { return h.server_reads.ended(); }));  // its input is closed
  CHECK_FALSE(h.session.status().client_connected);
  h.server_exits(exited(0));
  REQUIRE(h.run_until(Phase::kDone));
  CHECK(h.session.exit_status() == 0);
}

TEST_CASE("session: an output held open after the server's exit is given up at a deadline") {
  auto settings = test_settings();
  settings.lifecycle.kill_timeout = 100ms;
  Harness h(settings);
  h.server.end(exited(0), FakeServer::Output::kHeldOpen);
  const auto exited_at = std::chrono::steady_clock::now();
  h.session.on_request(SystemRequest::kServerChanged);
  CHECK(h.session.phase() == Phase::kServerExited);
  REQUIRE(h.run_until(Phase::kDone));
  // The kill timeout and 500 ms more.
  CHECK(std::chrono::steady_clock::now() - exited_at >= 600ms);
  CHECK(h.phases ==
        std::vector{Phase::kServerExited, Phase::kFinishing, Phase::kDelivered, Phase::kDone});
}

TEST_CASE("session: SIGTERM while lingering ends the linger at once") {
  auto settings = test_settings();
  settings.telemetry.metrics_listen = "127.0.0.1:0";
  settings.telemetry.metrics_linger = 60s;
  Harness h(settings);
  h.server_exits(exited(0));
  REQUIRE(h.run_until(Phase::kDelivered));
  REQUIRE(h.run_until([&] { return h.client.ended(); }));  // the client is not kept waiting
  CHECK(h.session.phase() == Phase::kDelivered);           // lingering
  h.session.on_request(SystemRequest::kTerminate);
  REQUIRE(h.run_until(Phase::kDone, 5s));
  CHECK(h.server.stops.empty());  // it was gone already: nothing passed on
}

TEST_CASE("session: the server ends once it both exited and closed its output, either first") {
  using enum Phase;
  CHECK(next_phase(kRelaying, SessionEvent::kServerExited) == kServerExited);
  CHECK(next_phase(kServerExited, SessionEvent::kServerOutputEnded) == kFinishing);
  CHECK(next_phase(kRelaying, SessionEvent::kServerOutputEnded) == kServerMute);
  CHECK(next_phase(kServerMute, SessionEvent::kServerExited) == kFinishing);
  CHECK(next_phase(kServerExited, SessionEvent::kOutputDeadline) == kFinishing);
  CHECK(next_phase(kServerMute, SessionEvent::kOutputDeadline) == kServerMute);
  CHECK(next_phase(kRelaying, SessionEvent::kDelivered) == kRelaying);
  CHECK(next_phase(kFinishing, SessionEvent::kDelivered) == kDelivered);
  CHECK(next_phase(kRelaying, SessionEvent::kEnded) == kDone);
}

TEST_CASE("session: no event takes a phase back") {
  const std::vector phases{Phase::kRelaying,  Phase::kServerMute, Phase::kServerExited,
                           Phase::kFinishing, Phase::kDelivered,  Phase::kDone};
  const std::vector events{SessionEvent::kServerExited, SessionEvent::kServerOutputEnded,
                           SessionEvent::kOutputDeadline, SessionEvent::kDelivered,
                           SessionEvent::kEnded};
  for (const Phase phase : phases) {
    for (const SessionEvent event : events) {
      INFO(to_string(phase) << " + event " << static_cast<int>(event));
      CHECK(next_phase(phase, event) >= phase);
    }
  }
}
