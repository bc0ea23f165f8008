// Fuzz target: the whole rewrite of a tools/call (or resources/read) result, ResultPipeline, and
// ctxguard_fetch following the cursors it issued (FetchTool), wired as the proxy wires them.
//
// Input: 14 knob bytes (budget_knobs and shape below: budgets, page and chunk sizes, switches,
// margin, the result's shape, repetitions, fetch arguments), then the server's payload: text,
// or JSON placed where a server puts it (a text item, structuredContent mirroring or wrapping
// it, the whole result).
// Invariants:
//   - process() and answer() never throw (pipeline.hpp: pure, never throws on bad input);
//   - every answer serializes to JSON that parses back;
//   - a first answer, rewritten or forwarded, is within the hard cap (a CallToolResult's
//     estimated tokens as result_tokens counts them, with the budget the pipeline was given;
//     checked from kSmallestCheckedCap up);
//   - every cursor an answer carries is answered by ctxguard_fetch (followed breadth first, up
//     to kMaxFetches per input), and each answer that is not an error fits the token budget
//     (from kSmallestCheckedBudget up).
// Runs repeat byte for byte: the key, both clocks and the cache-id salt are fixed.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <set>
#include <string>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"
#include "config/setting_table.hpp"
#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "fuzz_support.hpp"
#include "pipeline/fetch/fetch_tool.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/rewrite/result_pipeline.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using ctxguard::config::BudgetSettings;
using ctxguard::fuzz::excerpt;
using ctxguard::fuzz::FuzzInput;
using ctxguard::fuzz::require;

constexpr std::size_t kMaxFetches = 16;
// The budgets from which the size invariants are checked. Every part cut carries a `_ctxguard`
// item of 100-130 estimated tokens, and a chunk page's takes up to ~210 of the
// min(budget / 2, kChunkMetadataTokens) left for it: a hard cap below ~270 cannot hold two cut
// parts (text and structuredContent), nor a token budget below ~430 a chunk page. The settings
// allow 100 for both (a known limit; smaller budgets are still fuzzed for crashes and JSON).
constexpr std::size_t kSmallestCheckedCap = 300;
constexpr std::size_t kSmallestCheckedBudget = 500;
constexpr std::size_t kMaxRepeat = 32;

// Valid settings (the setting table's ranges and check_setting_rules), small enough that a few
// KB of input is over the budget.
BudgetSettings budget_knobs(FuzzInput& input) {
  BudgetSettings budget;
  budget.token_budget = 100 + std::size_t{input.byte()} * 4;
  budget.hard_cap = budget.token_budget + std::size_t{input.byte()} * 8;
  budget.page_size = input.in_range(1, 64);
  budget.max_page_size = budget.page_size + input.in_range(0, 200);
  budget.summary.chunk_tokens = std::min(50 + std::size_t{input.byte()} * 4, budget.token_budget);
  const std::uint8_t max_string = input.byte();
  budget.summary.max_string_chars = max_string < 32 ? 0 : 20 + max_string;
  budget.summary.max_depth = input.in_range(0, 8);
  const std::uint8_t switches = input.byte();
  budget.pagination = (switches & 1) == 0;
  budget.summarization = (switches & 2) == 0;
  budget.summary.project = (switches & 4) == 0;
  budget.chunking = (switches & 8) == 0;
  budget.search = (switches & 16) == 0;
  budget.summary.tables = (switches & 32) != 0;
  if ((switches & 64) != 0) budget.summary.projections.push_back({"t*", {"id", "name"}});
  const std::uint8_t margin = input.byte();
  budget.estimator_margin_percent = margin < 128 ? 0 : margin % 51;
  return budget;
}

enum class Shape {
  kText,            // one text item holding the payload
  kJsonText,        // a text item holding the payload's JSON
  kMirror,          // ... and structuredContent equal to it
  kStructuredOnly,  // a short text item and the JSON as structuredContent
  kWholeResult,     // the payload's JSON is the result itself
  kManyItems,       // one text item per line of the payload
  kWrapper,         // a text item and structuredContent {"content": that text, ...}
  kResource,        // a resources/read result with the payload as a text content
};

