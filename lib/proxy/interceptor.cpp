#include "proxy/interceptor.hpp"

#include <exception>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/json/serialize.hpp>

#include "jsonrpc/partial_envelope.hpp"
#include "mcp/instructions.hpp"
#include "pipeline/metadata.hpp"
#include "support/json_writer.hpp"
#include "telemetry/call_log.hpp"

namespace ctxguard::proxy {

namespace json = boost::json;
using session::Direction;

namespace {

// Task ids remembered at most (a client that never fetches its tasks' results must not grow us).
constexpr std::size_t kMaxRememberedTasks = 4096;

std::string_view sender(Direction direction) {
  return direction == Direction::kClientToServer ? "client" : "server";
}

using telemetry::CallEvent;
using telemetry::CallKind;

// The tool whose settings apply to a fetch record ("ctxguard_fetch:<tool>").
std::string_view fetched_tool(std::string_view record_tool) {
  const std::size_t colon = record_tool.find(':');
  return colon == std::string_view::npos ? std::string_view() : record_tool.substr(colon + 1);
}

void take_record(CallEvent& event, pipeline::CallRecord&& record) {
  event.original_tokens = record.original_tokens;
  event.final_tokens = record.final_tokens;
  event.items_total = record.items_total;
  event.items_shown = record.items_shown;
  event.stages.assign(record.stages.begin(), record.stages.end());
  event.error = std::string(record.error);
  event.outcome = telemetry::outcome_of(event.kind, event.stages);
}

json::object* result_of(json::value& response) {
  json::object* object = response.if_object();
  if (object == nullptr) return nullptr;
  json::value* result = object->if_contains("result");
  return result != nullptr ? result->if_object() : nullptr;
}

}  // namespace

Interceptor::Interceptor(config::ProfilePtr profile, const cursor::CursorCodec& codec)
    : profile_(std::move(profile)),
      cache_(profile_->global().cache_bytes, codec.ttl()),
      pipeline_(codec, cache_),
      fetch_(codec, cache_) {}

void Interceptor::set_profile(config::ProfilePtr profile, Clock::time_point now) {
  if (profile->global().cache_bytes != cache_.max_bytes()) {
    cache_.set_limits(profile->global().cache_bytes, cache_.ttl(), now);
  }
  profile_ = std::move(profile);
}

Verdict Interceptor::on_oversized(Direction direction, std::string_view head, std::string_view tail,
                                  std::size_t bytes, std::size_t limit, Clock::time_point now,
                                  WallClock::time_point wall_now) {
  const jsonrpc::PartialEnvelope envelope = jsonrpc::read_partial_envelope(head, tail);
  const std::string_view from = sender(direction);
  const std::string_view to = sender(session::opposite(direction));
  if (!envelope.id) {
    spdlog::error(
        "dropped a line of {} bytes from the {}: over --max-message-bytes ({}), and no "
        "request id could be read from its edges, so nobody can be told",
        bytes, from, limit);
    return {Verdict::Action::kDrop, {}};
  }
  const std::string id = json::serialize(*envelope.id);
  if (envelope.method) {
    // Refused before the router sees it: the other peer never learns of this request.
    spdlog::error("refused {} id={} from the {}: {} bytes, over --max-message-bytes ({})",
                  *envelope.method, id, from, bytes, limit);
    return {Verdict::Action::kReply,
            jsonrpc::make_error_response(
                *envelope.id, jsonrpc::kInvalidRequest,
                fmt::format("ctxguard: this request is {} bytes, over the maximum message size of "
                            "{} bytes (--max-message-bytes); it was not sent to the {}",
                            bytes, limit, to))};
  }
  if (!router_.awaits_answer(direction, *envelope.id)) {
    spdlog::error(
        "dropped a response id={} of {} bytes from the {}: over --max-message-bytes "
        "({}), and no request with that id is in flight",
        id, bytes, from, limit);
    return {Verdict::Action::kDrop, {}};
  }
  spdlog::error(
      "the {}'s answer to id={} is {} bytes, over --max-message-bytes ({}); the {} "
      "gets an error instead",
      from, id, bytes, limit, to);
  // Handled as if the peer had answered with this error: the request leaves the router and a
  // tools/call gets its call record, like any other answer.
  std::string error = jsonrpc::make_error_response(
      *envelope.id, jsonrpc::kInternalError,
      fmt::format("ctxguard: the {}'s answer is {} bytes, over the maximum message size of {} "
                  "bytes (--max-message-bytes), and was dropped. Ask for less, or raise the "
                  "limit.",
                  from, bytes, limit));
  Verdict verdict = on_line(direction, error, now, wall_now);
  if (verdict.action == Verdict::Action::kForward) verdict = {Verdict::Action::kSend, error};
  return verdict;
}

Verdict Interceptor::on_line(Direction direction, std::string_view line, Clock::time_point now,
                             WallClock::time_point wall_now) {
  const auto started = Clock::now();
  auto parsed = jsonrpc::parse_message(line);
  if (!parsed) {
    spdlog::warn("the {} sent a line that is not JSON-RPC ({}, {} bytes); forwarded unchanged",
                 sender(direction), parsed.error().message(), line.size());
    return {};
  }
  jsonrpc::Message& message = *parsed;
  if (direction == Direction::kClientToServer) {
    try {
      if (auto reply = answer_fetch(message, now, wall_now, started)) return std::move(*reply);
    } catch (const std::exception& error) {
      // A bug or an allocation failure must cost this one answer, never the session.
      spdlog::error("answering {} failed: {}", fetch_.name(), error.what());
      const json::object response{
          {"jsonrpc", "2.0"},
          {"id", message.envelopes.front().id},
          {"result", pipeline::text_tool_result("ctxguard failed to read its cache for this "
                                                "cursor. Call the original tool again.",
                                                true)}};
      Verdict verdict{Verdict::Action::kReply, to_json(response)};
      CallEvent event;
      event.time = wall_now;
      event.id = message.envelopes.front().id;
      event.kind = CallKind::kFetch;
      event.tool = fetch_.name();
      event.stages = {"fetch-error"};
      event.outcome = telemetry::Outcome::kFetchFailed;
      event.error = "internal";
      event.final_bytes = verdict.text.size();
      event.proxy_latency = Clock::now() - started;
      emit(std::move(event));
      return verdict;
    }
  }

  const auto routes = router_.observe(direction, message, now, profile_);
  bool changed = false;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const session::Route& route = routes[i];
    if (route.kind == jsonrpc::Kind::kUnknown) {
      spdlog::warn("the {} sent JSON that is not a JSON-RPC message ({} bytes); forwarded",
                   sender(direction), line.size());
      continue;
    }
    if (spdlog::should_log(spdlog::level::debug)) {
      const auto& id = message.envelopes[i].id;
      spdlog::debug(
          "{} {} {} id={} ({} bytes{})", to_string(direction), jsonrpc::to_string(route.kind),
          route.method.empty() ? "?" : route.method, id.is_null() ? "-" : json::serialize(id),
          line.size(),
          route.elapsed
              ? fmt::format(", {:.3f} ms",
                            std::chrono::duration<double, std::milli>(*route.elapsed).count())
              : "");
    }
    if (direction != Direction::kServerToClient || route.kind != jsonrpc::Kind::kResponse) continue;
    json::value& element = message.batch ? message.document.as_array()[i] : message.document;
    // The profile the request came under; a response to no known request gets the current one.
    const config::Profile& profile =
        route.context ? *std::static_pointer_cast<const config::Profile>(route.context) : *profile_;
    const Answer answer{route,        message.envelopes[i].id, profile, now, wall_now, line.size(),
                        message.batch};
    try {
      changed = rewrite_response(element, answer) || changed;
    } catch (const std::exception& error) {
      // A bug or an allocation failure must cost the rewrite, never the answer.
      spdlog::error("rewriting the {} answer failed ({}); forwarding it unchanged", route.method,
                    error.what());
      events_.clear();
      return {};
    }
  }
  if (!changed) {
    emit_events(line.size(), started);
    return {};
  }
  Verdict verdict{Verdict::Action::kSend, {}};
  write_json(verdict.text, message.document);
  emit_events(verdict.text.size(), started);
  return verdict;
}

