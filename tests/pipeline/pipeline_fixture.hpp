#pragma once
// A pipeline, a fetch tool and their cache wired as the proxy wires them, with times under the
// test's control, and the client side of the protocol: following cursors to rebuild a result.

#include <catch2/catch.hpp>

#include <chrono>
#include <deque>
#include <string>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"
#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "pipeline/fetch/fetch_tool.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/rewrite/result_pipeline.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline::testing {

namespace json = boost::json;

inline config::BudgetSettings small_budget(std::size_t tokens = 1000) {
  config::BudgetSettings budget;
  budget.token_budget = tokens;
  budget.hard_cap = tokens * 3;
  return budget;
}

// The cursor key and entry salt of a fixture: another process's, when they differ.
struct CodecSecrets {
  std::string key = std::string(32, 'k');
  std::uint64_t salt = 0x5a17;
};

struct Fixture {
  explicit Fixture(config::BudgetSettings settings = small_budget(), CodecSecrets secrets = {},
                   config::ProcessSettings shared = {})
      : budget(std::move(settings)),
        process_settings(std::move(shared)),
        codec({std::move(secrets.key)}, process_settings.cursor_ttl, secrets.salt),
        cache(process_settings.cache_bytes, process_settings.cursor_ttl),
        pipeline(codec, cache, names),
        fetch(codec, cache, names) {}

  std::optional<RewrittenResult> process(json::object result, std::string_view tool = "tool",
                                         bool rewrite = true) {
    held = std::move(result);
    return pipeline.process(held, budget, CallContext{tool, rewrite, now, wall_now}).rewritten;
  }

  json::object fetch_page(json::object arguments) {
    return fetch.answer(json::value(std::move(arguments)), settings_for(), now, wall_now).result;
  }

  // Every tool has `budget` (the tests change it between calls).
  SettingsFor settings_for() {
    return [this](std::string_view) -> const config::BudgetSettings& { return budget; };
  }

  config::BudgetSettings budget;
  config::ProcessSettings process_settings;
  cursor::CursorCodec codec;
  ResultCache cache;
  mcp::OwnToolNames names;
  ResultPipeline pipeline;
  FetchTool fetch;
  json::object held;
  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
  std::chrono::system_clock::time_point wall_now = std::chrono::system_clock::now();
};

inline json::object text_result(std::string_view text) {
  return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}}};
}

inline json::value parse(std::string_view text) {
  auto value = parse_json(text);
  REQUIRE(value.has_value());
  return std::move(*value);
}

// The cursor an answer offers first to go on from it (docs/protocol.md 3.1), from the
// `_ctxguard` of its text items; empty when it offers none.
inline std::string first_cursor(const json::array& items) {
  for (const json::value& item : items) {
    const json::value* text = item.as_object().if_contains("text");
    if (text == nullptr) continue;
    const auto parsed = parse_json(text->as_string());
    if (!parsed || !parsed->is_object()) continue;
    const json::value* meta = parsed->as_object().if_contains("_ctxguard");
    if (meta == nullptr) continue;
    for (const std::string_view key : kWayOnCursors) {
      if (const json::value* cursor = meta->as_object().if_contains(key)) {
        return std::string(cursor->as_string());
      }
    }
  }
  return {};
}

// The items of an answer after its way on: an answer that offers a cursor starts with an item
// that names it (checked here), and the tests read what follows it.
inline json::array content_of(const json::object& result) {
  const json::array& items = result.at("content").as_array();
  const std::string cursor = first_cursor(items);
  if (cursor.empty()) return items;
  INFO(ctxguard::to_json(items).substr(0, 600));
  REQUIRE(!items.empty());
  const std::string_view way_on = items.front().as_object().at("text").as_string();
  REQUIRE(way_on.starts_with("ctxguard: "));
  REQUIRE(way_on.find('"' + cursor + '"') != std::string_view::npos);
  return json::array(items.begin() + 1, items.end());
}

inline std::string text_at(const json::object& result, std::size_t index) {
  return std::string(content_of(result).at(index).as_object().at("text").as_string());
}

// Tokens a model sees for a result (what the budget is about).
inline std::size_t tokens_of(const json::object& result) {
  std::size_t tokens = 0;
  for (const json::value& item : result.at("content").as_array()) {
    tokens += budget::estimate_tokens(item.as_object().at("text").as_string());
  }
  if (const json::value* structured = result.if_contains("structuredContent")) {
    tokens += budget::estimate_json_tokens(*structured);
  }
  return tokens;
}

// Whether `result` is within `tokens` and the fixture's other limits (characters, bytes, lines),
// measured as a client measures them.
// What Codex measures, written out: structuredContent as JSON when there is one, else the text
// items as a `content` array of {"type":"text","text":...}.
inline std::size_t written_json_bytes(const json::object& result) {
  if (const json::value* structured = result.if_contains("structuredContent")) {
    if (!structured->is_null()) return ctxguard::to_json(*structured).size();
  }
  json::array texts;
  for (const json::value& item : result.at("content").as_array()) {
    if (item.as_object().at("type") == "text") {
      texts.push_back(json::object{{"type", "text"}, {"text", item.as_object().at("text")}});
    }
  }
  return texts.empty() ? 0 : ctxguard::to_json(texts).size();
}

