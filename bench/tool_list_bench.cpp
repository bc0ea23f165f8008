// What the toolList modes cost ctxguard on a large listing (docs/protocol.md 4.2): the edit of a
// generated tools/list of N tools in the style of tests/e2e/lib/many-tools-server.mjs (long
// descriptions repeating the same guidance, verbose schemas with titles, $schema and
// definitions) in full, compact and lazy mode, against one plain parse + serialization of the
// same listing; the shared sentences found; and a lazy search over the catalog. Ratios and
// medians, measured in one run: the machines are shared and noisy.
//
//   tool_list_bench [--tools N]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"
#include "config/profile.hpp"
#include "mcp/tool_compaction.hpp"
#include "mcp/tool_list.hpp"
#include "mcp/tool_lookup.hpp"
#include "percentile.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

constexpr int kRepetitions = 15;
constexpr std::string_view kGuidance =
    "All timestamps are ISO 8601 strings in UTC. Results are paginated: pass the cursor from the "
    "previous response to get the next page. Rate limits apply: at most 100 requests per minute "
    "per workspace. Use the workspace id from the connected account unless the user names "
    "another workspace.";

json::object property(const std::string& name, json::object schema) {
  schema["title"] = name;
  return schema;
}

json::object tool(std::size_t i) {
  const std::string name = "product" + std::to_string(i / 10) + "_action" + std::to_string(i % 10);
  json::object properties{
      {"workspaceId", property("workspaceId", {{"type", "string"},
                                               {"pattern", "^ws_[a-z0-9]{6}$"},
                                               {"description", "The workspace to act in."}})},
      {"status", property("status", {{"type", "string"},
                                     {"enum", json::array{"active", "pending", "closed"}},
                                     {"description", "Only records in this status."}})},
      {"range", json::object{{"$ref", "#/definitions/dateRange"}, {"description", "When."}}},
      {"limit", property("limit", {{"type", "integer"},
                                   {"minimum", 1},
                                   {"maximum", 200},
                                   {"description", "Items per page."}})}};
  json::object date{{"type", "string"}, {"format", "date-time"}};
  json::object definitions{
      {"dateRange", json::object{{"type", "object"},
                                 {"title", "dateRange"},
                                 {"properties", json::object{{"from", date}, {"to", date}}}}},
      {"member", json::object{{"type", "object"},
                              {"title", "member"},
                              {"properties", json::object{{"email", date}}}}}};
  return json::object{
      {"name", name},
      {"description", "Does action " + std::to_string(i % 10) + " on the records of product " +
                          std::to_string(i / 10) + ". " + std::string(kGuidance)},
      {"inputSchema", json::object{{"$schema", "http://json-schema.org/draft-07/schema#"},
                                   {"type", "object"},
                                   {"title", name + "Arguments"},
                                   {"properties", properties},
                                   {"required", json::array{"workspaceId"}},
                                   {"additionalProperties", false},
                                   {"definitions", definitions}}}};
}

double millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The median time of `run` over kRepetitions.
template <typename Run>
double median_ms(const Run& run) {
  std::vector<double> samples;
  for (int i = 0; i < kRepetitions; ++i) {
    const auto start = Clock::now();
    run();
    samples.push_back(millis(Clock::now() - start));
  }
  return percentile(samples, 0.5);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t tools = 1000;
  if (argc == 3 && std::string_view(argv[1]) == "--tools")
    tools = std::strtoul(argv[2], nullptr, 10);
  json::array list;
  for (std::size_t i = 0; i < tools; ++i) list.push_back(tool(i));
  const std::string text = ctxguard::to_json(json::object{{"tools", list}});

  const double plain = median_ms([&] { (void)ctxguard::to_json(*ctxguard::parse_json(text)); });
  std::printf("listing: %zu tools, %zu bytes, %zu estimated tokens; parse + serialize %.2f ms\n",
              tools, text.size(), ctxguard::budget::estimate_tokens(text), plain);
  for (const auto mode :
       {ctxguard::config::ToolListMode::kFull, ctxguard::config::ToolListMode::kCompact,
        ctxguard::config::ToolListMode::kLazy}) {
    ctxguard::config::ProcessSettings process;
    process.tool_list = mode;
    const auto profile = ctxguard::config::Profile::of({}, process);
    std::string sent;
    const double edit = median_ms([&] {
      ctxguard::mcp::ToolListEditor editor;
      json::value result = *ctxguard::parse_json(text);
      if (mode == ctxguard::config::ToolListMode::kCompact) {
        editor.set_shared_guidance(ctxguard::mcp::shared_sentences(result.at("tools").as_array()));
      }
      editor.edit(result.as_object(), *profile, "bench");
      sent = ctxguard::to_json(result);
    });
    const char* name = mode == ctxguard::config::ToolListMode::kFull      ? "full"
                       : mode == ctxguard::config::ToolListMode::kCompact ? "compact"
                                                                          : "lazy";
    std::printf(
        "%-8s parse + edit + serialize %.2f ms (%.2fx plain); %zu estimated tokens (%.1f%%)\n",
        name, edit, edit / plain, ctxguard::budget::estimate_tokens(sent),
        100.0 * static_cast<double>(ctxguard::budget::estimate_tokens(sent)) /
            static_cast<double>(ctxguard::budget::estimate_tokens(text)));
  }

  ctxguard::mcp::ToolCatalog catalog;
  catalog.add_page(list, true, true);
  const ctxguard::budget::FitBudget budget{4000};
  std::size_t found = 0;
  const double search = median_ms([&] {
    found =
        ctxguard::mcp::search_tools(catalog, json::object{{"query", "action 7 product 42"}}, budget)
            .found;
  });
  std::printf("search over %zu tools: %.3f ms (median), %zu found\n", tools, search, found);
  return 0;
}
