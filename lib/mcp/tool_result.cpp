#include "mcp/tool_result.hpp"

#include <utility>

#include <boost/json/array.hpp>

namespace ctxguard::mcp {

namespace json = boost::json;

json::object text_tool_result(std::string text, ToolResult kind) {
  json::object result{
      {"content", json::array{json::object{{"type", "text"}, {"text", std::move(text)}}}}};
  if (kind == ToolResult::kError) result["isError"] = true;
  return result;
}

}  // namespace ctxguard::mcp
