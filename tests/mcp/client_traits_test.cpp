// The clients whose handling of the protocol ctxguard's edits follow (docs/clients.md).

#include <catch2/catch.hpp>

#include "mcp/client_traits.hpp"
#include "mcp/tool_list.hpp"

using ctxguard::mcp::client_traits;

TEST_CASE("client traits: Claude Code reads size hints, Claude Desktop shows no instructions") {
  CHECK(client_traits("claude-code").reads_size_hint);
  CHECK(client_traits("claude-code").shows_instructions);
  CHECK(ctxguard::mcp::lists_size_hints(ctxguard::mcp::kClaudeCodeClient));
  CHECK_FALSE(client_traits("claude-ai").shows_instructions);
  CHECK_FALSE(client_traits("claude-ai").reads_size_hint);
  for (const char* other : {"", "codex-mcp-client", "Visual Studio Code", "claude-code-2"}) {
    CHECK_FALSE(client_traits(other).reads_size_hint);
    CHECK(client_traits(other).shows_instructions);
  }
}