struct Call {
  json::object result;
  bool resource = false;
};

Call build_call(Shape shape, std::string_view payload, std::size_t repeat, bool is_error,
                bool image) {
  std::string text;
  for (std::size_t i = 0; i < repeat; ++i) text += payload;
  auto value = ctxguard::parse_json(payload);
  if (value && repeat > 1) value = json::value(json::array(repeat, *value));
  if (!value && shape != Shape::kResource && shape != Shape::kManyItems) shape = Shape::kText;

  const auto text_item = [](std::string_view content) {
    return json::object{{"type", "text"}, {"text", content}};
  };
  Call call;
  json::object& result = call.result;
  switch (shape) {
    case Shape::kText:
      result["content"] = json::array{text_item(text)};
      break;
    case Shape::kJsonText:
      result["content"] = json::array{text_item(ctxguard::to_json(*value))};
      break;
    case Shape::kMirror:
      result["content"] = json::array{text_item(ctxguard::to_json(*value))};
      result["structuredContent"] = *value;
      break;
    case Shape::kStructuredOnly:
      result["content"] = json::array{text_item("The result is in structuredContent.")};
      result["structuredContent"] = *value;
      break;
    case Shape::kWholeResult:
      if (value->is_object()) {
        result = value->as_object();
      } else {
        result["content"] = *value;
      }
      break;
    case Shape::kManyItems: {
      json::array items;
      for (std::size_t at = 0; at <= text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        items.push_back(text_item(std::string_view(text).substr(at, end - at)));
        at = end + 1;
      }
      result["content"] = std::move(items);
      break;
    }
    case Shape::kWrapper:
      result["content"] = json::array{text_item(text)};
      result["structuredContent"] = json::object{{"content", text}, {"truncated", false}};
      break;
    case Shape::kResource:
      call.resource = true;
      result["contents"] = json::array{
          json::object{{"uri", "file:///fuzz.txt"}, {"mimeType", "text/plain"}, {"text", text}},
          json::object{{"uri", "file:///fuzz.bin"}, {"blob", "AAEC"}}};
      return call;
  }
  if (is_error) result["isError"] = true;
  json::value* content = result.if_contains("content");
  if (image && content != nullptr && content->is_array()) {
    content->as_array().push_back(
        json::object{{"type", "image"}, {"data", "iVBORw0KGgo="}, {"mimeType", "image/png"}});
  }
  return call;
}

// What a model reads of a CallToolResult, as the pipeline counts it; 0 for other results.
std::size_t tokens_of(const json::object& result) {
  const auto tokens = ctxguard::pipeline::result_tokens(result);
  return tokens ? tokens->total : 0;
}

// CTXGUARD_FUZZ_VERBOSE=1 prints every answer (to read what a crash input does).
bool verbose() {
  static const bool on = std::getenv("CTXGUARD_FUZZ_VERBOSE") != nullptr;
  return on;
}

void require_valid_json(const json::object& result, std::string_view what) {
  const std::string text = ctxguard::to_json(json::value(result));
  if (verbose())
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(what.size()), what.data(), text.c_str());
  require(ctxguard::parse_json(text).has_value(), "answers are valid JSON",
          std::string(what) + ": " + excerpt(text, 400));
}

bool looks_like_cursor(std::string_view text) {
  if (text.size() < 40 || text.size() > 4096) return false;
  // Letter hex (support/letter_hex.hpp): a-q only, an even length.
  return text.size() % 2 == 0 && text.find_first_not_of("abcdefghijklmnopq") == std::string::npos;
}

