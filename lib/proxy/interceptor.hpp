#pragma once
// Decides, for each line either peer sends, what goes out: the line itself, a rewritten line,
// or (for ctxguard_fetch) a reply ctxguard gives itself. No I/O: the session feeds it lines and
// sends what it returns, so everything here is testable without processes or sockets.
//
// What it rewrites (all else passes byte-identical):
//   - tools/call results (and tasks/result results of task-augmented calls): the budget pipeline;
//   - resources/read results: long text contents chunked;
//   - tools/list results: outputSchema removed, ctxguard_fetch appended on the last page;
//   - initialize and server/discover results: ctxguard's paragraph added to `instructions`;
//   - tasks/get results of the tasks extension that carry a tool's final result: that result, as
//     a tools/call result is.
// A rewrite that fails for any reason is logged and the original line goes out instead. A line
// from the server that is not a JSON-RPC message is dropped: only protocol reaches the client.
// Both protocol eras are followed (mcp::ProtocolState): what ctxguard composes itself fits the
// era of the request it answers.
//
// Every answered tools/call (forwarded, rewritten, or a JSON-RPC error), every chunked
// resources/read and every ctxguard_fetch gives one telemetry::CallEvent to the call sink.
//
// The configuration is a Profile swapped whole by set_profile (a reload). Each request keeps the
// profile it arrived under, and its answer is rewritten with that one: a reload never changes a
// call half-way. Tools in observe mode get their answers byte-identical; what enforce would have
// done is computed (nothing of it cached) and logged.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/profile.hpp"
#include "cursor/cursor_codec.hpp"
#include "jsonrpc/message.hpp"
#include "mcp/protocol_state.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/fetch/fetch_tool.hpp"
#include "pipeline/rewrite/result_pipeline.hpp"
#include "proxy/answer.hpp"
#include "proxy/call_records.hpp"
#include "proxy/line_context.hpp"
#include "proxy/own_tools.hpp"
#include "proxy/result_rewriter.hpp"
#include "proxy/tool_listing.hpp"
#include "proxy/verdict.hpp"
#include "session/session_router.hpp"
#include "telemetry/answer_sampler.hpp"
#include "telemetry/call_event.hpp"

namespace ctxguard::proxy {

class Interceptor {
 public:
  using Clock = std::chrono::steady_clock;
  using WallClock = std::chrono::system_clock;

  Interceptor(config::ProfilePtr profile, const cursor::CursorCodec& codec);

  // The configuration for requests from now on; the cache takes its new size at once. True when
  // the client's tool list changes with it (the client should be told: tools_list_changed()).
  bool set_profile(config::ProfilePtr profile, Clock::time_point now);
  const config::ProfilePtr& profile() const { return profile_; }

  Verdict on_line(session::Direction direction, std::string_view line, Clock::time_point now,
                  WallClock::time_point wall_now);

  // When what the Interceptor holds must go on even without the server's answer (the listing
  // of toolList compact); none when it holds nothing. The session calls on_deadline then.
  std::optional<Clock::time_point> deadline() const { return tool_listing_.deadline(); }
  Released on_deadline(Clock::time_point now) { return tool_listing_.on_deadline(now); }
  // The server is gone: what was held, for each peer.
  Released end_discovery(Clock::time_point now) { return tool_listing_.end(now); }

  // A line over --max-message-bytes (`bytes` long, `limit` the maximum) that the framer did not
  // keep; `head` and `tail` are its first and last bytes. It is never forwarded. A request
  // whose id can be read is refused to its sender (kReply, -32600); a response to a request in
  // flight becomes an error response for that request (kSend, -32603), handled like any answer
  // (telemetry, the router); anything else is dropped.
  Verdict on_oversized(session::Direction direction, std::string_view head, std::string_view tail,
                       std::size_t bytes, std::size_t limit, Clock::time_point now,
                       WallClock::time_point wall_now);

  // Where call records go, on the thread calling on_line; telemetry::log_call_event when unset.
  using CallSink = CallRecords::Sink;
  void set_call_sink(CallSink sink) { records_.set_sink(std::move(sink)); }
  // --sample-answers: the sampler every answer sent is offered to (null: none).
  void set_answer_sampler(telemetry::AnswerSampler* sampler) {
    results_.set_answer_sampler(sampler);
    own_tools_.set_answer_sampler(sampler);
  }

  Router& router() { return router_; }
  const Router& router() const { return router_; }
  void set_spill_writer(pipeline::ResultPipeline::SpillWriter writer) {
    results_.set_spill_writer(std::move(writer));
  }
  const pipeline::ResultCache& cache() const { return cache_; }

  // The messages that tell the client its tool list changed, as the session's era wants them
  // (none in a modern session without a listen stream that asked for them).
  std::vector<std::string> tools_list_changed() const { return protocol_.tools_list_changed(); }
  const mcp::ProtocolState& protocol() const { return protocol_; }
  // --client: the name of a client that gives none.
  void assume_client_name(std::string name) { protocol_.assume_client_name(std::move(name)); }
  // Lines from the server dropped because they were not JSON-RPC messages.
  std::uint64_t non_protocol_lines_dropped() const { return non_protocol_lines_dropped_; }

 private:
  // on_line, but for the holding of server lines while ctxguard lists the server's tools.
  Verdict relay_line(session::Direction direction, std::string_view line, LineContext& context);
  // What ctxguard does with a client message before it is routed: a verdict of its own (a reply
  // from its own tools, a notification dropped, a listing held), or nothing, the message maybe
  // redirected in place (a call through the call tool).
  struct OwnCall {
    std::optional<Verdict> reply;
    bool redirected = false;
  };
  OwnCall take_client_message(jsonrpc::Message& message, LineContext& line);
  // A client message: what ProtocolState learns from it; the era of its (first) request.
  mcp::Era observe_client(const jsonrpc::Message& message);
  // A server message (one element of a batch): what ProtocolState learns from it.
  void observe_server(const boost::json::value& element, const Route& route);
  // A server line that is no JSON-RPC message (`why`), or a message that is none: dropped.
  Verdict drop_non_protocol(std::string_view line, std::string_view why);
  // Rewrites one response in place (tools/list and the instructions: ToolListing; tool results
  // and resources: ResultRewriter); true when it changed.
  bool rewrite_response(boost::json::value& response, const Answer& answer);
  // The line's records are complete once its verdict is known (`sent_bytes` sent): to the sink.
  void emit_events(LineContext& line, std::size_t sent_bytes);

  config::ProfilePtr profile_;
  Router router_;
  pipeline::ResultCache cache_;
  mcp::ProtocolState protocol_;
  CallRecords records_{protocol_};
  ToolListing tool_listing_{router_, protocol_, records_};
  ResultRewriter results_;
  OwnTools own_tools_;
  std::uint64_t non_protocol_lines_dropped_ = 0;
};

}  // namespace ctxguard::proxy
