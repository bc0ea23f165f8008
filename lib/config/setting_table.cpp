#include "config/setting_table.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "support/double_chars.hpp"

namespace ctxguard::config {

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;
// The largest client limit in characters, bytes or lines (Claude Desktop's is 1 MiB).
constexpr std::uint64_t kLimitMax = 64 * kMiB;

// A member of TunedSettings as a setting's get/set pair: `PATH` is the member's path from a
// TunedSettings named `t` ("budget.token_budget", "process.cache_bytes").
#define CTXGUARD_NUMBER(PATH)                                                                 \
  [](const TunedSettings& t) -> std::uint64_t { return static_cast<std::uint64_t>(t.PATH); }, \
      [](TunedSettings& t, std::uint64_t v) { t.PATH = static_cast<decltype(t.PATH)>(v); }
#define CTXGUARD_SWITCH(PATH)                                             \
  [](const TunedSettings& t) -> std::uint64_t { return t.PATH ? 1 : 0; }, \
      [](TunedSettings& t, std::uint64_t v) { t.PATH = v != 0; }

using Kind = SettingKind;
using Scope = SettingScope;

constexpr std::array<std::string_view, 2> kModeChoices{"enforce", "observe"};
constexpr std::array<std::string_view, 3> kToolListChoices{"full", "compact", "lazy"};

const std::array kSettings{
    SettingSpec{"mode", "mode", "CTXGUARD_MODE", Kind::kChoice, Scope::kTool, 0, 1,
                "enforce: rewrite answers; observe: forward them untouched and log what enforce "
                "would have done (shadow / A-B)",
                CTXGUARD_SWITCH(budget.observe), kModeChoices},
    SettingSpec{"tokenBudget", "token-budget", "CTXGUARD_TOKEN_BUDGET", Kind::kCount, Scope::kTool,
                100, kTokensMax,
                "estimated tokens above which a tool result is compacted, paginated, summarized",
                CTXGUARD_NUMBER(budget.token_budget)},
    SettingSpec{"hardCap", "hard-cap", "CTXGUARD_HARD_CAP", Kind::kCount, Scope::kTool, 100,
                kTokensMax,
                "estimated tokens no answer exceeds; larger ones are cut as text (default: 3x "
                "tokenBudget when only that is raised past 12000)",
                CTXGUARD_NUMBER(budget.hard_cap)},
    SettingSpec{"maxChars", "max-chars", "CTXGUARD_MAX_CHARS", Kind::kCount, Scope::kTool, 0,
                kLimitMax,
                "characters (UTF-16 code units) no answer exceeds, its text items joined; for "
                "clients that cut by characters (0: no limit)",
                CTXGUARD_NUMBER(budget.max_chars)},
    SettingSpec{"maxBytes", "max-bytes", "CTXGUARD_MAX_BYTES", Kind::kBytes, Scope::kTool, 0,
                kLimitMax,
                "UTF-8 bytes no answer exceeds, its text items joined (K, M suffix; 0: no limit)",
                CTXGUARD_NUMBER(budget.max_bytes)},
    SettingSpec{"maxLines", "max-lines", "CTXGUARD_MAX_LINES", Kind::kCount, Scope::kTool, 0,
                kLimitMax, "lines no answer exceeds, its text items joined (0: no limit)",
                CTXGUARD_NUMBER(budget.max_lines)},
    SettingSpec{"maxJsonBytes", "max-json-bytes", "CTXGUARD_MAX_JSON_BYTES", Kind::kBytes,
                Scope::kTool, 0, kLimitMax,
                "UTF-8 bytes no answer exceeds as JSON: structuredContent when there is one, else "
                "its text items as a content array; for clients that measure that, like Codex (K, "
                "M suffix; 0: no limit)",
                CTXGUARD_NUMBER(budget.max_json_bytes)},
    SettingSpec{"estimatorMargin", "estimator-margin", "CTXGUARD_ESTIMATOR_MARGIN", Kind::kCount,
                Scope::kTool, 0, 50,
                "percent added to every token estimate: answers are planned against "
                "tokenBudget * 100 / (100 + margin)",
                CTXGUARD_NUMBER(budget.estimator_margin_percent)},
    SettingSpec{"pageSize", "page-size", "CTXGUARD_PAGE_SIZE", Kind::kCount, Scope::kTool, 1,
                100'000,
                "items kept when a long array is cut (arrays of 10 items or fewer never are)",
                CTXGUARD_NUMBER(budget.page_size)},
    SettingSpec{"maxPageSize", "max-page-size", "CTXGUARD_MAX_PAGE_SIZE", Kind::kCount,
                Scope::kTool, 1, 100'000, "largest `limit` ctxguard_fetch accepts",
                CTXGUARD_NUMBER(budget.max_page_size)},
    SettingSpec{"chunkSize", "chunk-size", "CTXGUARD_CHUNK_SIZE", Kind::kCount, Scope::kTool, 50,
                kTokensMax,
                "estimated tokens above which plain text is served in chunks (default: half the "
                "budget when that is lower than 2000)",
                CTXGUARD_NUMBER(budget.summary.chunk_tokens)},
    SettingSpec{"maxString", "max-string", "CTXGUARD_MAX_STRING", Kind::kCount, Scope::kTool, 0,
                1'000'000, "characters kept of a long string in a summarized answer (0: never cut)",
                CTXGUARD_NUMBER(budget.summary.max_string_chars)},
    SettingSpec{"maxDepth", "max-depth", "CTXGUARD_MAX_DEPTH", Kind::kCount, Scope::kTool, 0, 64,
                "nesting shown in a summarized answer; deeper values become placeholders (0: any)",
                CTXGUARD_NUMBER(budget.summary.max_depth)},
    SettingSpec{"pagination", "pagination", "CTXGUARD_PAGINATION", Kind::kSwitch, Scope::kTool, 0,
                1, "long arrays are cut to a page, with a cursor to the rest",
                CTXGUARD_SWITCH(budget.pagination)},
    SettingSpec{"summarization", "summarization", "CTXGUARD_SUMMARIZATION", Kind::kSwitch,
                Scope::kTool, 0, 1,
                "long strings are cut, deep values collapsed and records projected to fit",
                CTXGUARD_SWITCH(budget.summarization)},
    SettingSpec{"projection", "projection", "CTXGUARD_PROJECTION", Kind::kSwitch, Scope::kTool, 0,
                1, "records may lose fields when nothing else makes an answer fit",
                CTXGUARD_SWITCH(budget.summary.project)},
    SettingSpec{"chunking", "chunking", "CTXGUARD_CHUNKING", Kind::kSwitch, Scope::kTool, 0, 1,
                "plain text over chunkSize is served in chunks cut at semantic boundaries",
                CTXGUARD_SWITCH(budget.chunking)},
    SettingSpec{"search", "search", "CTXGUARD_SEARCH", Kind::kSwitch, Scope::kTool, 0, 1,
                "ctxguard_fetch `query` may search these results", CTXGUARD_SWITCH(budget.search)},
    SettingSpec{"tables", "tables", "CTXGUARD_TABLES", Kind::kSwitch, Scope::kTool, 0, 1,
                "uniform arrays of flat objects as {\"columns\",\"rows\"} (lossless, fewer tokens)",
                CTXGUARD_SWITCH(budget.summary.tables)},
    SettingSpec{"cursorTtl", "cursor-ttl", "CTXGUARD_CURSOR_TTL", Kind::kSeconds, Scope::kStartup,
                1, 604'800, "seconds a cursor stays valid after the result's last use",
                [](const TunedSettings& t) -> std::uint64_t {
                  return static_cast<std::uint64_t>(t.process.cursor_ttl.count()) * 1000;
                },
                [](TunedSettings& t, std::uint64_t ms) {
                  t.process.cursor_ttl = std::chrono::seconds((ms + 999) / 1000);
                }},
    SettingSpec{"toolListBudget", "tool-list-budget", "CTXGUARD_TOOL_LIST_BUDGET", Kind::kCount,
                Scope::kProcess, 0, kTokensMax,
                "estimated tokens of tools/list and the instructions above which a warning is "
                "logged: they take that much of every conversation (0: never warn)",
                CTXGUARD_NUMBER(process.tool_list_budget)},
    SettingSpec{"toolList", "tool-list", "CTXGUARD_TOOL_LIST", Kind::kChoice, Scope::kProcess, 0,
                kToolListChoices.size() - 1,
                "how tools/list reaches the client: full (as the server sent it), compact (the "
                "same tools written shorter), lazy (a search and a call tool instead of the "
                "server's tools)",
                CTXGUARD_NUMBER(process.tool_list), kToolListChoices},
    SettingSpec{"cacheSize", "cache-size", "CTXGUARD_CACHE_SIZE", Kind::kBytes, Scope::kProcess,
                kMiB, 64 * kGiB, "memory for original results (K, M or G suffix, binary units)",
                CTXGUARD_NUMBER(process.cache_bytes)},
};

#undef CTXGUARD_NUMBER
#undef CTXGUARD_SWITCH

std::optional<std::uint64_t> parse_whole(std::string_view text) {
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return number;
}

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
  std::uint64_t multiplier = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k':
        multiplier = kKiB;
        break;
      case 'M':
      case 'm':
        multiplier = kMiB;
        break;
      case 'G':
      case 'g':
        multiplier = kGiB;
        break;
      default:
        break;
    }
    if (multiplier != 1) text.remove_suffix(1);
  }
  const auto number = parse_whole(text);
  if (!number || *number > std::numeric_limits<std::uint64_t>::max() / multiplier) {
    return std::nullopt;
  }
  return *number * multiplier;
}

