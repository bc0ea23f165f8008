#pragma once
// One line of the MCP stdio stream, parsed and classified as JSON-RPC 2.0.
//
// Classification is lenient on purpose: a proxy must carry what the peers understand, so a
// message is recognised by its members (`method`, `id`, `result`/`error`) and the `jsonrpc`
// member is not checked. What cannot be classified is still forwarded by the caller.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "support/error.hpp"
#include "support/json_reader.hpp"

namespace ctxguard::jsonrpc {

enum class Kind {
  kRequest,       // has `method` and `id`
  kNotification,  // has `method`, no `id`
  kResponse,      // has `id` and `result` or `error`
  kUnknown,       // anything else (still forwarded)
};

std::string_view to_string(Kind kind);

struct Envelope {
  Kind kind = Kind::kUnknown;
  boost::json::value id;  // requests and responses; null otherwise. Kept as JSON to echo its type.
  std::string method;     // requests and notifications
};

struct Message {
  boost::json::value document;      // the parsed line; later stages rewrite it
  std::vector<Envelope> envelopes;  // the message, or each element of a batch, in order
  bool batch = false;
};

// Parses and classifies one line. Errors: Error::kInvalidJson for text that is not JSON,
// Error::kEmptyBatch for `[]`. A JSON value that is not JSON-RPC parses fine with kUnknown.
Result<Message> parse_message(std::string_view line);

// A copy of `text` with every JSON escape of a lone UTF-16 surrogate (`\ud800` without its pair)
// replaced by `\ufffd`, or nullopt when there is none. Same length as the input.
std::optional<std::string> replace_lone_surrogates(std::string_view text);

// Classifies one JSON value (a message or a batch element).
Envelope classify(const boost::json::value& value);

// A JSON-RPC error response for `id`; `message` is shown to the user by most clients.
std::string make_error_response(const boost::json::value& id, int code, std::string_view message);

// Standard and MCP SDK error codes used by ctxguard.
inline constexpr int kConnectionClosed = -32000;  // the SDK's ErrorCode.ConnectionClosed
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kInternalError = -32603;

}  // namespace ctxguard::jsonrpc
