#include "proxy/proxy.hpp"

#include <signal.h>

#include <chrono>
#include <exception>
#include <string>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include "jsonrpc/line_framer.hpp"
#include "jsonrpc/message.hpp"
#include "proxy/child_process.hpp"
#include "proxy/config_reloader.hpp"
#include "proxy/interceptor.hpp"
#include "proxy/message_writer.hpp"
#include "proxy/server_shutdown.hpp"
#include "proxy/stdio_streams.hpp"
#include "proxy/telemetry_edges.hpp"
#include "spill/spill_file.hpp"
#include "telemetry/call_telemetry.hpp"

namespace ctxguard::proxy {
namespace {

namespace asio = boost::asio;
using asio::awaitable;
using session::Direction;
using std::chrono::milliseconds;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
// A server that exits closes its output first: how long its exit may take to be seen before an
// ended output is taken for a server that lives on without one.
constexpr milliseconds kExitAfterOutputGrace{200};
// Bytes queued towards one peer before its producer is made to wait.
constexpr std::size_t kWriterHighWaterBytes = std::size_t{8} << 20;

std::string_view sender(Direction direction) {
  return direction == Direction::kClientToServer ? "client" : "server";
}

class Session {
 public:
  Session(asio::io_context& io, const config::Settings& settings,
          const config::ConfigSources& sources, const config::ProfilePtr& profile,
          asio::signal_set& signals, ChildProcess child, const cursor::CursorCodec& codec,
          std::unique_ptr<telemetry::RecordWriter> record_file)
      : io_(io),
        settings_(settings),
        telemetry_(std::move(record_file)),
        interceptor_(profile, codec),
        reloader_(io, sources, profile,
                  [this](config::ProfilePtr next) { apply_profile(std::move(next)); }),
        signals_(signals),
        child_(std::move(child)),
        shutdown_(io, child_, settings.lifecycle.kill_timeout, [this] { check_child(); }),
        stdio_(io.get_executor()),
        server_out_(io, child_.take_stdout()),
        to_server_(asio::posix::stream_descriptor(io, child_.take_stdin()), kWriterHighWaterBytes,
                   "server"),
        to_client_(std::move(stdio_.out()), kWriterHighWaterBytes, "client") {}

  Interceptor& interceptor() { return interceptor_; }

  // /metrics, /health (and an index at /) for the --metrics-listen endpoint.
  HttpAnswer http(std::string_view target) const {
    return answer_status_request(target, telemetry_.traffic(), status());
  }

  // The end of a lingering session (SIGINT/SIGTERM while /metrics stays up).
  void stop_lingering() {
    linger_cut_ = true;  // also before the wait has begun
    if (linger_timer_ != nullptr) linger_timer_->cancel();
  }

  void start() {
    interceptor_.set_call_sink([this](telemetry::CallEvent&& event) {
      telemetry_.record(std::move(event), std::chrono::steady_clock::now());
    });
    spawn(pump(Direction::kClientToServer, stdio_.in()));
    spawn(pump(Direction::kServerToClient, server_out_));
    spawn(write_to_server());
    spawn(write_to_client());
    spawn(watch_signals());
    reloader_.start();
    check_child();  // it may have exited before the first SIGCHLD could be seen
  }

  telemetry::ProcessStatus status() const {
    telemetry::ProcessStatus status;
    status.version = CTXGUARD_VERSION;
    status.started = started_wall_;
    status.uptime = std::chrono::steady_clock::now() - started_;
    status.server_pid = child_.pid();
    status.server_running = !child_.exit_status().has_value();
    if (!status.server_running) status.server_exit = child_.exit_status()->describe();
    status.client_connected = !client_gone_;
    status.cache = interceptor_.cache().stats();
    status.cache_max_bytes = interceptor_.cache().max_bytes();
    status.reloads_applied = reloader_.reloads_applied();
    status.reloads_refused = reloader_.reloads_refused();
    if (telemetry_.file() != nullptr) status.telemetry_file = telemetry_.file()->counters();
    status.messages_from_client = messages_from_client_;
    status.messages_from_server = messages_from_server_;
    status.oversized_lines_dropped = oversized_lines_dropped_;
    status.non_protocol_lines_dropped = interceptor_.non_protocol_lines_dropped();
    status.client_requests_in_flight = interceptor_.router().in_flight(Direction::kClientToServer);
    status.server_requests_in_flight = interceptor_.router().in_flight(Direction::kServerToClient);
    status.queued_to_client_bytes = to_client_.queued_bytes();
    status.queued_to_server_bytes = to_server_.queued_bytes();
    status.oversize_alarm = telemetry_.alarm().options();
    status.oversize_window = telemetry_.alarm().current(std::chrono::steady_clock::now());
    status.oversize_alerts = telemetry_.alarm().alerts();
    return status;
  }

