#pragma once
// Answers ctxguard gives from the server's tool catalog (docs/protocol.md 4.2): the search of
// `toolList: lazy`, and ctxguard_fetch {"tool": NAME}. Each is a CallToolResult with one text
// item of JSON; what the caller can fix (a bad argument, an unknown tool) is an isError result
// saying so, with the names the search finds for it.
//
// A search answer: {"query", "found", "tools": [definitions], "alsoFound": [names], "unlisted"}:
// the definitions of the tools found, best first, as the server sent them (without
// outputSchema), as many as fit `budget`; the names of the others, as many as fit after them;
// how many more there are. Without a query, "tools" holds every tool's name and compacted
// description instead of its definition.

#include <cstddef>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "budget/answer_size.hpp"
#include "mcp/tool_catalog.hpp"

namespace ctxguard::mcp {

struct ToolLookup {
  boost::json::object result;  // a CallToolResult
  std::size_t found = 0;       // tools the search found (1 for a definition)
  std::size_t shown = 0;       // of them, given in full
  bool refused = false;        // result is an isError refusal
};

// The search tool's answer to `arguments` ({query?}; null when absent), within `budget`.
ToolLookup search_tools(const ToolCatalog& catalog, const boost::json::value& arguments,
                        const budget::FitBudget& budget);

// The definition of the tool named `name`, as the server sent it, or a refusal naming what the
// search finds for `name` (`search_tool` names the search to use, when listed; else empty).
ToolLookup describe_tool(const ToolCatalog& catalog, std::string_view name,
                         std::string_view search_tool);

// The refusal for a call naming `name`, a tool the server did not list.
ToolLookup unknown_tool(const ToolCatalog& catalog, std::string_view name,
                        std::string_view search_tool);

}  // namespace ctxguard::mcp
