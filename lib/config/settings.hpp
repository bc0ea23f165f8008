#pragma once
// The effective settings of one ctxguard process: a plain aggregate with its defaults in place.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/common.h>

namespace ctxguard::config {

struct LogSettings {
  spdlog::level::level_enum level = spdlog::level::info;
  std::optional<std::string> file;  // stderr when empty
};

struct LifecycleSettings {
  // After the client closes stdin: how long the server may take to exit before SIGTERM.
  std::chrono::milliseconds shutdown_timeout{5000};
  // After SIGTERM: how long before SIGKILL.
  std::chrono::milliseconds kill_timeout{2000};
};

// A per-tool projection map: tools whose name matches `tool_glob` ('*' and '?' wildcards)
// keep only `fields` of their records when a result must be summarized. Dotted fields reach into
// nested objects ("guest.name").
struct ProjectionRule {
  std::string tool_glob;
  std::vector<std::string> fields;
};

// Summarization and chunking.
struct SummarySettings {
  std::size_t chunk_tokens = 2000;     // plain text above this is served in chunks
  std::size_t max_string_chars = 500;  // longer strings are cut in a summarized answer
  std::size_t max_depth = 4;           // deeper objects/arrays become placeholders there
  bool tables = false;                 // uniform flat arrays as {"columns","rows"} (lossless)
  bool project = true;  // records may lose fields when nothing else makes an answer fit
  std::vector<ProjectionRule> projections;  // first match wins; otherwise fields are auto-chosen
  std::optional<std::string> spill_dir;     // also write each cut answer to a file here
};

// The largest token budget or hard cap a setting may hold: far above any model's context, low
// enough that budget arithmetic (a cap three times the budget, say) cannot overflow.
inline constexpr std::size_t kTokensMax = 10'000'000;

// How the server's tools are listed to the client (docs/protocol.md 4.2).
enum class ToolListMode : std::uint8_t {
  kFull,     // as the server sent them
  kCompact,  // the same tools, schemas and descriptions written shorter
  kLazy,     // ctxguard's search and call tools stand for them
};

// The smallest client limits that can be set (besides 0, none): an answer needs room for its
// `_ctxguard` item, about 700 characters on one line, and something beside it.
inline constexpr std::size_t kMinLimitChars = 2000;
inline constexpr std::size_t kMinLimitLines = 10;

// The context budget (docs/configuration.md).
struct BudgetSettings {
  // observe (shadow): answers go out as the server sent them; what enforce would have
  // done is computed and logged.
  bool observe = false;
  std::size_t token_budget = 4000;  // answers above this many estimated tokens are rewritten
  std::size_t hard_cap = 12000;     // no answer exceeds this, whatever else is configured
  // A client's own limits on an answer, exact (0: none; budget/answer_size.hpp says how each is
  // measured). An answer is planned within them and never exceeds them.
  std::size_t max_chars = 0;        // UTF-16 code units of the text items joined
  std::size_t max_bytes = 0;        // UTF-8 bytes of the same
  std::size_t max_lines = 0;        // its lines
  std::size_t max_json_bytes = 0;   // UTF-8 bytes of it as JSON, as Codex measures it
  std::size_t page_size = 50;       // items on a page when an array is cut
  std::size_t max_page_size = 200;  // the most `limit` may ask for in ctxguard_fetch
  std::size_t min_cut_items = 10;   // arrays this short are never cut
  // Percent added to every estimate (a safety margin): answers are planned against
  // token_budget * 100 / (100 + margin), see planning_budget().
  std::size_t estimator_margin_percent = 0;
  // Feature switches; the hard cap applies whatever they say.
  bool pagination = true;     // long arrays cut to a page
  bool summarization = true;  // long strings cut, deep values collapsed, records projected
  bool chunking = true;       // long plain text served in chunks
  bool search = true;         // ctxguard_fetch `query` over these results
  SummarySettings summary;
};

// What the whole process shares, whatever the tool: one cache, one cursor key and lifetime, one
// tools/list (docs/configuration.md). Set globally only; per-tool and client rules cannot.
struct ProcessSettings {
  std::chrono::seconds cursor_ttl{600};
  std::size_t cache_bytes = std::size_t{256} << 20;  // memory for original results
  // Estimated tokens of tools/list (all pages) and the instructions above which ctxguard warns:
  // they sit in every conversation before any call (docs/configuration.md). 0: never warn.
  std::size_t tool_list_budget = 10000;
  // How tools/list reaches the client (docs/protocol.md 4.2): one choice for the whole server.
  ToolListMode tool_list = ToolListMode::kFull;
  std::optional<std::string> cursor_secret;  // random per process when empty
  // When the server has its own tool named ctxguard_fetch, ours becomes <prefix>ctxguard_fetch.
  std::string fetch_tool_prefix = "proxy_";
};

// Everything the setting table (setting_table.hpp) reads and writes, each in its scope.
struct TunedSettings {
  BudgetSettings budget;    // SettingScope::kTool: the policy of a tool's calls
  ProcessSettings process;  // kProcess and kStartup
};

// `budget` as the pipeline plans with it: the budget and the cap lowered by the estimator
// margin (a 20% margin plans a 4000-token budget as 3333 estimated tokens).
inline BudgetSettings planning_budget(BudgetSettings budget) {
  if (budget.estimator_margin_percent == 0) return budget;
  const std::size_t scale = 100 + budget.estimator_margin_percent;
  // Never below the smallest budget that can be configured: an answer needs room for its metadata.
  budget.token_budget = std::max<std::size_t>(budget.token_budget * 100 / scale, 100);
  budget.hard_cap = std::max(budget.hard_cap * 100 / scale, budget.token_budget);
  budget.summary.chunk_tokens = std::min(budget.summary.chunk_tokens, budget.token_budget);
  return budget;
}

// Telemetry: all off unless asked for.
struct TelemetrySettings {
  std::optional<std::string> file;  // one JSON line per call (docs/telemetry.md)
  std::size_t queue_lines = 8192;   // records waiting for the disk; more are dropped and counted
  std::optional<std::string> metrics_listen;  // "[ADDR:]PORT" for /metrics and /health
  // After the server exits: how long /metrics and /health stay up (the client is told at once).
  std::chrono::milliseconds metrics_linger{0};
  // --sample-answers: a share of the answers sent, whole, for checking the estimator (they hold
  // payloads: off unless asked for).
  std::optional<std::string> sample_file;
  double sample_percent = 1.0;
};

struct Settings {
  std::vector<std::string> server_command;  // argv of the MCP server; [0] is looked up on PATH
  LogSettings log;
  LifecycleSettings lifecycle;
  BudgetSettings budget;  // the global policy of tools' calls (rules resolved by config::Profile)
  ProcessSettings process;
  TelemetrySettings telemetry;
  std::size_t max_message_bytes = std::size_t{256} << 20;  // longer lines are refused
  // --client: the client name assumed for a client that gives none in clientInfo (selects its
  // preset and `clients:` rule); empty: none.
  std::string assumed_client;
};

}  // namespace ctxguard::config
