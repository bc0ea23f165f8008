#pragma once
// What the messages that pass say about the protocol in use: the era of each client request, the
// peers' identities, and the listen streams the client has opened. ctxguard composes a few
// messages itself (ctxguard_fetch answers, tools/list_changed after a reload) and they must be
// correct in the era the client speaks (docs/protocol.md, section 12).
//
// Two eras: the 2025 revisions open with `initialize`; revision 2026-07-28 is stateless, each
// request naming its protocol version in `params._meta`, and every result carrying `resultType`.
// Nothing here needs `initialize` to have been seen. Pure: no I/O, no clock.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace ctxguard::mcp {

enum class Era {
  kLegacy,  // 2025 revisions: `initialize`, results without `resultType`
  kModern,  // 2026-07-28 and later: per-request `_meta`, `resultType` on every result
};

// The first revision of the modern era; revisions are dates, so they compare as strings.
inline constexpr std::string_view kModernRevision = "2026-07-28";

// Reserved `_meta` keys (2026-07-28).
inline constexpr std::string_view kProtocolVersionKey = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kClientInfoKey = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kServerInfoKey = "io.modelcontextprotocol/serverInfo";
inline constexpr std::string_view kSubscriptionIdKey = "io.modelcontextprotocol/subscriptionId";

// `resultType` values: an ordinary result, an interim one asking the client for input (the
// multi round-trip pattern), and a task handle (the io.modelcontextprotocol/tasks extension).
inline constexpr std::string_view kResultComplete = "complete";
inline constexpr std::string_view kResultInputRequired = "input_required";
inline constexpr std::string_view kResultTask = "task";

Era era_of_revision(std::string_view revision);

// The result's `resultType`, or "" when it has none (every legacy result).
std::string_view result_type(const boost::json::object& result);

class ProtocolState {
 public:
  // A request from the client (`request` is the whole message). Returns its era: the version in
  // its `_meta`, else the one `initialize` negotiated, else legacy. Learns the client's identity
  // and the listen streams it opens.
  Era on_client_request(const boost::json::object& request, std::string_view method);

  // A notification from the client: a cancelled listen stream ends.
  void on_client_notification(const boost::json::object& notification, std::string_view method);

  // A result from the server, answering `method`: learns the server's identity (and, from
  // `initialize`, the negotiated revision); the answer to a listen request ends its stream.
  void on_server_result(const boost::json::value& id, const boost::json::object& result,
                        std::string_view method);

  // A notification from the server: an acknowledged listen stream may carry ctxguard's own.
  void on_server_notification(const boost::json::object& notification, std::string_view method);

  // Makes a result ctxguard composed itself fit `era`: in the modern era `resultType` and the
  // server's identity in `_meta` (when it is known); in the legacy era nothing changes.
  void stamp_own_result(boost::json::object& result, Era era) const;

  // The messages that tell the client its tool list changed: in a legacy session one
  // notification; in a modern one, one per acknowledged listen stream that asked for tool list
  // changes, tagged with its id, and none when there is no such stream.
  std::vector<std::string> tools_list_changed() const;

  // The era of the latest client request (legacy before any).
  Era session_era() const { return session_era_; }
  // The latest identities seen (null until then): the client's from `initialize` or a request's
  // `_meta`, the server's from `initialize`, `server/discover` or any result's `_meta`.
  const boost::json::value& client_info() const { return client_info_; }
  const boost::json::value& server_info() const { return server_info_; }
  // The client's `name` from client_info(); when it gave none, the assumed one (empty when
  // unknown).
  std::string_view client_name() const;
  // --client: the name of a client that gives none.
  void assume_client_name(std::string name) { assumed_client_ = std::move(name); }
  std::size_t listen_streams() const { return streams_.size(); }

 private:
  struct ListenStream {
    boost::json::value id;  // of the subscriptions/listen request; tags every message on it
    bool tools_list_changed = false;  // the client asked for tool list changes
    bool acknowledged = false;        // nothing may be sent on it before the server's ack
  };
  ListenStream* find_stream(const boost::json::value& id);
  void end_stream(const boost::json::value& id);

  std::optional<std::string> negotiated_revision_;  // by initialize
  Era session_era_ = Era::kLegacy;
  boost::json::value client_info_;
  std::string assumed_client_;
  boost::json::value server_info_;
  std::vector<ListenStream> streams_;
};

}  // namespace ctxguard::mcp
