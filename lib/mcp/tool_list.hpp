#pragma once
// The `tools/list` answer as ctxguard passes it on: ctxguard_fetch appended (on the last page)
// and `outputSchema` removed from the server's tools.
//
// Why remove outputSchema: the TypeScript SDK client validates `structuredContent` against it,
// and its schemas forbid extra keys, so a paginated result (with `_ctxguard`) would fail with
// -32602; dropping `structuredContent` instead fails with -32600. Every tool's result may be
// rewritten (the hard cap applies to all), so every tool loses its outputSchema, except tools in
// observe mode, whose answers go out untouched. When every tool is observed, nothing changes.

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "config/profile.hpp"

namespace ctxguard::mcp {

inline constexpr std::string_view kFetchToolName = "ctxguard_fetch";

// Claude Code writes a text result over 50,000 characters to a file and shows the model a
// 2,000-byte preview instead, unless the tool's entry in tools/list says how many characters its
// results may take, up to 500,000 (docs/clients.md). ctxguard says it for every tool whose
// answers it bounds, so that none of its answers is replaced by a preview.
inline constexpr std::string_view kClaudeCodeClient = "claude-code";
inline constexpr std::string_view kMaxResultSizeKey = "anthropic/maxResultSizeChars";

// Whether the client named `client` gets the size hints in tools/list (and so each tool's hard
// cap shows in its listing).
inline bool lists_size_hints(std::string_view client) { return client == kClaudeCodeClient; }

// The characters an answer within `hard_cap` estimated tokens may hold, as Claude Code's hint:
// never below its own default (50,000), nor above what it accepts (500,000).
std::size_t max_result_chars(std::size_t hard_cap);

// The tool definition ctxguard adds, named `name`: `limit` defaults to `page_size` and goes up
// to `max_page_size`.
boost::json::object fetch_tool_definition(std::string_view name, std::size_t page_size,
                                          std::size_t max_page_size);

struct ToolListEdit {
  bool changed = false;
  std::size_t output_schemas_removed = 0;
  bool last_page = false;         // no nextCursor
  bool fetch_tool_added = false;  // on the last page, unless every tool is observed
  std::string fetch_tool_name;    // set on the last page
  bool name_collision = false;    // the server has its own ctxguard_fetch
  std::size_t size_hints = 0;     // tools given kMaxResultSizeKey (Claude Code)
};

// Tracks one listing across its pages (tools/list may paginate) and edits each page.
class ToolListEditor {
 public:
  // Edits one tools/list result in place, as `profile` says, for the client named `client`
  // (clientInfo.name; empty when unknown). A result without a `tools` array is left alone.
  ToolListEdit edit(boost::json::object& result, const config::Profile& profile,
                    std::string_view client = {});

  // The name ctxguard_fetch goes by for this server (prefixed after a collision).
  const std::string& fetch_tool_name() const { return fetch_tool_name_; }

 private:
  bool server_has_fetch_tool_ = false;  // seen on any page of the current listing
  std::string fetch_tool_name_{kFetchToolName};
};

}  // namespace ctxguard::mcp
