#include "proxy/session.hpp"

#include <cstring>
#include <exception>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "jsonrpc/message.hpp"
#include "proxy/proxy.hpp"
#include "proxy/use_tuple.hpp"

namespace ctxguard::proxy {
namespace {

namespace asio = boost::asio;
using asio::awaitable;
using session::Direction;
using std::chrono::milliseconds;

// A server that exits closes its output first: how long its exit may take to be seen before an
// ended output is taken for a server that lives on without one.
constexpr milliseconds kExitAfterOutputGrace{200};
// Bytes queued towards one peer before its producer is made to wait.
constexpr std::size_t kWriterHighWaterBytes = std::size_t{8} << 20;
// After the server's own exit, how much longer than the kill timeout its output may stay open.
constexpr milliseconds kOutputDeadlineSlack{500};
// How long the last kill of the server's tree may take to be seen.
constexpr milliseconds kFinalKillWait{1000};

}  // namespace

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::kRelaying:
      return "relaying";
    case Phase::kServerMute:
      return "server-mute";
    case Phase::kServerExited:
      return "server-exited";
    case Phase::kFinishing:
      return "finishing";
    case Phase::kDelivered:
      return "delivered";
    case Phase::kDone:
      return "done";
  }
  return "?";
}

Phase next_phase(Phase phase, SessionEvent event) {
  // The server has ended once it has both exited and closed its output (or the deadline for its
  // output passed): either half may come first.
  switch (event) {
    case SessionEvent::kServerExited:
      if (phase == Phase::kRelaying) return Phase::kServerExited;
      if (phase == Phase::kServerMute) return Phase::kFinishing;
      return phase;
    case SessionEvent::kServerOutputEnded:
      if (phase == Phase::kRelaying) return Phase::kServerMute;
      if (phase == Phase::kServerExited) return Phase::kFinishing;
      return phase;
    case SessionEvent::kOutputDeadline:
      return phase == Phase::kServerExited ? Phase::kFinishing : phase;
    case SessionEvent::kDelivered:
      return phase == Phase::kFinishing ? Phase::kDelivered : phase;
    case SessionEvent::kEnded:
      return Phase::kDone;
  }
  return phase;
}

Session::Session(asio::io_context& io, const config::Settings& settings, SessionStreams streams,
                 ServerProcess& server, Interceptor& interceptor, Hooks hooks)
    : io_(io),
      settings_(settings),
      server_(server),
      interceptor_(interceptor),
      hooks_(std::move(hooks)),
      shutdown_(io, server, settings.lifecycle.kill_timeout, [this] { check_server(); }),
      client_in_(std::move(streams.client_in)),
      server_out_(std::move(streams.server_out)),
      to_server_(std::move(streams.server_in), kWriterHighWaterBytes, "server"),
      to_client_(std::move(streams.client_out), kWriterHighWaterBytes, "client"),
      client_output_closed_(std::move(streams.client_output_closed)),
      linger_(settings.telemetry.metrics_listen ? settings.telemetry.metrics_linger
                                                : milliseconds(0)),
      linger_timer_(io) {}

void Session::start() {
  spawn(pump(Direction::kClientToServer, client_in_));
  spawn(pump(Direction::kServerToClient, server_out_));
  spawn(write_to_server());
  spawn(write_to_client());
  check_server();  // it may have exited before the first SystemRequest::kServerChanged was seen
}

SessionStatus Session::status() const {
  SessionStatus status;
  status.client_connected = client_connected_;
  status.server_pid = server_.pid();
  status.server_exit = server_.exit_status();
  status.messages_from_client = messages_from_client_;
  status.messages_from_server = messages_from_server_;
  status.oversized_lines_dropped = oversized_lines_dropped_;
  status.queued_to_client_bytes = to_client_.queued_bytes();
  status.queued_to_server_bytes = to_server_.queued_bytes();
  return status;
}

int Session::exit_status() const {
  if (internal_error_) return kExitInternal;
  const auto& status = server_.exit_status();
  return status ? status->shell_status() : kExitInternal;
}

