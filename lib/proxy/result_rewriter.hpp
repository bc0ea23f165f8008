#pragma once
// The Interceptor's part for the answers the budget pipeline may rewrite: tools/call results,
// tasks/result results of task-augmented calls, the final result a completed tasks/get carries
// (the tasks extension), and resources/read results with long text (chunked). Each such answer
// gets its call record in the line's context (an error response to a call too); observe mode
// leaves the answer as it came and records what enforce would have sent. No I/O.

#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "cursor/cursor_codec.hpp"
#include "mcp/tool_list.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/rewrite/result_pipeline.hpp"
#include "proxy/answer.hpp"
#include "proxy/call_records.hpp"
#include "proxy/task_tools.hpp"
#include "telemetry/answer_sampler.hpp"
#include "telemetry/call_event.hpp"

namespace ctxguard::proxy {

class ResultRewriter {
 public:
  // Rewrites into `cache` with `codec`'s cursors; hints name ctxguard's tools as `names` says.
  ResultRewriter(const cursor::CursorCodec& codec, pipeline::ResultCache& cache,
                 const mcp::OwnToolNames& names, const CallRecords& records)
      : pipeline_(codec, cache, names), records_(records) {}

  // --sample-answers: the sampler every answer sent is offered to (null: none).
  void set_answer_sampler(telemetry::AnswerSampler* sampler) { sampler_ = sampler; }
  void set_spill_writer(pipeline::ResultPipeline::SpillWriter writer) {
    pipeline_.set_spill_writer(std::move(writer));
  }

  // `response` answers the request `answer.route` names; `result` is its result object (null for
  // an error response). Rewrites it in place when it is one of the answers above; true when it
  // changed.
  bool rewrite(boost::json::value& response, boost::json::object* result, const Answer& answer);

 private:
  // The tool result in `slot` (a response's `result`, or the `result` of a completed task),
  // rewritten in place; true when it changed.
  bool rewrite_tool_result(boost::json::value& slot, std::string_view tool, const Answer& answer,
                           telemetry::CallEvent& event);
  // The tasks extension's tasks/get: a completed task's tool result, rewritten as one.
  bool rewrite_task_state(boost::json::object& state, const Answer& answer);
  // A record of `kind` for `tool`, answering the response `answer` (in the line's records).
  telemetry::CallEvent& add_event(telemetry::CallKind kind, std::string_view tool,
                                  const Answer& answer);

  pipeline::ResultPipeline pipeline_;
  const CallRecords& records_;
  TaskTools task_tools_;
  telemetry::AnswerSampler* sampler_ = nullptr;
};

}  // namespace ctxguard::proxy