// Every string in `value` that is a cursor of `codec`, looking inside text that holds JSON too
// (pages and `_ctxguard` trailers travel as text items).
void collect_cursors(const json::value& value, const ctxguard::cursor::CursorCodec& codec,
                     std::chrono::system_clock::time_point wall_now, std::set<std::string>& seen,
                     std::deque<std::string>& queue, int depth = 0) {
  if (depth > 64) return;
  if (const json::object* object = value.if_object()) {
    for (const auto& member : *object) {
      collect_cursors(member.value(), codec, wall_now, seen, queue, depth + 1);
    }
  } else if (const json::array* array = value.if_array()) {
    for (const json::value& item : *array) {
      collect_cursors(item, codec, wall_now, seen, queue, depth + 1);
    }
  } else if (const json::string* string = value.if_string()) {
    const std::string_view text = *string;
    if (looks_like_cursor(text) && codec.decode(text, wall_now)) {
      if (seen.insert(std::string(text)).second) queue.emplace_back(text);
      return;
    }
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
      if (auto inner = ctxguard::parse_json(text)) {
        collect_cursors(*inner, codec, wall_now, seen, queue, depth + 1);
      }
    }
  }
}

// Arguments beside the cursor for the first fetch: what a model may add (limit, fields, path,
// startLine/endLine, query, aggregate), including values out of range.
json::object fetch_arguments(std::string_view cursor, std::uint8_t variant, std::uint8_t a,
                             std::uint8_t b) {
  json::object arguments{{"cursor", cursor}};
  switch (variant % 9) {
    case 1:
      arguments["limit"] = a;
      break;
    case 2:
      arguments["limit"] = b % 2 == 0 ? json::value(1e30 * a) : json::value(-1.5 * a);
      break;
    case 3:
      arguments["fields"] = json::array{"id", std::string(a % 4, 'n')};
      break;
    case 4:
      arguments["path"] = a % 2 == 0 ? "" : "/" + std::to_string(b % 4);
      break;
    case 5:
      arguments["startLine"] = a;
      arguments["endLine"] = b % 2 == 0 ? json::value(b) : json::value(1e300);
      break;
    case 6:
      arguments["query"] = std::string(1, static_cast<char>('a' + a % 26)) + (b % 2 ? "=1" : "");
      break;
    case 7:
      arguments["cursor"] = std::string(cursor.substr(0, cursor.size() - a % 4)) + "A";
      break;
    case 8: {
      static constexpr const char* kFields[] = {"id", "status", "name", "total", "a.b", "x"};
      json::object aggregate{{"sum", kFields[a % 6]}};
      if (b % 3 != 0) aggregate["groupBy"] = kFields[b % 6];
      if (b % 5 == 0) aggregate["avg"] = json::array{kFields[(a + b) % 6]};
      arguments["aggregate"] = std::move(aggregate);
      if (a % 4 == 0) arguments["limit"] = 1 + b % 3;
      break;
    }
    default:
      break;
  }
  return arguments;
}