// Every task of the session runs through here. Nothing on the data path throws by design; if
// something does anyway (allocation failure, a bug), it is logged once and the session ends
// with kExitInternal instead of one direction silently stopping while the other goes on.
void Session::spawn(awaitable<void> task) {
  asio::co_spawn(io_, std::move(task), [this](const std::exception_ptr& error) {
    if (!error) return;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& exception) {
      spdlog::critical("internal error, ending the session: {}", exception.what());
    } catch (...) {
      spdlog::critical("internal error, ending the session");
    }
    internal_error_ = true;
    advance(SessionEvent::kEnded);
  });
}

void Session::advance(SessionEvent event) {
  const Phase next = next_phase(phase_, event);
  if (next == phase_) return;
  spdlog::debug("session: {} -> {}", to_string(phase_), to_string(next));
  phase_ = next;
  if (hooks_.on_phase) hooks_.on_phase(next);
  switch (next) {
    case Phase::kServerMute:
      // When it is being stopped already (the client gone, a signal), that ends it.
      if (!shutdown_.under_way()) spawn(stop_mute_server());
      break;
    case Phase::kServerExited:
      spawn(finish_by_deadline());
      break;
    case Phase::kFinishing:
      spawn(finish());
      break;
    case Phase::kDone:
      io_.stop();
      break;
    case Phase::kRelaying:
    case Phase::kDelivered:
      break;
  }
}

void Session::apply_profile(config::ProfilePtr next) {
  const bool relist = interceptor_.set_profile(std::move(next), std::chrono::steady_clock::now());
  if (!relist || !client_connected_) return;
  // A modern client hears of changes only on the listen streams it opened for them.
  std::vector<std::string> notices = interceptor_.tools_list_changed();
  if (notices.empty()) {
    spdlog::info(
        "the tool list changes with this configuration; the client opened no listen stream "
        "for tool list changes, so it is not told");
    return;
  }
  spdlog::info("the tool list changes with this configuration; telling the client");
  for (std::string& notice : notices) spawn(notify_client(std::move(notice)));
}

awaitable<void> Session::notify_client(std::string message) {
  co_await to_client_.send(std::move(message));
}

MessageWriter& Session::destination(Direction direction) {
  return direction == Direction::kClientToServer ? to_server_ : to_client_;
}

awaitable<void> Session::pump(Direction direction, ByteStream& input) {
  jsonrpc::LineFramer framer(settings_.max_message_bytes);
  // Once the session finishes, what the client sends can no longer be answered: it stays unread,
  // so every request that was read is among those finish() answers with an error.
  const auto unread = [&] {
    return direction == Direction::kClientToServer && phase_ >= Phase::kFinishing;
  };
  while (true) {
    const std::span<char> space = framer.prepare();
    auto [ec, n] =
        co_await input.async_read_some(asio::buffer(space.data(), space.size()), kUseTuple);
    framer.commit(n);
    while (auto line = framer.next()) {
      if (unread()) co_return;
      co_await forward(direction, *line);
    }
    if (ec) {
      if (auto last = framer.finish(); last && !unread()) co_await forward(direction, *last);
      // Windows ends a pipe whose writer closed with ERROR_BROKEN_PIPE rather than end-of-file.
      if (ec != asio::error::eof && ec != asio::error::broken_pipe) {
        spdlog::warn("reading from the {} failed: {}", sender(direction), ec.message());
      }
      break;
    }
  }
  input_ended(direction);
}

void Session::input_ended(Direction direction) {
  if (direction == Direction::kClientToServer) {
    client_gone("closed its input");
    return;
  }
  spdlog::debug("the server closed its output");
  check_server();  // an exit seen first makes this the end of the server
  advance(SessionEvent::kServerOutputEnded);
}

