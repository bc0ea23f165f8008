#include "proxy/interceptor.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/json/serialize.hpp>

#include "jsonrpc/partial_envelope.hpp"
#include "support/json_writer.hpp"
#include "telemetry/call_log.hpp"

namespace ctxguard::proxy {

namespace json = boost::json;
using session::Direction;

namespace {

using telemetry::CallEvent;

// One line per message at debug: direction, kind, method, id, size and the answer's latency.
void log_message(Direction direction, const Route& route, const json::value& id,
                 std::size_t bytes) {
  spdlog::debug(
      "{} {} {} id={} ({} bytes{})", to_string(direction), jsonrpc::to_string(route.kind),
      route.method.empty() ? "?" : route.method, id.is_null() ? "-" : json::serialize(id), bytes,
      route.elapsed ? fmt::format(", {:.3f} ms",
                                  std::chrono::duration<double, std::milli>(*route.elapsed).count())
                    : "");
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
      cache_(profile_->process().cache_bytes, codec.ttl()),
      results_(codec, cache_, tool_listing_.editor().own_tool_names(), records_),
      own_tools_(codec, cache_, tool_listing_.editor(), protocol_, records_) {}

bool Interceptor::set_profile(config::ProfilePtr profile, Clock::time_point now) {
  if (profile->process().cache_bytes != cache_.max_bytes()) {
    cache_.set_limits(profile->process().cache_bytes, cache_.ttl(), now);
  }
  const bool relist = tool_listing_.changes_listing(*profile, *profile_);
  profile_ = std::move(profile);
  return relist;
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
  LineContext context(now, wall_now);
  Verdict verdict = relay_line(direction, line, context);
  if (direction != Direction::kServerToClient || !tool_listing_.holds_server_lines()) {
    return verdict;
  }
  // The client gets nothing from the server before the result ctxguard holds.
  if (verdict.action == Verdict::Action::kForward) {
    tool_listing_.hold(std::string(line));
  } else if (verdict.action == Verdict::Action::kSend) {
    tool_listing_.hold(std::move(verdict.text));
  } else {
    return verdict;  // back to the server, or nowhere
  }
  return {Verdict::Action::kDrop, {}};
}

Verdict Interceptor::relay_line(Direction direction, std::string_view line, LineContext& context) {
  auto parsed = jsonrpc::parse_message(line);
  if (!parsed) {
    if (direction == Direction::kServerToClient) {
      return drop_non_protocol(line, parsed.error().message());
    }
    spdlog::warn("the client sent a line that is not JSON-RPC ({}, {} bytes); forwarded unchanged",
                 parsed.error().message(), line.size());
    return {};
  }
  jsonrpc::Message& message = *parsed;
  if (direction == Direction::kServerToClient &&
      std::all_of(message.envelopes.begin(), message.envelopes.end(),
                  [](const jsonrpc::Envelope& e) { return e.kind == jsonrpc::Kind::kUnknown; })) {
    return drop_non_protocol(line, "JSON, but not a JSON-RPC message");
  }
  bool redirected = false;  // a call through the call tool, now the tools/call it stands for
  if (direction == Direction::kServerToClient) {
    if (auto verdict = tool_listing_.on_server_message(message, context.now)) {
      return std::move(*verdict);
    }
  } else {
    OwnCall own = take_client_message(message, context);
    if (own.reply) return std::move(*own.reply);
    redirected = own.redirected;
  }

  const auto routes = router_.observe(direction, message, context.now, profile_);
  bool changed = redirected;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const Route& route = routes[i];
    if (route.kind == jsonrpc::Kind::kUnknown) {
      spdlog::warn("the {} sent JSON that is not a JSON-RPC message ({} bytes); forwarded",
                   sender(direction), line.size());
      continue;
    }
    json::value& element = message.batch ? message.document.as_array()[i] : message.document;
    if (direction == Direction::kServerToClient) observe_server(element, route);
    if (spdlog::should_log(spdlog::level::debug)) {
      log_message(direction, route, message.envelopes[i].id, line.size());
    }
    if (direction != Direction::kServerToClient || route.kind != jsonrpc::Kind::kResponse) continue;
    // The profile the request came under; a response to no known request gets the current one.
    const config::Profile& profile = route.context ? *route.context : *profile_;
    const Answer answer{route,        message.envelopes[i].id, profile, context, line.size(),
                        message.batch};
    try {
      changed = rewrite_response(element, answer) || changed;
    } catch (const std::exception& error) {
      // A bug or an allocation failure must cost the rewrite, never the answer.
      spdlog::error("rewriting the {} answer failed ({}); forwarding it unchanged", route.method,
                    error.what());
      return {};
    }
  }
  if (context.discovery_start) {
    return tool_listing_.start_discovery(message, *context.discovery_start, context.now);
  }
  if (!changed) {
    emit_events(context, line.size());
    return {};
  }
  Verdict verdict{Verdict::Action::kSend, {}};
  write_json(verdict.text, message.document);
  emit_events(context, verdict.text.size());
  return verdict;
}

void Interceptor::emit_events(LineContext& line, std::size_t sent_bytes) {
  const auto latency = line.elapsed();
  for (CallEvent& event : line.events) {
    if (!event.observed) event.final_bytes = sent_bytes;  // observe: what would have been sent
    event.proxy_latency = latency;
    records_.emit(std::move(event));
  }
  line.events.clear();
}

Interceptor::OwnCall Interceptor::take_client_message(jsonrpc::Message& message,
                                                      LineContext& line) {
  if (!message.batch && message.envelopes.front().kind == jsonrpc::Kind::kNotification &&
      tool_listing_.drops_client_notification(message.envelopes.front().method)) {
    spdlog::debug("the client's {} dropped: ctxguard sent the server one before listing its tools",
                  message.envelopes.front().method);
    return {Verdict{Verdict::Action::kDrop, {}}};
  }
  const mcp::Era era = observe_client(message);
  if (auto held = tool_listing_.hold_first_listing(message, era, profile_, line.now)) {
    return {std::move(held)};
  }
  OwnTools::Outcome own = own_tools_.answer(message, era, *profile_, line);
  if (own.reply) return {Verdict{Verdict::Action::kReply, std::move(*own.reply)}};
  return {std::nullopt, own.redirected};
}

mcp::Era Interceptor::observe_client(const jsonrpc::Message& message) {
  std::optional<mcp::Era> first;
  for (std::size_t i = 0; i < message.envelopes.size(); ++i) {
    const jsonrpc::Envelope& envelope = message.envelopes[i];
    const json::value& element = message.batch ? message.document.as_array()[i] : message.document;
    if (envelope.kind == jsonrpc::Kind::kRequest) {
      const mcp::Era era = protocol_.on_client_request(element.as_object(), envelope.method);
      if (envelope.method == session::kServerDiscover) {
        tool_listing_.remember_discover_meta(element.as_object());
      }
      if (!first) first = era;
    } else if (envelope.kind == jsonrpc::Kind::kNotification) {
      protocol_.on_client_notification(element.as_object(), envelope.method);
    }
  }
  return first.value_or(protocol_.session_era());
}

void Interceptor::observe_server(const json::value& element, const Route& route) {
  if (route.kind == jsonrpc::Kind::kNotification) {
    protocol_.on_server_notification(element.as_object(), route.method);
    return;
  }
  if (route.kind != jsonrpc::Kind::kResponse) return;
  const json::value* result = element.as_object().if_contains("result");
  if (result != nullptr && result->is_object()) {
    protocol_.on_server_result(element.as_object().at("id"), result->get_object(), route.method);
  }
}

Verdict Interceptor::drop_non_protocol(std::string_view line, std::string_view why) {
  // stdout carries nothing but JSON-RPC: a banner, a stray print or the half line a crash left
  // would break the client's framing or be taken for a message.
  ++non_protocol_lines_dropped_;
  spdlog::info("the server wrote a line of {} bytes that is not JSON-RPC ({}); not forwarded",
               line.size(), why);
  if (spdlog::should_log(spdlog::level::debug)) {
    constexpr std::size_t kShown = 200;
    spdlog::debug(
        "the line began: {}",
        json::serialize(json::string_view(line.substr(0, std::min(line.size(), kShown)))));
  }
  return {Verdict::Action::kDrop, {}};
}

bool Interceptor::rewrite_response(json::value& response, const Answer& answer) {
  const std::string& method = answer.route.method;
  json::object* result = result_of(response);
  if (result != nullptr && method == session::kToolsList) {
    return tool_listing_.rewrite_page(*result, answer);
  }
  if (result != nullptr && (method == session::kInitialize || method == session::kServerDiscover)) {
    return tool_listing_.rewrite_discovery_result(*result, answer, profile_);
  }
  return results_.rewrite(response, result, answer);
}

}  // namespace ctxguard::proxy
