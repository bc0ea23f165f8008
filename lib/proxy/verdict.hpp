#pragma once
// What the Interceptor decides for one line: what goes where. The session sends it; nothing here
// does I/O.

#include <string>
#include <vector>

namespace ctxguard::proxy {

struct Verdict {
  enum class Action {
    kForward,  // send the line as it came
    kSend,     // send `text` instead
    kReply,    // send `text` back to the sender; the line goes nowhere
    kDrop,     // the line goes nowhere
  };
  Action action = Action::kForward;
  std::string text;
  // Lines ctxguard sends besides, after the verdict's own: back to the sender (its own requests
  // to the server), and on to the destination (messages held while it listed the server's tools).
  std::vector<std::string> to_sender = {};
  std::vector<std::string> to_destination = {};
};

// What ctxguard held while it listed the server's tools (toolList compact), released for each
// peer when the listing ends without the server's answer.
struct Released {
  std::vector<std::string> to_client;  // the held result, then the messages held meanwhile
  std::vector<std::string> to_server;  // the held tools/list of a modern client
};

}  // namespace ctxguard::proxy