awaitable<void> Session::forward(Direction direction, const jsonrpc::LineFramer::Line& line) {
  Verdict verdict;
  if (line.event == jsonrpc::LineFramer::Event::kOversized) {
    ++oversized_lines_dropped_;
    verdict = interceptor_.on_oversized(
        direction, line.text, line.tail, line.bytes, settings_.max_message_bytes,
        std::chrono::steady_clock::now(), std::chrono::system_clock::now());
  } else {
    ++(direction == Direction::kClientToServer ? messages_from_client_ : messages_from_server_);
    verdict = interceptor_.on_line(direction, line.text, std::chrono::steady_clock::now(),
                                   std::chrono::system_clock::now());
  }
  watch_deadline();
  // Copy before the first suspension: the framer reuses its buffer for the next read.
  std::optional<std::string> onward;
  if (verdict.action == Verdict::Action::kSend) onward = std::move(verdict.text);
  if (verdict.action == Verdict::Action::kForward) onward = std::string(line.text);
  if (verdict.action == Verdict::Action::kReply) {
    // Back to the sender: a ctxguard_fetch answer, or the refusal of an oversized request.
    verdict.to_sender.insert(verdict.to_sender.begin(), std::move(verdict.text));
  }
  for (std::string& back : verdict.to_sender) {
    co_await destination(opposite(direction)).send(std::move(back));
  }
  if (onward) {
    // GCC 12 miscompiles `co_await` inside an if-condition (it emits ud2): await into a local.
    const bool sent = co_await destination(direction).send(std::move(*onward));
    if (!sent) {
      spdlog::debug("{} -> {}: message dropped, the stream is closed", sender(direction),
                    destination(direction).peer());
    }
  }
  for (std::string& held : verdict.to_destination) {
    co_await destination(direction).send(std::move(held));
  }
}

// toolList compact: the client waits for its initialize result while ctxguard lists the
// server's tools; a server that does not answer that listing must not keep it waiting long.
void Session::watch_deadline() {
  const auto deadline = interceptor_.deadline();
  if (!deadline || deadline == watched_deadline_) return;
  watched_deadline_ = deadline;
  spawn(release_at(*deadline));
}

awaitable<void> Session::release_at(std::chrono::steady_clock::time_point deadline) {
  asio::steady_timer timer(io_, deadline);
  co_await timer.async_wait(kUseTuple);
  Released released = interceptor_.on_deadline(std::chrono::steady_clock::now());
  for (std::string& line : released.to_server) co_await to_server_.send(std::move(line));
  for (std::string& line : released.to_client) co_await to_client_.send(std::move(line));
}

awaitable<void> Session::write_to_server() { co_await to_server_.run(); }

awaitable<void> Session::write_to_client() {
  const auto error = co_await to_client_.run();
  if (error) client_gone("stopped reading its input");
}

void Session::on_request(SystemRequest request) {
  switch (request) {
    case SystemRequest::kServerChanged:
      check_server();
      break;
    case SystemRequest::kInterrupt:
    case SystemRequest::kTerminate: {
      if (phase_ >= Phase::kFinishing) {
        stop_lingering();
        break;
      }
      const StopLevel level =
          request == SystemRequest::kInterrupt ? StopLevel::kInterrupt : StopLevel::kTerminate;
      spdlog::info("received {}; passing it to the server", to_string(request));
      server_.stop(level);
      spawn(shutdown_.escalate(settings_.lifecycle.kill_timeout));
      break;
    }
    case SystemRequest::kReload:
      if (hooks_.on_hangup) hooks_.on_hangup();
      break;
  }
}

// Called on SystemRequest::kServerChanged and from every poll while stopping: whichever reaps
// the server first, its exit is handled exactly once: a poll that reaped it without handling it
// would leave the session waiting for a request that has already come.
void Session::check_server() {
  server_.try_wait();  // also reaps what the server left behind
  if (!server_.exit_status() || phase_ >= Phase::kServerExited || server_exit_handled_) return;
  server_exit_handled_ = true;
  const ExitStatus& status = *server_.exit_status();
  if (client_connected_) {
    spdlog::warn("server {} while the client was still connected", status.describe());
  } else {
    spdlog::info("server {}", status.describe());
  }
  stop_leftovers();
  advance(SessionEvent::kServerExited);
}

// Whatever the server started may still run and may still hold its stdout open: it is asked to
// terminate now, whatever escalation is under way, and killed after the kill timeout.
void Session::stop_leftovers() {
  if (!server_.group_alive()) return;
  spdlog::info("stopping what the server left running (process group {})", server_.pid());
  server_.stop(StopLevel::kTerminate);
  spawn(shutdown_.kill_leftovers());
}

void Session::client_gone(std::string_view why) {
  if (!client_connected_) return;
  client_connected_ = false;
  spdlog::info("client {}; closing the server's input", why);
  close_server_input();
}

// The server's input ends (what is queued for it is written first); a server that does not exit
// within the shutdown timeout is stopped.
void Session::close_server_input() {
  to_server_.close();
  spawn(shutdown_.escalate(settings_.lifecycle.shutdown_timeout));
}

