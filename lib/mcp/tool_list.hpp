#pragma once
// The `tools/list` answer as ctxguard passes it on: ctxguard_fetch appended (on the last page)
// and `outputSchema` removed from the server's tools.
//
// Why remove outputSchema: the TypeScript SDK client validates `structuredContent` against it,
// and its schemas forbid extra keys, so a paginated result (with `_ctxguard`) would fail with
// -32602; dropping `structuredContent` instead fails with -32600. Every tool's result may be
// rewritten (the hard cap applies to all), so every tool loses its outputSchema.

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "config/settings.hpp"

namespace ctxguard::mcp {

inline constexpr std::string_view kFetchToolName = "ctxguard_fetch";

// The tool definition ctxguard adds, named `name`.
boost::json::object fetch_tool_definition(std::string_view name,
                                          const config::BudgetSettings& budget);

struct ToolListEdit {
  bool changed = false;
  std::size_t output_schemas_removed = 0;
  bool last_page = false;       // no nextCursor: ctxguard_fetch was appended
  std::string fetch_tool_name;  // set on the last page
  bool name_collision = false;  // the server has its own ctxguard_fetch
};

// Tracks one listing across its pages (tools/list may paginate) and edits each page.
class ToolListEditor {
 public:
  explicit ToolListEditor(const config::BudgetSettings& budget) : budget_(budget) {}

  // Edits one tools/list result in place. A result without a `tools` array is left alone.
  ToolListEdit edit(boost::json::object& result);

  // The name ctxguard_fetch goes by for this server (prefixed after a collision).
  const std::string& fetch_tool_name() const { return fetch_tool_name_; }

 private:
  const config::BudgetSettings& budget_;
  bool server_has_fetch_tool_ = false;  // seen on any page of the current listing
  std::string fetch_tool_name_{kFetchToolName};
};

}  // namespace ctxguard::mcp
