#include "jsonrpc/message.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace ctxguard::jsonrpc {

namespace json = boost::json;

std::string_view to_string(Kind kind) {
  switch (kind) {
    case Kind::kRequest:
      return "request";
    case Kind::kNotification:
      return "notification";
    case Kind::kResponse:
      return "response";
    case Kind::kUnknown:
      break;
  }
  return "unknown";
}

Envelope classify(const json::value& value) {
  Envelope envelope;
  const json::object* object = value.if_object();
  if (object == nullptr) return envelope;

  const json::value* id = object->if_contains("id");
  if (const json::value* method = object->if_contains("method")) {
    if (const json::string* name = method->if_string()) {
      envelope.method.assign(name->data(), name->size());
      if (id != nullptr) {
        envelope.kind = Kind::kRequest;
        envelope.id = *id;
      } else {
        envelope.kind = Kind::kNotification;
      }
    }
    return envelope;
  }
  if (id != nullptr && (object->contains("result") || object->contains("error"))) {
    envelope.kind = Kind::kResponse;
    envelope.id = *id;
  }
  return envelope;
}

Result<Message> parse_message(std::string_view line) {
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  options.allow_invalid_utf8 = true;  // carry what the peers send; judging UTF-8 is not our job

  std::error_code ec;
  Message message;
  message.document = json::parse(line, ec, {}, options);
  if (ec) return Error::kInvalidJson;

  if (const json::array* batch = message.document.if_array()) {
    if (batch->empty()) return Error::kEmptyBatch;
    message.batch = true;
    message.envelopes.reserve(batch->size());
    for (const json::value& element : *batch)
      message.envelopes.push_back(classify(element));
  } else {
    message.envelopes.push_back(classify(message.document));
  }
  return message;
}

std::string make_error_response(const json::value& id, int code, std::string_view message) {
  json::object response;
  response["jsonrpc"] = "2.0";
  response["id"] = id;
  response["error"] = json::object{{"code", code}, {"message", message}};
  return json::serialize(response);
}

}  // namespace ctxguard::jsonrpc