CallEvent& Interceptor::add_event(CallKind kind, std::string_view tool, const Answer& answer) {
  CallEvent& event = events_.emplace_back();
  event.time = answer.wall_now;
  event.id = answer.id;
  event.kind = kind;
  event.tool = std::string(tool);
  event.original_bytes = answer.line_bytes;
  event.server_latency = answer.route.elapsed;
  return event;
}

void Interceptor::emit_events(std::size_t sent_bytes, Clock::time_point started) {
  const auto latency = Clock::now() - started;
  for (CallEvent& event : events_) {
    if (!event.observed) event.final_bytes = sent_bytes;  // observe: what would have been sent
    event.proxy_latency = latency;
    emit(std::move(event));
  }
  events_.clear();
}

void Interceptor::emit(CallEvent&& event) {
  if (call_sink_) {
    call_sink_(std::move(event));
  } else {
    telemetry::log_call_event(event);
  }
}

std::optional<Verdict> Interceptor::answer_fetch(const jsonrpc::Message& message,
                                                 Clock::time_point now,
                                                 WallClock::time_point wall_now,
                                                 Clock::time_point started) {
  // Batches (gone from MCP since 2025-06-18) are not split: a fetch inside one reaches the server.
  if (message.batch || message.envelopes.front().kind != jsonrpc::Kind::kRequest ||
      message.envelopes.front().method != session::kToolsCall) {
    return std::nullopt;
  }
  const json::object& request = message.document.as_object();
  const json::value* params = request.if_contains("params");
  const json::object* params_object = params != nullptr ? params->if_object() : nullptr;
  const json::value* name = params_object != nullptr ? params_object->if_contains("name") : nullptr;
  if (name == nullptr || !name->is_string() || name->get_string() != fetch_.name()) {
    return std::nullopt;
  }
  const json::value* arguments = params_object->if_contains("arguments");
  const config::Profile& profile = *profile_;
  pipeline::FetchAnswer answer = fetch_.answer(
      arguments != nullptr ? *arguments : json::value(),
      [&profile](std::string_view tool) -> const config::BudgetSettings& {
        return profile.for_tool(tool);
      },
      now, wall_now);
  json::object response{{"jsonrpc", "2.0"},
                        {"id", message.envelopes.front().id},
                        {"result", std::move(answer.result)}};
  Verdict verdict{Verdict::Action::kReply, {}};
  write_json(verdict.text, response);
  CallEvent event;
  event.time = wall_now;
  event.id = message.envelopes.front().id;
  event.kind = CallKind::kFetch;
  event.tool = answer.record.tool;
  const std::string_view tool = fetched_tool(event.tool);
  event.budget = (tool.empty() ? profile.global() : profile.configured_for_tool(tool)).token_budget;
  take_record(event, std::move(answer.record));
  event.final_bytes = verdict.text.size();
  event.proxy_latency = Clock::now() - started;
  emit(std::move(event));
  return verdict;
}

