#pragma once
// The call records (telemetry::CallEvent) of what ctxguard answers: each made with the request's
// id and the client's name, and given to one sink when complete (docs/telemetry.md).

#include <chrono>
#include <functional>
#include <string_view>

#include <boost/json/value.hpp>

#include "mcp/protocol_state.hpp"
#include "pipeline/rewrite/result_pipeline.hpp"
#include "telemetry/call_event.hpp"

namespace ctxguard::proxy {

class CallRecords {
 public:
  using WallClock = std::chrono::system_clock;
  // Where records go, on the thread handling the line; telemetry::log_call_event when unset.
  using Sink = std::function<void(telemetry::CallEvent&&)>;

  explicit CallRecords(const mcp::ProtocolState& protocol) : protocol_(protocol) {}

  void set_sink(Sink sink) { sink_ = std::move(sink); }

  // A record of `kind` for `tool`, answering request `id`, with the client's name.
  telemetry::CallEvent make(telemetry::CallKind kind, std::string_view tool,
                            const boost::json::value& id, WallClock::time_point wall_now) const;
  void emit(telemetry::CallEvent&& event) const;

 private:
  const mcp::ProtocolState& protocol_;
  Sink sink_;
};

// What the pipeline says of an answer, into its record: tokens, items, stages, the limit that
// bound, the error; and the outcome they make.
void take_record(telemetry::CallEvent& event, pipeline::CallRecord&& record);

}  // namespace ctxguard::proxy
