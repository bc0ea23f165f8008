#pragma once
// The `tools/list` answer as ctxguard passes it on, as `toolList` says (docs/protocol.md 4.2):
//   - full: the server's tools without `outputSchema`, and ctxguard_fetch appended (on the last
//     page);
//   - compact: the same, each tool compacted (mcp/tool_compaction.hpp), ctxguard_fetch always;
//   - lazy: none of the server's tools; ctxguard's search and call tools (and ctxguard_fetch) on
//     the last page. Every page keeps the server's nextCursor, so the listing pages as it did.
// In every mode the server's tools go to the ToolCatalog as the server sent them.
//
// Why remove outputSchema: the TypeScript SDK client validates `structuredContent` against it,
// and its schemas forbid extra keys, so a paginated result (with `_ctxguard`) would fail with
// -32602; dropping `structuredContent` instead fails with -32600. Every tool's result may be
// rewritten (the hard cap applies to all), so every tool loses its outputSchema, except tools in
// observe mode, whose answers go out untouched. When every tool is observed, nothing changes.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "config/profile.hpp"
#include "mcp/client_traits.hpp"
#include "mcp/tool_catalog.hpp"
#include "mcp/tool_compaction.hpp"

namespace ctxguard::mcp {

inline constexpr std::string_view kFetchToolName = "ctxguard_fetch";
inline constexpr std::string_view kSearchToolName = "ctxguard_search_tools";
inline constexpr std::string_view kCallToolName = "ctxguard_call_tool";

// The names ctxguard's own tools go by for this server: each takes fetchToolPrefix when the
// server has a tool of that name.
struct OwnToolNames {
  std::string fetch{kFetchToolName};
  std::string search{kSearchToolName};
  std::string call{kCallToolName};
};

// Claude Code writes a text result over 50,000 characters to a file and shows the model a
// 2,000-byte preview instead, unless the tool's entry in tools/list says how many characters its
// results may take, up to 500,000 (docs/clients.md). ctxguard says it for every tool whose
// answers it bounds, so that none of its answers is replaced by a preview.
inline constexpr std::string_view kClaudeCodeClient = "claude-code";
inline constexpr std::string_view kMaxResultSizeKey = "anthropic/maxResultSizeChars";

// Whether the client named `client` gets the size hints in tools/list (and so each tool's hard
// cap shows in its listing): the client's trait (mcp/client_traits.hpp).
inline bool lists_size_hints(std::string_view client) {
  return client_traits(client).reads_size_hint;
}

// Whether the client named `client` gets the same tools/list under `next` as under `running`:
// the modes (which tools are observed), the toolList mode, ctxguard_fetch's limits and, for a
// client given size hints, the hard caps. When it does not, a reload tells it the list changed.
bool lists_tools_alike(const config::Profile& next, const config::Profile& running,
                       std::string_view client);

// The characters an answer within `hard_cap` estimated tokens may hold, as Claude Code's hint:
// never below its own default (50,000), nor above what it accepts (500,000).
std::size_t max_result_chars(std::size_t hard_cap);

// How ctxguard_fetch is listed: in compact mode it also gives tool definitions (`tool`; then
// `cursor` is no longer required).
struct FetchToolForm {
  bool gives_tools = false;
};

// The tool definition ctxguard adds, named `name`: every argument with its type, `limit` up to
// `max_page_size`; at most 150 estimated tokens in every form (docs/protocol.md section 5).
boost::json::object fetch_tool_definition(std::string_view name, std::size_t max_page_size,
                                          FetchToolForm form = {});

// lazy: the tool that finds the server's tools, and the one that runs them.
boost::json::object search_tool_definition(const OwnToolNames& names);
boost::json::object call_tool_definition(const OwnToolNames& names);

struct ToolListEdit {
  bool changed = false;
  std::size_t output_schemas_removed = 0;
  bool last_page = false;         // no nextCursor
  bool fetch_tool_added = false;  // on the last page: in full mode unless every tool is observed
  OwnToolNames names;             // set on the last page
  bool name_collision = false;    // the server has a tool of one of ctxguard's names
  std::size_t size_hints = 0;     // tools given kMaxResultSizeKey (Claude Code)
  std::size_t tools_hidden = 0;   // lazy: the server's tools left out of this page
  Compaction compaction;          // compact: what was removed, over the page's tools
};

// Tracks one listing across its pages (tools/list may paginate) and edits each page.
class ToolListEditor {
 public:
  // Edits one tools/list result in place, as `profile` says, for the client named `client`
  // (clientInfo.name; empty when unknown). A result without a `tools` array is left alone.
  ToolListEdit edit(boost::json::object& result, const config::Profile& profile,
                    std::string_view client = {});

  // The name ctxguard_fetch goes by for this server (prefixed after a collision).
  const std::string& fetch_tool_name() const { return names_.fetch; }
  const OwnToolNames& own_tool_names() const { return names_; }
  // Whether the last listing offered the search and call tools (lazy).
  bool lazy_listed() const { return lazy_listed_; }
  // The server's tools as it listed them.
  const ToolCatalog& catalog() const { return catalog_; }

  // compact: sentences the instructions say once for all tools, left out of each description.
  void set_shared_guidance(std::vector<std::string> sentences) { shared_ = std::move(sentences); }
  const std::vector<std::string>& shared_guidance() const { return shared_; }
  // compact: input properties the instructions describe once, their descriptions left out of
  // each tool's schema.
  void set_shared_parameters(std::vector<SharedParameter> parameters) {
    shared_parameters_ = std::move(parameters);
  }
  const std::vector<SharedParameter>& shared_parameters() const { return shared_parameters_; }

 private:
  // The server's tools on one page, edited in place as `profile` says.
  void edit_server_tools(boost::json::array& tools, const config::Profile& profile,
                         std::string_view client, ToolListEdit& edit);
  // The last page: ctxguard's tools appended, as the mode and `profile` say.
  void append_own_tools(boost::json::array& tools, const config::Profile& profile,
                        std::string_view client, ToolListEdit& edit);

  bool listing_open_ = false;              // a page came, and not yet the last
  std::vector<std::string> server_names_;  // of ctxguard's names, those the server uses
  OwnToolNames names_;
  bool lazy_listed_ = false;
  ToolCatalog catalog_;
  std::vector<std::string> shared_;
  std::vector<SharedParameter> shared_parameters_;
};

}  // namespace ctxguard::mcp
