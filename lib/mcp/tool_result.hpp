#pragma once
// The CallToolResult ctxguard composes itself: one text item, flagged isError when the model can
// act on a problem it names.

#include <string>

#include <boost/json/object.hpp>

namespace ctxguard::mcp {

enum class ToolResult { kAnswer, kError };
boost::json::object text_tool_result(std::string text, ToolResult kind);

}  // namespace ctxguard::mcp