bool Interceptor::rewrite_response(json::value& response, const Answer& answer) {
  const session::Route& route = answer.route;
  const config::Profile& profile = answer.profile;
  json::object* result = result_of(response);
  if (result == nullptr) {
    // An error response, or a malformed one: relayed as is, and counted for tool calls.
    if (route.method == session::kToolsCall || route.method == session::kTasksResult) {
      const bool task = route.method == session::kTasksResult;
      CallEvent& event = add_event(task ? CallKind::kTask : CallKind::kCall, route.subject, answer);
      event.outcome = telemetry::Outcome::kError;
      event.budget = profile.configured_for_tool(route.subject).token_budget;
    }
    return false;
  }
  if (route.method == session::kToolsCall) {
    // A task-augmented call answers with the task; the tool's result comes via tasks/result.
    if (const json::value* task = result->if_contains("task");
        task != nullptr && task->is_object()) {
      const json::value* id = task->as_object().if_contains("taskId");
      if (id != nullptr && id->is_string()) {
        if (task_tools_.size() >= kMaxRememberedTasks) task_tools_.clear();
        task_tools_[std::string(id->get_string())] = route.subject;
      }
      return false;
    }
    return rewrite_tool_result(response.as_object(), route.subject, answer,
                               add_event(CallKind::kCall, route.subject, answer));
  }
  if (route.method == session::kTasksResult) {
    const auto task = task_tools_.find(route.subject);
    const std::string tool = task != task_tools_.end() ? task->second : "task:" + route.subject;
    // Kept: a client may ask for the same result again (a retry after a lost answer).
    return rewrite_tool_result(response.as_object(), tool, answer,
                               add_event(CallKind::kTask, tool, answer));
  }
  if (route.method == session::kToolsList) {
    const mcp::ToolListEdit edit = tool_list_.edit(*result, profile);
    if (edit.fetch_tool_added) {
      if (edit.name_collision) {
        spdlog::warn("the server has its own tool named {}; ctxguard's is called {}",
                     mcp::kFetchToolName, edit.fetch_tool_name);
      }
      pipeline_.set_fetch_tool_name(edit.fetch_tool_name);
      fetch_.set_name(edit.fetch_tool_name);
    }
    if (edit.output_schemas_removed > 0) {
      spdlog::debug("tools/list: removed {} outputSchema(s) so rewritten results validate",
                    edit.output_schemas_removed);
    }
    return edit.changed;
  }
  if (route.method == session::kResourcesRead) {
    // Both arms views: a std::string temporary here would leave `tool` dangling.
    const std::string_view name =
        route.subject.empty() ? std::string_view("resource") : std::string_view(route.subject);
    // Resources are no tool's: the global settings apply.
    if (profile.global().observe) return false;
    const pipeline::CallContext context{name, true, answer.now, answer.wall_now};
    auto rewritten = pipeline_.process_resource(*result, profile.for_resources(), context);
    if (!rewritten) return false;  // only chunked resources are recorded
    response.as_object()["result"] = std::move(rewritten->result);
    CallEvent& event = add_event(CallKind::kResource, name, answer);
    event.budget = profile.global().token_budget;
    event.over_budget = rewritten->record.original_tokens > profile.for_resources().token_budget;
    take_record(event, std::move(rewritten->record));
    return true;
  }
  if (route.method == session::kInitialize || route.method == session::kServerDiscover) {
    return profile.enforces_any() && mcp::add_instructions(*result, fetch_.name());
  }
  return false;
}

