#include "mcp/client_traits.hpp"

#include <array>

#include "support/glob.hpp"

namespace ctxguard::mcp {

namespace {

struct KnownClient {
  std::string_view match;  // glob over clientInfo.name, as the client sends it
  ClientTraits traits;
};

// Claude Code: anthropics/claude-code CHANGELOG.md 2.1.91 (the size hint); Claude Desktop:
// anthropics/claude-code#66519 (instructions are not shown).
constexpr std::array kKnownClients{
    KnownClient{"claude-code", ClientTraits{.reads_size_hint = true}},
    KnownClient{"claude-ai", ClientTraits{.shows_instructions = false}},
};

}  // namespace

ClientTraits client_traits(std::string_view client) {
  for (const KnownClient& known : kKnownClients) {
    if (glob_matches(known.match, client)) return known.traits;
  }
  return {};
}

}  // namespace ctxguard::mcp