// Milliseconds of a number of seconds ("600", "0.5", "90s").
std::optional<std::uint64_t> parse_seconds(std::string_view text) {
  if (!text.empty() && text.back() == 's') text.remove_suffix(1);
  const std::optional<double> seconds = parse_double(text);
  if (!seconds || !std::isfinite(*seconds) || *seconds < 0 || *seconds > 1e9) return std::nullopt;
  return static_cast<std::uint64_t>(std::llround(*seconds * 1000));
}

// YAML 1.1 spellings too (True, FALSE, On): what yaml-cpp itself reads as booleans.
std::optional<std::uint64_t> parse_choice(std::span<const std::string_view> choices,
                                          std::string_view text) {
  const auto found = std::find(choices.begin(), choices.end(), text);
  if (found == choices.end()) return std::nullopt;
  return static_cast<std::uint64_t>(found - choices.begin());
}

// "enforce or observe", "full, compact or lazy".
std::string choice_list(std::span<const std::string_view> choices) {
  std::string list;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) list += i + 1 == choices.size() ? " or " : ", ";
    list += choices[i];
  }
  return list;
}

std::optional<std::uint64_t> parse_switch(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const std::string_view yes : {"true", "on", "yes", "1"}) {
    if (lower == yes) return 1;
  }
  for (const std::string_view no : {"false", "off", "no", "0"}) {
    if (lower == no) return 0;
  }
  return std::nullopt;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes != 0 && bytes % kGiB == 0) return fmt::format("{}G", bytes / kGiB);
  if (bytes != 0 && bytes % kMiB == 0) return fmt::format("{}M", bytes / kMiB);
  if (bytes != 0 && bytes % kKiB == 0) return fmt::format("{}K", bytes / kKiB);
  return std::to_string(bytes);
}

}  // namespace

