#pragma once
// What ctxguard tells the model about itself, through the `instructions` of the `initialize`
// (and `server/discover`) result. Claude Desktop ignores `instructions`, so the same
// guidance also stands in ctxguard_fetch's description and in every rewritten result's hint.

#include <span>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "config/settings.hpp"
#include "mcp/tool_compaction.hpp"

namespace ctxguard::mcp {

// How the server's tools reach the client (docs/protocol.md 4.2), as far as the instructions
// tell of it.
struct ListingNotes {
  config::ToolListMode mode = config::ToolListMode::kFull;
  std::string_view search_tool;  // lazy: the tools that stand for the server's
  std::string_view call_tool;
  // compact: the sentences taken out of the tools' descriptions, said here once.
  std::span<const std::string> shared_guidance;
  // compact: the input properties whose descriptions were taken out of the tools' schemas.
  std::span<const SharedParameter> shared_parameters;
};

// A short paragraph whose first 512 characters stand alone; in lazy mode it opens with how to
// reach the server's tools.
std::string instructions_paragraph(std::string_view fetch_tool, const ListingNotes& notes = {});

// Puts the paragraph (then the shared guidance, as its own paragraph) in front of the result's
// own `instructions` (kept, after a blank line), or sets it when there are none. A non-string
// `instructions` is left alone: returns false.
bool add_instructions(boost::json::object& result, std::string_view fetch_tool,
                      const ListingNotes& notes = {});

}  // namespace ctxguard::mcp
