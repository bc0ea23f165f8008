#pragma once
// One proxied session: the client's streams on one side, the MCP server's on the other, each
// line relayed through the Interceptor, and the session's way to its end (docs/architecture.md,
// Lifecycle).
//
// Everything it works with is handed to it: the four streams, the server process (behind
// ServerProcess) and the Interceptor; the operating system's requests come in through
// on_request. So a test can drive a whole session with pipes and a fake server, and proxy.cpp
// only wires the real ones.
//
// How far the session has come is one Phase, changed only by next_phase() (pure, below) through
// Session::advance. The client's presence is a separate fact: it can leave in any phase.
//
// Executor: one io_context thread; every task of the session runs on it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/settings.hpp"
#include "jsonrpc/line_framer.hpp"
#include "proxy/byte_stream.hpp"
#include "proxy/child_process.hpp"
#include "proxy/interceptor.hpp"
#include "proxy/message_writer.hpp"
#include "proxy/server_shutdown.hpp"
#include "proxy/system_signals.hpp"

namespace ctxguard::proxy {

// How far the session has come towards its end, in order: a phase never goes back.
enum class Phase {
  kRelaying,      // the server runs and its output is open: lines go both ways
  kServerMute,    // the server closed its output but runs on: it can answer nothing, and is stopped
  kServerExited,  // the server exited; what it wrote last is still read (up to a deadline)
  kFinishing,     // the server has ended: requests in flight get errors, the client's output ends
  kDelivered,     // all of it reached the client; left: the server's group, --metrics-linger
  kDone,          // the event loop is stopped
};

std::string_view to_string(Phase phase);

// What moves the session from one phase to the next.
enum class SessionEvent {
  kServerExited,       // the server's process was reaped
  kServerOutputEnded,  // its stdout reached end-of-file (or failed)
  kOutputDeadline,     // it exited, and its output stayed open past the kill timeout
  kDelivered,          // everything for the client was written and its output closed
  kEnded,              // nothing more to do (lingered, the client stopped reading, internal error)
};

// The phase `event` leads to from `phase`; `phase` itself when the event changes nothing there.
Phase next_phase(Phase phase, SessionEvent event);

// The session's streams: what it reads from and writes to each peer.
struct SessionStreams {
  ByteStream client_in;
  ByteStream client_out;
  ByteStream server_in;   // the server's stdin
  ByteStream server_out;  // the server's stdout
  // Called once everything for the client was written and client_out closed; ctxguard's own
  // stdout still holds the client's pipe open, and the client must see its end now even when
  // the session lingers (StdioStreams::close_stdout).
  std::function<void()> client_output_closed;
};

// What the session reports of itself (StatusReport turns it into /metrics and /health).
struct SessionStatus {
  bool client_connected = true;
  ProcessId server_pid = 0;
  std::optional<ExitStatus> server_exit;
  std::uint64_t messages_from_client = 0;
  std::uint64_t messages_from_server = 0;
  std::uint64_t oversized_lines_dropped = 0;
  std::size_t queued_to_client_bytes = 0;
  std::size_t queued_to_server_bytes = 0;
};

class Session {
 public:
  // Called on the io thread: SystemRequest::kReload (reload the configuration, reopen the record
  // file), and
  // every change of phase once it has happened (the session logs it at debug itself).
  struct Hooks {
    std::function<void()> on_hangup;
    std::function<void(Phase)> on_phase;
  };

  // `server` and `interceptor` outlive the session.
  Session(boost::asio::io_context& io, const config::Settings& settings, SessionStreams streams,
          ServerProcess& server, Interceptor& interceptor, Hooks hooks = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts reading and writing; the session then runs with the io_context until it stops it
  // (Phase::kDone).
  void start();

  // What the session does with each request of the operating system (SystemSignals delivers
  // them; tests call it directly).
  void on_request(SystemRequest request);

  // A reload's new profile: new calls get it; calls in flight keep theirs. When what tools/list
  // shows depends on the change, a connected client is told to list the tools again.
  void apply_profile(config::ProfilePtr next);

  Phase phase() const { return phase_; }
  SessionStatus status() const;
  // ctxguard's exit status: the server's (128 + signal when killed), or kExitInternal.
  int exit_status() const;

 private:
  using Direction = session::Direction;

  void spawn(boost::asio::awaitable<void> task);
  // The one place the phase changes, and what entering each phase starts.
  void advance(SessionEvent event);

  boost::asio::awaitable<void> pump(Direction direction, ByteStream& input);
  boost::asio::awaitable<void> forward(Direction direction, const jsonrpc::LineFramer::Line& line);
  MessageWriter& destination(Direction direction);
  void input_ended(Direction direction);
  boost::asio::awaitable<void> notify_client(std::string message);
  // The interceptor may hold lines until a deadline of its own: a timer for each new one.
  void watch_deadline();
  boost::asio::awaitable<void> release_at(std::chrono::steady_clock::time_point deadline);
  boost::asio::awaitable<void> write_to_server();
  boost::asio::awaitable<void> write_to_client();

  void check_server();
  void stop_leftovers();
  void client_gone(std::string_view why);
  void close_server_input();
  boost::asio::awaitable<void> stop_mute_server();
  boost::asio::awaitable<void> finish_by_deadline();
  boost::asio::awaitable<void> finish();
  boost::asio::awaitable<void> answer_abandoned();
  boost::asio::awaitable<void> linger();
  void stop_lingering();
  boost::asio::awaitable<void> stop_after(std::chrono::milliseconds timeout);

  boost::asio::io_context& io_;
  const config::Settings& settings_;
  ServerProcess& server_;
  Interceptor& interceptor_;
  Hooks hooks_;
  ServerShutdown shutdown_;
  ByteStream client_in_;
  ByteStream server_out_;
  MessageWriter to_server_;
  MessageWriter to_client_;
  std::function<void()> client_output_closed_;
  Phase phase_ = Phase::kRelaying;
  bool client_connected_ = true;
  // The server's exit is being handled: stopping what it left running waits for the group, and
  // that wait looks at the server again (check_server) before the phase has moved on.
  bool server_exit_handled_ = false;
  bool internal_error_ = false;
  std::optional<std::chrono::steady_clock::time_point> watched_deadline_;
  // --metrics-linger still to come: zero without the endpoint, or once SIGINT/SIGTERM cut it.
  std::chrono::milliseconds linger_;
  boost::asio::steady_timer linger_timer_;
  std::uint64_t messages_from_client_ = 0;
  std::uint64_t messages_from_server_ = 0;
  std::uint64_t oversized_lines_dropped_ = 0;
};

}  // namespace ctxguard::proxy