std::span<const SettingSpec> setting_table() { return kSettings; }

const SettingSpec* find_setting(std::string_view key) {
  const auto found = std::find_if(kSettings.begin(), kSettings.end(),
                                  [key](const SettingSpec& spec) { return spec.key == key; });
  return found != kSettings.end() ? &*found : nullptr;
}

std::string allowed_values(const SettingSpec& spec) {
  switch (spec.kind) {
    case SettingKind::kCount:
      return fmt::format("a whole number from {} to {}", spec.min, spec.max);
    case SettingKind::kBytes:
      return fmt::format("a size from {} to {} (bytes, or with a K, M or G suffix)",
                         format_bytes(spec.min), format_bytes(spec.max));
    case SettingKind::kSeconds:
      return fmt::format("seconds from {} to {}", spec.min, spec.max);
    case SettingKind::kSwitch:
      return "true or false";
    case SettingKind::kChoice:
      return choice_list(spec.choices);
  }
  return {};
}

Checked<> parse_setting(const SettingSpec& spec, std::string_view text, std::string_view where,
                        TunedSettings& tuned) {
  std::optional<std::uint64_t> value;
  switch (spec.kind) {
    case SettingKind::kCount:
      value = parse_whole(text);
      break;
    case SettingKind::kBytes:
      value = parse_bytes(text);
      break;
    case SettingKind::kSeconds:
      value = parse_seconds(text);
      break;
    case SettingKind::kSwitch:
      value = parse_switch(text);
      break;
    case SettingKind::kChoice:
      value = parse_choice(spec.choices, text);
      break;
  }
  const std::uint64_t scale = spec.kind == SettingKind::kSeconds ? 1000 : 1;
  if (!value || *value < spec.min * scale || *value > spec.max * scale) {
    return Problem{fmt::format("{}: {} is not allowed: it must be {}.", where,
                               text.empty() ? std::string("an empty value") : std::string(text),
                               allowed_values(spec))};
  }
  spec.set(tuned, *value);
  return {};
}