inline void require_within(const Fixture& fixture, const json::object& result, std::size_t tokens) {
  budget::FitBudget limits = budget::FitBudget::of(fixture.budget);
  limits.tokens = tokens;
  const budget::AnswerSize size = result_size(result, tokens_of(result));
  const std::size_t json_bytes = written_json_bytes(result);
  INFO("tokens " << size.tokens << "/" << limits.tokens << ", chars " << size.chars << "/"
                 << limits.chars << ", bytes " << size.bytes << "/" << limits.bytes << ", lines "
                 << size.lines << "/" << limits.lines << ", JSON bytes " << json_bytes << "/"
                 << limits.json_bytes);
  REQUIRE(size.json_bytes == json_bytes);  // the measure is what is written
  REQUIRE(budget::fits(size, limits));
}

inline bool is_error(const json::object& result) {
  const json::value* error = result.if_contains("isError");
  return error != nullptr && error->as_bool();
}

// Follows the text cursors of a cut text item at `index` and returns the whole text.
inline std::string rebuild_text(Fixture& fixture, const json::object& first, std::size_t index) {
  std::string text = text_at(first, index);
  json::value meta = parse(text_at(first, index + 1)).at("_ctxguard");
  while (const json::value* next = meta.as_object().if_contains("nextCursor")) {
    const json::object piece = fixture.fetch_page({{"cursor", *next}});
    REQUIRE_FALSE(is_error(piece));
    require_within(fixture, piece, fixture.budget.token_budget);
    text += text_at(piece, 0);
    meta = parse(text_at(piece, 1)).at("_ctxguard");
  }
  // The pieces cover the text: as many bytes as it has.
  if (const json::value* total = meta.as_object().if_contains("totalBytes")) {
    INFO("last trailer " << ctxguard::to_json(meta));
    REQUIRE(text.size() == total->to_number<std::size_t>());
  }
  return text;
}

// The array item an answer serves as text pieces (one item over the budget): a string as its
// characters, anything else as its JSON text.
inline json::value item_of_pieces(Fixture& fixture, const json::object& answer) {
  const json::value meta = parse(text_at(answer, 1)).at("_ctxguard");
  const std::string text = rebuild_text(fixture, answer, 0);
  if (meta.at("valueType") == "string") return json::string(text);
  return parse(text);
}

// Follows every cursor of a paginated first answer (FIFO: pages before the cuts inside them)
// and returns the server's JSON rebuilt. Checks each page against `page_budget`.
inline json::value rebuild_json(Fixture& fixture, const json::object& first,
                                std::size_t page_budget, std::size_t* pages = nullptr) {
  json::value value = parse(text_at(first, 0));
  std::deque<json::object> cuts;
  if (json::value* meta = value.as_object().if_contains("_ctxguard")) {
    json::object ctxguard = meta->as_object();
    value.as_object().erase("_ctxguard");
    if (ctxguard.contains("wrapped")) value = json::value(value.as_object().at("items"));
    cuts.push_back(ctxguard);
  }
  while (!cuts.empty()) {
    json::object cut = std::move(cuts.front());
    cuts.pop_front();
    if (const json::value* others = cut.if_contains("otherCuts")) {
      for (const json::value& other : others->as_array()) cuts.push_back(other.as_object());
    }
    const json::value* next = cut.if_contains("nextCursor");
    if (next == nullptr) continue;
    const json::object page_result = fixture.fetch_page({{"cursor", *next}});
    REQUIRE_FALSE(is_error(page_result));
    require_within(fixture, page_result, page_budget);
    if (pages != nullptr) ++*pages;
    std::error_code ec;
    if (content_of(page_result).size() == 2) {
      // One item too large for a page comes as text pieces; the items after it go on below.
      const json::value item = item_of_pieces(fixture, page_result);
      json::value* target = value.find_pointer(std::string(cut.at("path").as_string()), ec);
      REQUIRE(target != nullptr);
      target->as_array().push_back(item);
      const json::object meta = parse(text_at(page_result, 1)).at("_ctxguard").as_object();
      if (const json::value* after = meta.if_contains("nextItemsCursor")) {
        cuts.push_back(json::object{
            {"path", cut.at("path")}, {"offset", 0}, {"pageSize", 0}, {"nextCursor", *after}});
      }
      continue;
    }
    json::value page = parse(text_at(page_result, 0));
    json::value* target = value.find_pointer(std::string(cut.at("path").as_string()), ec);
    REQUIRE(target != nullptr);
    for (const json::value& item : page.at("items").as_array()) target->as_array().push_back(item);
    cuts.push_back(page.at("_ctxguard").as_object());
  }
  return value;
}

// What every first answer of a property test must be, whatever the stages did: a result left
// alone was within the budget; a rewritten one is within the hard cap; one cut as text rebuilds
// `value` from its pieces (counted in `cut_as_text`). Returns the answer when it is JSON to
// check further, nullptr otherwise.
inline const json::object* check_first_answer(Fixture& fixture, const json::object& result,
                                              const std::optional<RewrittenResult>& rewritten,
                                              const json::value& value, int& cut_as_text) {
  if (!rewritten) {
    require_within(fixture, result, fixture.budget.token_budget);
    return nullptr;
  }
  const json::object& answer = rewritten->result;
  require_within(fixture, answer, fixture.budget.hard_cap);
  if (content_of(answer).size() > 1) {  // cut as text: the pieces rebuild the JSON text
    ++cut_as_text;
    INFO("trailer " << text_at(answer, 1));
    REQUIRE(parse(rebuild_text(fixture, answer, 0)) == value);
    return nullptr;
  }
  return &answer;
}

}  // namespace ctxguard::pipeline::testing