  int exit_status() const {
    if (internal_error_) return kExitInternal;
    const auto& status = child_.exit_status();
    return status ? status->shell_status() : kExitInternal;
  }

 private:
  // Every task of the session runs through here. Nothing on the data path throws by design; if
  // something does anyway (allocation failure, a bug), it is logged once and the session ends
  // with kExitInternal instead of one direction silently stopping while the other goes on.
  void spawn(awaitable<void> task) {
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
      io_.stop();
    });
  }

  // A reload's new profile: new calls get it; calls in flight keep theirs. When what tools/list
  // shows depends on the change (observe mode, ctxguard_fetch's limits), the client is told to
  // list the tools again.
  void apply_profile(config::ProfilePtr next) {
    const bool relist = !next->lists_tools_like(*interceptor_.profile());
    interceptor_.set_profile(std::move(next), std::chrono::steady_clock::now());
    if (!relist || client_gone_) return;
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

  awaitable<void> notify_client(std::string message) {
    co_await to_client_.send(std::move(message));
  }

  MessageWriter& destination(Direction direction) {
    return direction == Direction::kClientToServer ? to_server_ : to_client_;
  }

  awaitable<void> pump(Direction direction, asio::posix::stream_descriptor& input) {
    jsonrpc::LineFramer framer(settings_.max_message_bytes);
    // Once finish() has begun, what the client sends can no longer be answered: it stays unread,
    // so every request that was read is among those finish() answers with an error.
    const auto unread = [&] { return direction == Direction::kClientToServer && finishing_; };
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
        if (ec != asio::error::eof) {
          spdlog::warn("reading from the {} failed: {}", sender(direction), ec.message());
        }
        break;
      }
    }
    if (direction == Direction::kClientToServer) {
      client_gone("closed its input");
    } else {
      spdlog::debug("the server closed its output");
      server_output_done_ = true;
      check_child();
      if (child_.exit_status()) {
        maybe_finish();
      } else if (!shutdown_.under_way()) {  // else it is being stopped (client gone, signal)
        spawn(stop_mute_server());
      }
    }
  }

  // The server's output ended but the process lives on: it can answer nothing more, so waiting
  // for it would leave every request in flight waiting for ever. It is stopped like a server whose
  // client has gone (input closed, then SIGTERM, then SIGKILL); its exit then answers them.
  awaitable<void> stop_mute_server() {
    const bool exited = co_await shutdown_.wait_until(
        [this] { return child_.exit_status().has_value(); }, kExitAfterOutputGrace);
    if (exited || shutdown_.under_way()) co_return;  // finishing, or being stopped meanwhile
    spdlog::warn(
        "the server (pid {}) closed its output but is still running; it can answer "
        "nothing more: closing its input and stopping it",
        child_.pid());
    close_server_input();
  }

  // The server's input ends (what is queued for it is written first); a server that does not
  // exit within the shutdown timeout is stopped.
  void close_server_input() {
    to_server_.close();
    spawn(shutdown_.escalate(settings_.lifecycle.shutdown_timeout));
  }

  awaitable<void> forward(Direction direction, const jsonrpc::LineFramer::Line& line) {
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
    if (verdict.action == Verdict::Action::kDrop) co_return;
    if (verdict.action == Verdict::Action::kReply) {
      // Back to the sender: a ctxguard_fetch answer, or the refusal of an oversized request.
      co_await destination(opposite(direction)).send(std::move(verdict.text));
      co_return;
    }
    // Copy before the first suspension: the framer reuses its buffer for the next read.
    std::string text =
        verdict.action == Verdict::Action::kSend ? std::move(verdict.text) : std::string(line.text);
    // GCC 12 miscompiles `co_await` inside an if-condition (it emits ud2): await into a local.
    const bool sent = co_await destination(direction).send(std::move(text));
    if (!sent) {
      spdlog::debug("{} -> {}: message dropped, the stream is closed", sender(direction),
                    destination(direction).peer());
    }
  }

  awaitable<void> write_to_server() { co_await to_server_.run(); }

  awaitable<void> write_to_client() {
    const auto error = co_await to_client_.run();
    if (error) client_gone("stopped reading its input");
  }

  awaitable<void> watch_signals() {
    while (true) {
      auto [ec, signal] = co_await signals_.async_wait(kUseTuple);
      if (ec) co_return;
      switch (signal) {
        case SIGCHLD:
          check_child();
          break;
        case SIGINT:
        case SIGTERM:
          if (finishing_) {
            stop_lingering();
            break;
          }
          spdlog::info("received {}; passing it to the server", ::strsignal(signal));
          child_.signal_group(signal);
          spawn(shutdown_.escalate(settings_.lifecycle.kill_timeout));
          break;
        case SIGHUP:
          reloader_.reload_now("received SIGHUP");
          if (telemetry_.file() != nullptr) telemetry_.file()->reopen();  // after logrotate
          break;
        default:
          break;
      }
    }
  }

  // Called on SIGCHLD and from every poll while stopping: whichever reaps the server first, its
  // exit is handled exactly once: a poll that reaped it without handling it would leave the
  // session waiting for a SIGCHLD that has already come.
  void check_child() {
    child_.try_wait();  // also reaps what the server left behind
    if (!child_.exit_status() || exit_handled_) return;
    exit_handled_ = true;
    const ExitStatus& status = *child_.exit_status();
    if (client_gone_) {
      spdlog::info("server {}", status.describe());
    } else {
      spdlog::warn("server {} while the client was still connected", status.describe());
    }
    // Whatever the server started may still run and may still hold its stdout open: it gets
    // SIGTERM now, whatever escalation is under way, and SIGKILL after the kill timeout.
    if (child_.group_alive()) {
      spdlog::info("stopping what the server left running (process group {})", child_.pid());
      child_.signal_group(SIGTERM);
      spawn(shutdown_.kill_leftovers());
    }
    spawn(finish_by_deadline());
    maybe_finish();
  }

  void client_gone(std::string_view why) {
    if (client_gone_) return;
    client_gone_ = true;
    spdlog::info("client {}; closing the server's input", why);
    close_server_input();
  }

  // A process outside the group (or a daemon) may keep the server's stdout open forever; do not
  // wait for its end-of-file beyond the kill timeout and a little more.
  awaitable<void> finish_by_deadline() {
    asio::steady_timer timer(io_, settings_.lifecycle.kill_timeout + milliseconds(500));
    co_await timer.async_wait(kUseTuple);
    if (!server_output_done_) {
      spdlog::warn("the server exited but its output is still open; finishing without it");
      server_output_done_ = true;
      maybe_finish();
    }
  }

  void maybe_finish() {
    if (finishing_ || !child_.exit_status() || !server_output_done_) return;
    finishing_ = true;
    spawn(finish());
  }

  // The server is gone and all it wrote has been relayed: answer what it never answered.
  awaitable<void> finish() {
    const std::string reason = "MCP server " + child_.exit_status()->describe();
    const auto abandoned = interceptor_.router().abandon_client_requests();
    if (!abandoned.empty()) {
      spdlog::warn("answering {} request(s) still in flight with an error: {}", abandoned.size(),
                   reason);
    }
    // A client that stops reading must not keep ctxguard alive: sends below may wait for space.
    spawn(stop_after(settings_.lifecycle.kill_timeout));
    for (const Router::Pending& request : abandoned) {
      co_await to_client_.send(jsonrpc::make_error_response(
          request.id, jsonrpc::kConnectionClosed, reason + " before answering " + request.method));
    }
    to_client_.close();
    co_await to_client_.wait_done();
    stdio_.close_stdout();  // the client sees the end of its stream now, even if we linger
    delivered_ = true;
    if (child_.group_alive()) {
      // No process of the server may outlive ctxguard; SIGKILL is prompt but not instant.
      child_.signal_group(SIGKILL);
      co_await shutdown_.wait_gone(milliseconds(1000));
    }
    co_await linger();
    io_.stop();
  }

  // --metrics-linger: the client has its end of stream; a scraper gets the final figures and
  // /health says why the server is gone. SIGINT/SIGTERM cut it short.
  awaitable<void> linger() {
    const milliseconds linger = settings_.telemetry.metrics_linger;
    if (linger.count() <= 0 || !settings_.telemetry.metrics_listen || linger_cut_) co_return;
    spdlog::info("keeping /metrics and /health up for {:.1f} s (--metrics-linger)",
                 std::chrono::duration<double>(linger).count());
    asio::steady_timer timer(io_, linger);
    linger_timer_ = &timer;
    co_await timer.async_wait(kUseTuple);
    linger_timer_ = nullptr;
  }

  // Ends the session once the client has read nothing for `timeout`; one that reads, however
  // slowly, gets everything (a fixed deadline cut a 64 MiB answer short on a loaded machine).
  awaitable<void> stop_after(milliseconds timeout) {
    asio::steady_timer timer(io_);
    for (std::uint64_t seen = ~std::uint64_t{0}; seen != to_client_.written_bytes();) {
      seen = to_client_.written_bytes();
      timer.expires_after(timeout);
      co_await timer.async_wait(kUseTuple);
      if (delivered_) co_return;  // all was delivered: finish() ends the session (after lingering)
    }
    spdlog::warn("the client read nothing for {} ms; the last messages are lost", timeout.count());
    io_.stop();
  }

  asio::io_context& io_;
  const config::Settings& settings_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  const std::chrono::system_clock::time_point started_wall_ = std::chrono::system_clock::now();
  telemetry::CallTelemetry telemetry_;
  Interceptor interceptor_;
  ConfigReloader reloader_;
  asio::signal_set& signals_;
  ChildProcess child_;
  ServerShutdown shutdown_;
  StdioStreams stdio_;
  asio::posix::stream_descriptor server_out_;
  MessageWriter to_server_;
  MessageWriter to_client_;
  bool client_gone_ = false;
  bool server_output_done_ = false;
  bool finishing_ = false;
  bool internal_error_ = false;
  bool exit_handled_ = false;
  bool delivered_ = false;  // finish() got everything to the client
  asio::steady_timer* linger_timer_ = nullptr;
  bool linger_cut_ = false;
  std::uint64_t messages_from_client_ = 0;
  std::uint64_t messages_from_server_ = 0;
  std::uint64_t oversized_lines_dropped_ = 0;
};

}  // namespace

