#pragma once
// ctxguard's own tools, answered without the server: `ctxguard_fetch` from the result cache
// (docs/protocol.md 5), and the tools about the server's tools from its catalog
// (`ctxguard_fetch {"tool"}`, and in lazy mode the search tool and the call tool, which becomes
// the tools/call it stands for: docs/protocol.md 4.2). Every answer it gives has its call
// record; a failure inside one costs that answer, never the session.

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "config/profile.hpp"
#include "cursor/cursor_codec.hpp"
#include "jsonrpc/message.hpp"
#include "mcp/protocol_state.hpp"
#include "mcp/tool_list.hpp"
#include "mcp/tool_lookup.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/fetch/fetch_tool.hpp"
#include "proxy/call_records.hpp"
#include "proxy/line_context.hpp"
#include "telemetry/answer_sampler.hpp"

namespace ctxguard::proxy {

class OwnTools {
 public:
  // Answers from `cache`, about the tools `tool_list` saw, in the era `protocol` follows.
  OwnTools(const cursor::CursorCodec& codec, pipeline::ResultCache& cache,
           const mcp::ToolListEditor& tool_list, const mcp::ProtocolState& protocol,
           const CallRecords& records)
      : fetch_(codec, cache, tool_list.own_tool_names()),
        tool_list_(tool_list),
        protocol_(protocol),
        records_(records) {}

  // --sample-answers: the sampler every answer is offered to (null: none).
  void set_answer_sampler(telemetry::AnswerSampler* sampler) { sampler_ = sampler; }

  // What ctxguard does with a client message calling one of its tools.
  struct Outcome {
    std::optional<std::string> reply;  // the response to send back: the call was ctxguard's
    bool redirected = false;  // a call through the call tool, now in place the call it stands for
  };
  // `message` (a client's, of era `era`, arriving under `profile`): nothing when it calls none
  // of ctxguard's tools.
  Outcome answer(jsonrpc::Message& message, mcp::Era era, const config::Profile& profile,
                 LineContext& line);

 private:
  // A client's tools/call, read from a message that is one (nothing for anything else).
  struct ToolCall {
    const boost::json::value& id;
    boost::json::object& params;
    std::string_view name;
    const boost::json::value& arguments;  // null when absent
  };
  static std::optional<ToolCall> tool_call_of(jsonrpc::Message& message);

  std::optional<std::string> answer_fetch(const ToolCall& call, mcp::Era era,
                                          const config::Profile& profile, LineContext& line);
  // The reply to a ctxguard_fetch whose answer failed (an exception: a bug, or no memory).
  std::string fetch_failed(const boost::json::value& id, mcp::Era era, LineContext& line);
  Outcome answer_catalog_call(ToolCall& call, mcp::Era era, const config::Profile& profile,
                              LineContext& line);
  // The call tool: the tools/call it stands for, in place, or the refusal of a bad one.
  Outcome redirect_call(ToolCall& call, mcp::Era era, LineContext& line);
  std::string reply_lookup(const ToolCall& call, mcp::ToolLookup&& lookup, mcp::Era era,
                           LineContext& line);
  // The response to a tools/call answered with `result`, stamped for `era`, offered to the
  // sampler (`tool` names it there).
  std::string reply(const boost::json::value& id, boost::json::object&& result, mcp::Era era,
                    std::string_view tool, LineContext& line);

  pipeline::FetchTool fetch_;
  const mcp::ToolListEditor& tool_list_;
  const mcp::ProtocolState& protocol_;
  const CallRecords& records_;
  telemetry::AnswerSampler* sampler_ = nullptr;
};

}  // namespace ctxguard::proxy
