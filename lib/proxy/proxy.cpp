#include "proxy/proxy.hpp"

#include <chrono>
#include <exception>
#include <optional>
#include <string>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>

#include "proxy/child_process.hpp"
#include "proxy/config_reloader.hpp"
#include "proxy/interceptor.hpp"
#include "proxy/session.hpp"
#include "proxy/status_report.hpp"
#include "proxy/stdio_streams.hpp"
#include "proxy/system_signals.hpp"
#include "proxy/telemetry_edges.hpp"
#include "spill/spill_file.hpp"
#include "telemetry/call_telemetry.hpp"

namespace ctxguard::proxy {
namespace {

namespace asio = boost::asio;

// The client on ctxguard's stdin and stdout, the server on the pipes to its child.
SessionStreams streams_of(asio::io_context& io, StdioStreams& stdio, ChildProcess& child) {
  return {std::move(stdio.in()), std::move(stdio.out()), child.take_stdin(io.get_executor()),
          child.take_stdout(io.get_executor()), [&stdio] { stdio.close_stdout(); }};
}

// A running proxy's parts, wired together; the Session does the work. Members are destroyed in
// reverse: the session's streams close before StdioStreams puts stdin's and stdout's flags back,
// and the ChildProcess, last, kills whatever is left of the server's group.
class Proxy {
 public:
  Proxy(asio::io_context& io, const config::Settings& settings,
        const config::ConfigSources& sources, const config::ProfilePtr& profile,
        SystemSignals& signals, ChildProcess child, const cursor::CursorCodec& codec,
        std::unique_ptr<telemetry::RecordWriter> record_file,
        std::unique_ptr<telemetry::AnswerSampler> sampler)
      : telemetry_(std::move(record_file), {}, std::move(sampler)),
        interceptor_(profile, codec),
        child_(std::move(child)),
        stdio_(io.get_executor()),
        session_(io, settings, streams_of(io, stdio_, child_), child_, interceptor_,
                 {.on_hangup = [this] { on_hangup(); }, .on_phase = {}}),
        reloader_(io, sources, profile,
                  [this](config::ProfilePtr next) { session_.apply_profile(std::move(next)); }),
        status_(interceptor_, reloader_, telemetry_) {
    interceptor_.assume_client_name(settings.assumed_client);
    interceptor_.set_answer_sampler(telemetry_.sampler());
    interceptor_.set_call_sink([this](telemetry::CallEvent&& event) {
      telemetry_.record(std::move(event), std::chrono::steady_clock::now());
    });
    signals.start(child_, [this](SystemRequest request) { session_.on_request(request); });
  }

  Interceptor& interceptor() { return interceptor_; }

  // /metrics, /health (and 404s) for the --metrics-listen endpoint.
  HttpAnswer http(std::string_view target) const {
    return status_.answer(target, session_.status());
  }

  void start() {
    reloader_.start();
    session_.start();
  }

  int exit_status() const { return session_.exit_status(); }

 private:
  void on_hangup() {
    reloader_.reload_now("received SIGHUP");
    if (telemetry_.file() != nullptr) telemetry_.file()->reopen();  // after logrotate
    if (telemetry_.sampler() != nullptr) telemetry_.sampler()->file().reopen();
  }

  telemetry::CallTelemetry telemetry_;
  Interceptor interceptor_;
  ChildProcess child_;
  StdioStreams stdio_;
  Session session_;
  ConfigReloader reloader_;
  StatusReport status_;
};

// The pipeline's spill writer over `dir` (which must outlive it): each part written to a file of
// its own; a write that fails is a warning, and the part is then served without a file.
pipeline::ResultPipeline::SpillWriter spill_writer(spill::SpillDirectory& dir) {
  return [&dir](std::string_view tool, std::string_view extension,
                std::string_view content) -> std::optional<pipeline::SpilledFile> {
    auto file = dir.write(tool, extension, content);
    if (!file) {
      spdlog::warn("cannot write a spill file in {}: {}", dir.dir().string(),
                   file.error().message());
      return std::nullopt;
    }
    std::string path = (*file)->path().string();
    return pipeline::SpilledFile{std::move(*file), std::move(path)};
  };
}

}  // namespace

int run_proxy(const config::Settings& settings, const config::ConfigSources& sources,
              const config::ProfilePtr& profile) {
  become_subreaper();
  // A configured secret keeps cursors valid across restarts of ctxguard (not of its cache).
  const cursor::CursorCodec codec =
      settings.process.cursor_secret
          ? cursor::CursorCodec({*settings.process.cursor_secret}, settings.process.cursor_ttl)
          : cursor::CursorCodec::with_random_key(settings.process.cursor_ttl);
  asio::io_context io(1);
  // Installed before the child exists so its exit cannot be missed.
  SystemSignals signals(io);

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
  // before the server starts. The endpoint answers once the proxy exists (in io.run()).
  std::optional<ListenAddress> metrics;
  if (settings.telemetry.metrics_listen) {
    auto address = parse_listen_address(*settings.telemetry.metrics_listen);
    if (!address) {
      spdlog::error("--metrics-listen: {}", address.error().message);
      return kExitUsage;
    }
    metrics = *address;
  }
  Proxy* proxy_ptr = nullptr;
  auto edges =
      open_telemetry_edges(settings.telemetry, metrics, io, [&proxy_ptr](std::string_view target) {
        return proxy_ptr != nullptr ? proxy_ptr->http(target)
                                    : HttpAnswer{503, "text/plain; charset=utf-8", "starting\n"};
      });
  if (!edges) {
    spdlog::error("{}", edges.error().message);
    return kExitCannotStart;
  }
  TelemetryEdges& telemetry = *edges;

  auto child = ChildProcess::spawn(settings.server_command);
  if (!child) {
    spdlog::error("cannot start the server '{}': {}", settings.server_command.front(),
                  child.error().message());
    return kExitCannotStart;
  }
  spdlog::info("server started: pid={} command={}", child->pid(), settings.server_command.front());
  spdlog::debug("server command line: {}", fmt::join(settings.server_command, " "));

  Proxy proxy(io, settings, sources, profile, signals, std::move(*child), codec,
              std::move(telemetry.record_file), std::move(telemetry.sampler));
  proxy_ptr = &proxy;
  if (spill_dir) proxy.interceptor().set_spill_writer(spill_writer(*spill_dir));
  proxy.start();
  io.run();
  proxy_ptr = nullptr;
  if (telemetry.metrics) telemetry.metrics->stop();
  return proxy.exit_status();
}

}  // namespace ctxguard::proxy
