#pragma once
// What can be read of a JSON-RPC message from its first and last bytes alone.
//
// A line over --max-message-bytes is never held whole (jsonrpc::LineFramer keeps its edges), yet
// its sender deserves an error rather than silence, and an error needs the request's `id`.
// Serializers put the envelope members at one end: Python's SDK writes `{"jsonrpc","id",
// "method"|"result",...}`, the TypeScript SDK `{"method","params","jsonrpc","id"}` and
// `{"result","jsonrpc","id"}`. So the head is read with an incremental parser (top-level members
// until the text ends) and the tail as the longest run of complete top-level members before the
// final `}`.

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace ctxguard::jsonrpc {

struct PartialEnvelope {
  std::optional<boost::json::value> id;  // a number, string or null found at the top level
  std::optional<std::string> method;     // a string `method` found at the top level

  bool operator==(const PartialEnvelope&) const = default;
};

// `head` and `tail`: the first and last bytes of one line holding a JSON object (they may
// overlap or be the whole line). Members cut by either edge are not reported. Never throws
// except std::bad_alloc.
PartialEnvelope read_partial_envelope(std::string_view head, std::string_view tail);

}  // namespace ctxguard::jsonrpc
