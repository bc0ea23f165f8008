#pragma once
// `toolList: compact` (docs/protocol.md 4.2): ctxguard lists the server's tools itself before the
// client gets the `initialize` (or `server/discover`) result, so that the instructions in that
// result can say once the guidance the tools' descriptions repeat. Pure: the Interceptor feeds it
// the messages and sends what it returns.
//
// The sequence: the server's result is held; ctxguard sends the server its own tools/list, page
// after page (in the legacy era after notifications/initialized, which the server needs first;
// in the modern era with the `_meta` of the client's request); what else the server sends
// meanwhile is held, in order. When the last page comes (or an error, or the session's deadline,
// or the end of the server), the result goes out with the instructions, then what was held. The
// client's own notifications/initialized is dropped then: the server has had one. ctxguard's
// requests have string ids "ctxguard-tools-N", and their answers never reach the client, also
// when they come after the deadline.
//
// A modern client may ask a process that never saw its server/discover (each request stands
// alone; the SDK asks server/discover of a short-lived sibling): there the client's first
// tools/list is held instead, and goes to the server once ctxguard's own listing has ended, so
// that its answer leaves out the guidance the instructions (given by the sibling, from the same
// listing) said.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "jsonrpc/message.hpp"
#include "mcp/protocol_state.hpp"

namespace ctxguard::mcp {

// The most pages ctxguard reads of a listing (a server whose cursors never end stops here).
inline constexpr std::size_t kDiscoveryPages = 100;

class ToolDiscovery {
 public:
  enum class Phase { kIdle, kListing, kDone };
  Phase phase() const { return phase_; }

  // What waits for the listing.
  enum class Held {
    kServerResult,   // the initialize / server/discover response, for the client
    kClientRequest,  // the client's first tools/list, for the server
  };
  Held held_kind() const { return held_kind_; }

  // Starts the listing, holding `message` (the whole response or request). `meta` is the
  // `_meta` of the client's request (the modern era), or null. Returns the lines for the server.
  std::vector<std::string> start(boost::json::value message, Held held, Era era,
                                 const boost::json::object* meta);

  // What a server message is to the listing.
  struct Step {
    bool ours = false;                          // an answer to ctxguard's tools/list: goes nowhere
    std::optional<std::string> next_page = {};  // the request for the next page, for the server
    bool finished = false;                      // the listing has ended: call finish()
  };
  Step on_server_message(const jsonrpc::Message& message);

  // A server line (as it goes out) held until the listing ends.
  void hold(std::string line) { held_.push_back(std::move(line)); }

  // Ends the listing: what was held, and the tools it gathered.
  struct Outcome {
    boost::json::value message;     // what was held (held_kind())
    std::vector<std::string> held;  // server lines, in the order they came
    boost::json::array tools;       // the server's tools, every page gathered
    bool complete = false;          // the listing reached its last page
  };
  Outcome finish();

  // Whether a client notification is to be dropped: the first notifications/initialized after a
  // legacy listing.
  bool drops_client_notification(std::string_view method);

 private:
  std::string next_request(const boost::json::value* cursor);

  Phase phase_ = Phase::kIdle;
  Held held_kind_ = Held::kServerResult;
  boost::json::value message_;
  boost::json::object meta_;
  std::vector<std::string> held_;
  boost::json::array tools_;
  bool complete_ = false;
  std::size_t pages_ = 0;
  std::uint64_t requests_ = 0;
  std::string pending_id_;              // the request in flight
  std::vector<std::string> stale_ids_;  // requests answered after the listing ended
  bool client_initialized_due_ = false;
};

}  // namespace ctxguard::mcp
