#pragma once
// The Interceptor's part for what the client learns of the server's tools before any call: the
// tools/list it gets (edited page by page, measured, one record a listing), the instructions of
// initialize / server/discover (ctxguard's paragraph), and in compact mode ctxguard's own listing
// of the server's tools before either goes out (mcp::ToolDiscovery, docs/protocol.md 4.2): what
// it holds meanwhile and until when. It also says whether a new configuration changes the list
// the client has, so that the client can be told. No I/O: the session arms a timer for
// deadline() and calls on_deadline().

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "config/profile.hpp"
#include "jsonrpc/message.hpp"
#include "mcp/protocol_state.hpp"
#include "mcp/tool_discovery.hpp"
#include "mcp/tool_list.hpp"
#include "mcp/tool_list_size.hpp"
#include "proxy/answer.hpp"
#include "proxy/call_records.hpp"
#include "proxy/line_context.hpp"
#include "proxy/verdict.hpp"

namespace ctxguard::proxy {

class ToolListing {
 public:
  using Clock = std::chrono::steady_clock;
  // How long the client's initialize (or server/discover) result, or its first tools/list, may
  // wait while ctxguard lists the server's tools.
  static constexpr std::chrono::milliseconds kDiscoveryDeadline{5000};

  // A client request held until the listing ends is routed through `router` when it goes on.
  ToolListing(Router& router, const mcp::ProtocolState& protocol, const CallRecords& records)
      : router_(router), protocol_(protocol), records_(records) {}

  // The tool list as the client got it: ctxguard's tools' names, the server's catalog.
  const mcp::ToolListEditor& editor() const { return editor_; }

  // Whether the client's tool list changes when `next` replaces `running` (it is then told).
  bool changes_listing(const config::Profile& next, const config::Profile& running) const;

  // From the client, before its message is routed.
  // Whether ctxguard drops this notification: it sent the server its own before listing (the
  // first notifications/initialized after a legacy listing; that one is then seen).
  bool drops_client_notification(std::string_view method) {
    return discovery_.drops_client_notification(method);
  }
  // A server/discover request: its _meta goes with ctxguard's own listing.
  void remember_discover_meta(const boost::json::object& request);
  // A modern client's first tools/list while nothing is listed yet, in compact mode: held (the
  // verdict sends ctxguard's own listing instead); nothing otherwise.
  std::optional<Verdict> hold_first_listing(jsonrpc::Message& message, mcp::Era era,
                                            const config::ProfilePtr& profile,
                                            Clock::time_point now);

  // From the server.
  // A tools/list result page, edited in place (true when it changed); after the last page, the
  // listing's record.
  bool rewrite_page(boost::json::object& result, const Answer& answer);
  // An initialize / server/discover result: ctxguard's paragraph in its instructions (true when
  // it changed), or in compact mode the result held: answer.line.discovery_start says so, and
  // start_discovery takes the message once the line is read whole. `running` stands for the
  // profile of an answer to no known request.
  bool rewrite_discovery_result(boost::json::object& result, const Answer& answer,
                                const config::ProfilePtr& running);
  // The held result's message: kept, and ctxguard's own listing goes to the server.
  Verdict start_discovery(jsonrpc::Message& message, LineContext::DiscoveryStart start,
                          Clock::time_point now);
  // A server message that answers ctxguard's own listing: what happens instead of relaying it.
  std::optional<Verdict> on_server_message(const jsonrpc::Message& message, Clock::time_point now);
  // Whether the server's lines wait now: nothing goes to the client before the held result.
  bool holds_server_lines() const;
  void hold(std::string line) { discovery_.hold(std::move(line)); }

  // When the listing under way gives up on the server (none when no listing is under way).
  std::optional<Clock::time_point> deadline() const { return deadline_; }
  // The deadline passed: what was held goes on without the listing.
  Released on_deadline(Clock::time_point now);
  // The listing under way ends now (the server is gone): what was held, for each peer.
  Released end(Clock::time_point now);

 private:
  // The instructions of initialize / server/discover: ctxguard's paragraph, and their size.
  bool rewrite_instructions(boost::json::object& result, const config::Profile& profile);
  // Whether the answer to initialize / server/discover waits for the listing (compact mode).
  bool holds_for_discovery(const boost::json::object& result, const Answer& answer) const;
  void record(const Answer& answer);
  // The held result with the instructions, and the messages held meanwhile (to the client); or
  // the held tools/list (to the server).
  Verdict release(Clock::time_point now);

  Router& router_;
  const mcp::ProtocolState& protocol_;
  const CallRecords& records_;
  mcp::ToolListEditor editor_;
  // The tools/list being paged through: as the server sent it and as the client gets it.
  struct Pages {
    mcp::ToolListSize served;
    mcp::ToolListSize sent;
  };
  Pages pages_;
  std::optional<std::size_t> instructions_tokens_;  // as the client got them, once known
  mcp::ToolDiscovery discovery_;
  config::ProfilePtr discovery_profile_;  // the one the held message came under
  std::optional<Clock::time_point> deadline_;
  boost::json::object discover_meta_;  // the _meta of the client's latest server/discover
};

}  // namespace ctxguard::proxy
