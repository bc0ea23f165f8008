#pragma once
// What an MCP client does with the protocol besides cutting results, known for a few clients by
// their clientInfo.name (docs/clients.md has the sources). Their limits on a result are presets
// of the configuration (config/client_presets.hpp); these are facts ctxguard's edits follow.

#include <string_view>

namespace ctxguard::mcp {

struct ClientTraits {
  // It reads each tool's _meta["anthropic/maxResultSizeChars"] in tools/list (Claude Code).
  bool reads_size_hint = false;
  // It shows the model the server's instructions (Claude Desktop does not).
  bool shows_instructions = true;
};

// The traits of the client named `client`; an unknown client is taken to read instructions and
// no size hint.
ClientTraits client_traits(std::string_view client);

}  // namespace ctxguard::mcp