// The server's output ended but the process lives on: it can answer nothing more, so waiting for
// it would leave every request in flight waiting for ever. It is stopped like a server whose
// client has gone (input closed, then terminate, then kill); its exit then answers them.
awaitable<void> Session::stop_mute_server() {
  const bool exited = co_await shutdown_.wait_until(
      [this] { return server_.exit_status().has_value(); }, kExitAfterOutputGrace);
  if (exited || shutdown_.under_way()) co_return;  // finishing, or being stopped meanwhile
  spdlog::warn(
      "the server (pid {}) closed its output but is still running; it can answer "
      "nothing more: closing its input and stopping it",
      server_.pid());
  close_server_input();
}

// A process outside the group (or a daemon) may keep the server's stdout open forever; do not
// wait for its end-of-file beyond the kill timeout and a little more.
awaitable<void> Session::finish_by_deadline() {
  asio::steady_timer timer(io_, settings_.lifecycle.kill_timeout + kOutputDeadlineSlack);
  co_await timer.async_wait(kUseTuple);
  if (phase_ != Phase::kServerExited) co_return;
  spdlog::warn("the server exited but its output is still open; finishing without it");
  advance(SessionEvent::kOutputDeadline);
}

// The server is gone and all it wrote has been relayed: answer what it never answered, end the
// client's stream, and stop.
awaitable<void> Session::finish() {
  // A client that stops reading must not keep ctxguard alive: the sends may wait for space.
  spawn(stop_after(settings_.lifecycle.kill_timeout));
  co_await answer_abandoned();
  to_client_.close();
  co_await to_client_.wait_done();
  if (client_output_closed_) client_output_closed_();  // seen by the client even if we linger
  advance(SessionEvent::kDelivered);
  if (server_.group_alive()) {
    // No process of the server may outlive ctxguard; a kill is prompt but not instant.
    server_.stop(StopLevel::kKill);
    co_await shutdown_.wait_gone(kFinalKillWait);
  }
  co_await linger();
  advance(SessionEvent::kEnded);
}

// Each client request the server never answered gets a JSON-RPC error naming how it ended.
awaitable<void> Session::answer_abandoned() {
  // What ctxguard held while it listed the server's tools goes first, as it came.
  // (A held request of the client's is among the abandoned ones: it gets its error below.)
  Released released = interceptor_.end_discovery(std::chrono::steady_clock::now());
  for (std::string& line : released.to_client) co_await to_client_.send(std::move(line));
  const std::string reason = "MCP server " + server_.exit_status()->describe();
  const auto abandoned = interceptor_.router().abandon_client_requests();
  if (!abandoned.empty()) {
    spdlog::warn("answering {} request(s) still in flight with an error: {}", abandoned.size(),
                 reason);
  }
  for (const Router::Pending& request : abandoned) {
    co_await to_client_.send(jsonrpc::make_error_response(
        request.id, jsonrpc::kConnectionClosed, reason + " before answering " + request.method));
  }
}

// --metrics-linger: the client has its end of stream; a scraper gets the final figures and
// /health says why the server is gone. SIGINT/SIGTERM cut it short.
awaitable<void> Session::linger() {
  if (linger_.count() <= 0) co_return;
  spdlog::info("keeping /metrics and /health up for {:.1f} s (--metrics-linger)",
               std::chrono::duration<double>(linger_).count());
  linger_timer_.expires_after(linger_);
  co_await linger_timer_.async_wait(kUseTuple);
}

// Also before the linger has begun: it then does not begin at all.
void Session::stop_lingering() {
  linger_ = milliseconds(0);
  linger_timer_.cancel();
}

// Ends the session once the client has read nothing for `timeout`; one that reads, however
// slowly, gets everything (a fixed deadline would cut a large answer short on a loaded machine).
awaitable<void> Session::stop_after(milliseconds timeout) {
  asio::steady_timer timer(io_);
  for (std::uint64_t seen = ~std::uint64_t{0}; seen != to_client_.written_bytes();) {
    seen = to_client_.written_bytes();
    timer.expires_after(timeout);
    co_await timer.async_wait(kUseTuple);
    if (phase_ >= Phase::kDelivered) co_return;  // finish() ends the session (after lingering)
  }
  spdlog::warn("the client read nothing for {} ms; the last messages are lost", timeout.count());
  advance(SessionEvent::kEnded);
}

}  // namespace ctxguard::proxy