int run_proxy(const config::Settings& settings, const config::ConfigSources& sources,
              const config::ProfilePtr& profile) {
  become_subreaper();
  // A configured secret keeps cursors valid across restarts of ctxguard (not of its cache).
  const cursor::CursorCodec codec =
      settings.budget.cursor_secret
          ? cursor::CursorCodec({*settings.budget.cursor_secret}, settings.budget.cursor_ttl)
          : cursor::CursorCodec::with_random_key(settings.budget.cursor_ttl);
  asio::io_context io(1);
  // Installed before the child exists so its SIGCHLD cannot be missed.
  asio::signal_set signals(io, SIGCHLD, SIGINT, SIGTERM);
  signals.add(SIGHUP);

  // --spill-dir is checked before the server starts: a bad directory is a start-up error.
  std::optional<spill::SpillDirectory> spill_dir;
  if (settings.budget.summary.spill_dir) {
    try {
      spill_dir.emplace(*settings.budget.summary.spill_dir);
    } catch (const std::exception& error) {
      spdlog::error("{}", error.what());
      return kExitCannotStart;
    }
  }

  // Telemetry's file and endpoint are start-up edges too: one that cannot work stops ctxguard
  // before the server starts. The endpoint answers once the session exists (in io.run()).
  Session* session_ptr = nullptr;
  auto edges =
      open_telemetry_edges(settings.telemetry, io, [&session_ptr](std::string_view target) {
        return session_ptr != nullptr ? session_ptr->http(target)
                                      : HttpAnswer{503, "text/plain; charset=utf-8", "starting\n"};
      });
  if (const int* exit_status = std::get_if<int>(&edges)) return *exit_status;
  TelemetryEdges& telemetry = std::get<TelemetryEdges>(edges);

  auto child = ChildProcess::spawn(settings.server_command);
  if (!child) {
    spdlog::error("cannot start the server '{}': {}", settings.server_command.front(),
                  child.error().message());
    return kExitCannotStart;
  }
  spdlog::info("server started: pid={} command={}", child->pid(), settings.server_command.front());
  spdlog::debug("server command line: {}", fmt::join(settings.server_command, " "));

  Session session(io, settings, sources, profile, signals, std::move(*child), codec,
                  std::move(telemetry.record_file));
  session_ptr = &session;
  if (spill_dir) session.interceptor().set_spill_writer(spill::pipeline_writer(*spill_dir));
  session.start();
  io.run();
  session_ptr = nullptr;
  if (telemetry.metrics) telemetry.metrics->stop();
  return session.exit_status();
}

}  // namespace ctxguard::proxy