constexpr std::uint64_t kEntrySalt = 0x9e3779b97f4a7c15;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput input(data, size);
  const BudgetSettings configured = budget_knobs(input);
  require(ctxguard::config::check_setting_rules(configured, "").empty(),
          "the fuzzer builds valid settings");
  const BudgetSettings budget = ctxguard::config::planning_budget(configured);
  const std::uint8_t shape_byte = input.byte();
  const auto shape = static_cast<Shape>(shape_byte % 8);
  const bool is_error = (shape_byte & 8) != 0;
  const bool image = (shape_byte & 16) != 0;
  const bool tiny_cache = (shape_byte & 32) != 0;  // stands for a result larger than the cache
  const bool dry_run = (shape_byte & 64) != 0;
  const bool rewrite = (shape_byte & 128) == 0;
  const std::size_t repeat = input.in_range(1, kMaxRepeat);
  const std::uint8_t fetch_variant = input.byte();
  const std::uint8_t fetch_a = input.byte();
  const std::uint8_t fetch_b = input.byte();
  const std::string_view payload = input.rest();

  const auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  const auto wall_now = std::chrono::system_clock::time_point{} + std::chrono::hours(24 * 20000);
  // Cursors carry the cache id XOR the codec's entry salt, and their bytes decide their estimated
  // tokens: with a random salt an input that broke a budget in one process would pass in the next.
  const ctxguard::config::ProcessSettings process;
  const ctxguard::cursor::CursorCodec codec({std::string(32, 'k')}, process.cursor_ttl, kEntrySalt);
  ctxguard::pipeline::ResultCache cache(tiny_cache ? 4096 : process.cache_bytes,
                                        process.cursor_ttl);
  const ctxguard::mcp::OwnToolNames names;
  ctxguard::pipeline::ResultPipeline pipeline(codec, cache, names);
  ctxguard::pipeline::FetchTool fetch(codec, cache, names);
  const ctxguard::pipeline::SettingsFor settings_for =
      [&budget](std::string_view) -> const BudgetSettings& { return budget; };

  Call call = build_call(shape, payload, repeat, is_error, image);
  const std::size_t original_tokens = tokens_of(call.result);
  const bool call_tool_result = ctxguard::pipeline::result_tokens(call.result).has_value();
  const std::string summary = "budget " + std::to_string(budget.token_budget) + ", hard cap " +
                              std::to_string(budget.hard_cap) + ", original tokens " +
                              std::to_string(original_tokens) + ", shape " +
                              std::to_string(shape_byte % 8);

  std::set<std::string> seen;
  std::deque<std::string> queue;
  try {
    const ctxguard::pipeline::CallContext context{"tool", rewrite, now, wall_now, dry_run};
    const json::object original = call.result;
    auto rewritten = call.resource ? pipeline.process_resource(call.result, budget, context)
                                   : pipeline.process(call.result, budget, context).rewritten;
    if (rewritten) {
      const json::object& answer = rewritten->result;
      require_valid_json(answer, "first answer");
      if (!call.resource) {
        require(ctxguard::pipeline::result_tokens(answer).has_value(),
                "a rewritten answer is a CallToolResult", summary);
        require(budget.hard_cap < kSmallestCheckedCap || tokens_of(answer) <= budget.hard_cap,
                "a rewritten answer is within the hard cap",
                summary + ", answer tokens " + std::to_string(tokens_of(answer)));
      }
      collect_cursors(json::value(answer), codec, wall_now, seen, queue);
    } else if (call_tool_result && !call.resource) {
      require(tokens_of(original) <= budget.hard_cap,
              "a result forwarded untouched is within the hard cap", summary);
    }

    for (std::size_t fetches = 0; fetches < kMaxFetches && !queue.empty(); ++fetches) {
      const std::string cursor = std::move(queue.front());
      queue.pop_front();
      const json::object arguments = fetches == 0
                                         ? fetch_arguments(cursor, fetch_variant, fetch_a, fetch_b)
                                         : json::object{{"cursor", cursor}};
      const auto answer = fetch.answer(json::value(arguments), settings_for, now, wall_now);
      const std::string what = "fetch " + std::to_string(fetches) + " of " +
                               excerpt(ctxguard::to_json(json::value(arguments)));
      require_valid_json(answer.result, what);
      require(ctxguard::pipeline::result_tokens(answer.result).has_value(),
              "a fetch answer is a CallToolResult", what);
      const json::value* error = answer.result.if_contains("isError");
      const bool failed = error != nullptr && error->is_bool() && error->get_bool();
      if (failed) continue;
      require(
          budget.token_budget < kSmallestCheckedBudget ||
              tokens_of(answer.result) <= budget.token_budget,
          "a fetch answer fits the token budget",
          what + ": " + summary + ", answer tokens " + std::to_string(tokens_of(answer.result)));
      collect_cursors(json::value(answer.result), codec, wall_now, seen, queue);
    }
  } catch (const std::exception& error) {
    ctxguard::fuzz::invariant_broken("the pipeline and the fetch tool never throw",
                                     std::string(error.what()) + "; " + summary);
  }
  return 0;
}
