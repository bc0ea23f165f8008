#pragma once
// What ctxguard tells the model about itself, through the `instructions` of the `initialize`
// (and `server/discover`) result. Claude Desktop ignores `instructions`, so the same
// guidance also stands in ctxguard_fetch's description and in every rewritten result's hint.

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

namespace ctxguard::mcp {

// A short paragraph whose first 512 characters stand alone.
std::string instructions_paragraph(std::string_view fetch_tool);

// Puts the paragraph in front of the result's own `instructions` (kept, after a blank line), or
// sets it when there are none. A non-string `instructions` is left alone: returns false.
bool add_instructions(boost::json::object& result, std::string_view fetch_tool);

}  // namespace ctxguard::mcp