bool Interceptor::rewrite_tool_result(json::object& response, std::string_view tool,
                                      const Answer& answer, CallEvent& event) {
  json::object& result = response.at("result").as_object();
  const config::BudgetSettings& budget = answer.profile.for_tool(tool);
  event.budget = answer.profile.configured_for_tool(tool).token_budget;
  std::size_t original_tokens = 0;
  const auto measured = [&] {
    // Against the budget the pipeline plans with: the estimator margin included.
    event.over_budget = original_tokens > budget.token_budget;
    event.original_tokens = event.final_tokens = original_tokens;
  };
  if (budget.observe) {
    // The line goes out as it came. The pipeline may move values out of what it is given, which
    // only matters when other members of a batch are rewritten and the document re-serialized.
    event.observed = true;
    json::object copy;
    if (answer.in_batch) copy = result;
    json::object& subject = answer.in_batch ? copy : result;
    auto would_be = pipeline_.process(
        subject, budget, {tool, true, answer.now, answer.wall_now, true}, &original_tokens);
    measured();
    event.final_bytes = answer.line_bytes;
    if (would_be) {
      // What enforce would have sent, measured as it would have gone out.
      json::object would_send{
          {"jsonrpc", "2.0"}, {"id", response.at("id")}, {"result", std::move(would_be->result)}};
      event.final_bytes = to_json(would_send).size();
      take_record(event, std::move(would_be->record));
    }
    return false;
  }
  const pipeline::CallContext context{tool, true, answer.now, answer.wall_now};
  auto rewritten = pipeline_.process(result, budget, context, &original_tokens);
  measured();
  if (!rewritten) return false;
  response["result"] = std::move(rewritten->result);
  take_record(event, std::move(rewritten->record));
  return true;
}

}  // namespace ctxguard::proxy