Checked<SettingValue> read_setting_value(const SettingSpec& spec, std::string_view text,
                                         std::string_view where) {
  TunedSettings scratch;
  if (auto parsed = parse_setting(spec, text, where, scratch); !parsed) return parsed.error();
  return SettingValue{&spec, std::string(text), spec.get(scratch)};
}

std::string format_setting(const SettingSpec& spec, const TunedSettings& tuned) {
  const std::uint64_t value = spec.get(tuned);
  switch (spec.kind) {
    case SettingKind::kCount:
      return std::to_string(value);
    case SettingKind::kBytes:
      return format_bytes(value);
    case SettingKind::kSeconds:
      return value % 1000 == 0 ? fmt::format("{}s", value / 1000)
                               : fmt::format("{}s", static_cast<double>(value) / 1000);
    case SettingKind::kSwitch:
      return value != 0 ? "true" : "false";
    case SettingKind::kChoice:
      return value < spec.choices.size() ? std::string(spec.choices[value]) : std::to_string(value);
  }
  return std::to_string(value);
}

std::vector<SettingConflict> check_setting_rules(const BudgetSettings& budget,
                                                 std::string_view where) {
  const std::string prefix = where.empty() ? std::string() : std::string(where) + ".";
  std::vector<SettingConflict> conflicts;
  if (budget.page_size > budget.max_page_size) {
    conflicts.push_back({fmt::format("{}pageSize: {} is above maxPageSize {}", prefix,
                                     budget.page_size, budget.max_page_size),
                         "pageSize", "maxPageSize"});
  }
  if (budget.hard_cap < budget.token_budget) {
    conflicts.push_back({fmt::format("{}hardCap: {} is below tokenBudget {}", prefix,
                                     budget.hard_cap, budget.token_budget),
                         "hardCap", "tokenBudget"});
  }
  if (budget.summary.chunk_tokens > budget.token_budget) {
    conflicts.push_back(
        {fmt::format("{}chunkSize: {} is above tokenBudget {}: a chunk must fit in one answer",
                     prefix, budget.summary.chunk_tokens, budget.token_budget),
         "chunkSize", "tokenBudget"});
  }
  // Below these an answer could not hold its `_ctxguard` item and a useful piece beside it.
  const auto too_small = [&](std::string_view key, std::size_t value, std::size_t least,
                             std::string_view unit) {
    if (value == 0 || value >= least) return;
    conflicts.push_back({fmt::format("{}{}: {} is too small: 0 (no limit) or at least {} {}",
                                     prefix, key, value, least, unit),
                         key, key});
  };
  too_small("maxChars", budget.max_chars, kMinLimitChars, "characters");
  too_small("maxBytes", budget.max_bytes, kMinLimitChars, "bytes");
  too_small("maxLines", budget.max_lines, kMinLimitLines, "lines");
  too_small("maxJsonBytes", budget.max_json_bytes, kMinLimitChars, "bytes");
  if (budget.summary.max_string_chars != 0 && budget.summary.max_string_chars < 20) {
    conflicts.push_back(
        {fmt::format("{}maxString: {} is too short: 0 (never cut) or at least 20 characters",
                     prefix, budget.summary.max_string_chars),
         "maxString", "maxString"});
  }
  return conflicts;
}

}  // namespace ctxguard::config
