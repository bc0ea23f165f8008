#include "jsonrpc/message.hpp"

#include "support/json_reader.hpp"

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

std::optional<std::string> replace_lone_surrogates(std::string_view text) {
  const auto hex4 = [&](std::size_t at) -> int {
    if (at + 4 > text.size()) return -1;
    int value = 0;
    for (std::size_t i = at; i < at + 4; ++i) {
      const char c = text[i];
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        value |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        value |= c - 'A' + 10;
      } else {
        return -1;
      }
    }
    return value;
  };
  const auto is_high = [](int unit) { return unit >= 0xD800 && unit <= 0xDBFF; };
  const auto is_low = [](int unit) { return unit >= 0xDC00 && unit <= 0xDFFF; };

  std::optional<std::string> repaired;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '\\') continue;
    if (text[i + 1] != 'u') {
      ++i;  // `\\`, `\"`, ...: skip the escaped character
      continue;
    }
    const int unit = hex4(i + 2);
    bool lone = false;
    std::size_t length = 6;
    if (is_high(unit)) {
      const bool paired =
          i + 7 < text.size() && text[i + 6] == '\\' && text[i + 7] == 'u' && is_low(hex4(i + 8));
      lone = !paired;
      if (paired) length = 12;
    } else {
      lone = is_low(unit);
    }
    if (lone) {
      if (!repaired) repaired.emplace(text);
      repaired->replace(i, 6, "\\ufffd");  // same length: later offsets stay valid
    }
    i += length - 1;
  }
  return repaired;
}

Result<Message> parse_message(std::string_view line) {
  Message message;
  auto parsed = parse_json(line);
  if (!parsed) {
    // JavaScript servers emit lone surrogates (`\ud83d` from text cut mid-emoji) and Boost.JSON
    // rejects them. Route such a message by a repaired copy; its original bytes are forwarded.
    const auto repaired = replace_lone_surrogates(line);
    if (!repaired) return Error::kInvalidJson;
    parsed = parse_json(*repaired);
    if (!parsed) return Error::kInvalidJson;
  }
  message.document = std::move(*parsed);

  if (const json::array* batch = message.document.if_array()) {
    if (batch->empty()) return Error::kEmptyBatch;
    message.batch = true;
    message.envelopes.reserve(batch->size());
    for (const json::value& element : *batch) message.envelopes.push_back(classify(element));
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
