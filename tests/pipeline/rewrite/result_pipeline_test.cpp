#include "../pipeline_fixture.hpp"
#include "../value_resolver.hpp"

using namespace ctxguard::pipeline::testing;
namespace json = boost::json;

namespace {

json::array numbered_items(std::size_t count, std::size_t padding = 40) {
  json::array items;
  for (std::size_t i = 0; i < count; ++i) {
    items.push_back(json::object{
        {"id", i}, {"name", "item " + std::to_string(i)}, {"note", std::string(padding, 'x')}});
  }
  return items;
}

std::string pretty(const json::value& value, int indent = 0) {
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  const std::string close(static_cast<std::size_t>(indent), ' ');
  if (const auto* array = value.if_array()) {
    if (array->empty()) return "[]";
    std::string out = "[\n";
    for (std::size_t i = 0; i < array->size(); ++i) {
      out += pad + pretty((*array)[i], indent + 2) + (i + 1 < array->size() ? ",\n" : "\n");
    }
    return out + close + "]";
  }
  if (const auto* object = value.if_object()) {
    if (object->empty()) return "{}";
    std::string out = "{\n";
    std::size_t i = 0;
    for (const auto& member : *object) {
      std::string key;
      ctxguard::write_json_string(key, member.key());
      out += pad + key + ": " + pretty(member.value(), indent + 2) +
             (++i < object->size() ? ",\n" : "\n");
    }
    return out + close + "}";
  }
  return ctxguard::to_json(value);
}

}  // namespace

TEST_CASE("pipeline: a result within the budget is left alone") {
  Fixture fixture;
  REQUIRE_FALSE(fixture.process(text_result(ctxguard::to_json(numbered_items(5)))).has_value());
}

TEST_CASE("pipeline: something that is not a tool result is left alone") {
  Fixture fixture;
  json::object odd{{"text", std::string(100000, 'a')}};
  REQUIRE_FALSE(fixture.process(odd).has_value());
}

TEST_CASE("pipeline: pretty JSON that fits once minified is only compacted, JSON-equal") {
  const json::value value{{"items", numbered_items(25, 4)}, {"pi", 3.14159}};
  const std::string text = pretty(value);
  // A budget between the minified and the pretty size.
  const std::size_t minified = ctxguard::budget::estimate_json_tokens(value);
  const std::size_t indented = ctxguard::budget::estimate_tokens(text);
  REQUIRE(indented > minified + 20);
  Fixture fixture(small_budget((minified + indented) / 2));
  auto rewritten = fixture.process(text_result(text));
  REQUIRE(rewritten.has_value());
  const json::value out = parse(text_at(rewritten->result, 0));
  REQUIRE(out == value);
  REQUIRE_FALSE(out.as_object().contains("_ctxguard"));
  REQUIRE(rewritten->record.stages == std::vector<std::string_view>{"compact"});
}

TEST_CASE("pipeline: a long array is cut to one page with _ctxguard and a working cursor") {
  Fixture fixture;
  const json::value value{{"total", 500}, {"bookings", numbered_items(500)}};
  auto rewritten = fixture.process(text_result(ctxguard::to_json(value)));
  REQUIRE(rewritten.has_value());
  const json::value out = parse(text_at(rewritten->result, 0));
  const json::object& meta = out.at("_ctxguard").as_object();
  CHECK(meta.at("path").as_string() == "/bookings");
  CHECK(meta.at("totalCount").as_int64() == 500);
  CHECK(meta.at("hasMore").as_bool());
  CHECK(meta.at("offset").as_int64() == 0);
  const auto shown = static_cast<std::size_t>(meta.at("pageSize").as_int64());
  CHECK(shown <= 50);
  CHECK(out.at("bookings").as_array().size() == shown);
  CHECK(out.at("total").as_int64() == 500);  // the rest of the structure stays
  CHECK(meta.at("hint").as_string().find("ctxguard_fetch") != json::string::npos);
  // Records: the hint says how to count and sum them all, once.
  CHECK(meta.at("hint").as_string().find("To count or sum all 500 items, pass the same cursor "
                                         "with \"aggregate\"") != json::string::npos);
  const json::object page = fixture.fetch_page({{"cursor", meta.at("nextCursor")}});
  CHECK(parse(text_at(page, 0)).at("_ctxguard").at("hint").as_string().find("aggregate") ==
        json::string::npos);
  CHECK(meta.at("estimatedTokens").as_int64() <= 1000);
  CHECK(meta.at("budgetRemaining").as_int64() == 1000 - meta.at("estimatedTokens").as_int64());
  CHECK(tokens_of(rewritten->result) <= 1000);
  // The server's order is kept.
  for (std::size_t i = 0; i < shown; ++i) {
    CHECK(out.at("bookings").as_array()[i].at("id").as_int64() == static_cast<std::int64_t>(i));
  }
  REQUIRE(rebuild_json(fixture, rewritten->result, 1000) == value);
}

TEST_CASE("pipeline: arrays of 10 items or fewer are never cut by pagination") {
  ctxguard::config::BudgetSettings settings = small_budget(300);
  settings.summarization = false;  // pagination alone: the breadth level would collapse them
  Fixture fixture(settings);
  json::array groups;
  for (int g = 0; g < 10; ++g) groups.push_back(numbered_items(10, 30));
  auto rewritten = fixture.process(text_result(ctxguard::to_json(groups)));
  REQUIRE(rewritten.has_value());
  // Nothing could be paginated, and the result is over the hard cap: it is cut as text.
  REQUIRE(rewritten->record.stages.back() == "hard-cap");
  REQUIRE(parse(rebuild_text(fixture, rewritten->result, 0)) == json::value(groups));
}

TEST_CASE("pipeline: a cut array of scalars gets no aggregate sentence") {
  Fixture fixture(small_budget(300));
  json::array words;
  for (int i = 0; i < 2000; ++i) words.emplace_back("word" + std::to_string(i));
  auto rewritten = fixture.process(text_result(ctxguard::to_json(json::object{{"words", words}})));
  REQUIRE(rewritten.has_value());
  const json::value out = parse(text_at(rewritten->result, 0));
  CHECK(out.at("_ctxguard").at("hasMore").as_bool());
  CHECK(out.at("_ctxguard").at("hint").as_string().find("aggregate") == json::string::npos);
}

TEST_CASE("pipeline: a top-level array comes back as items with wrapped set") {
  Fixture fixture;
  const json::value value = numbered_items(300);
  auto rewritten = fixture.process(text_result(ctxguard::to_json(value)));
  REQUIRE(rewritten.has_value());
  const json::value out = parse(text_at(rewritten->result, 0));
  REQUIRE(out.at("_ctxguard").at("wrapped").as_bool());
  REQUIRE(out.at("_ctxguard").at("path").as_string() == "");
  REQUIRE(out.at("items").is_array());
  REQUIRE(rebuild_json(fixture, rewritten->result, 1000) == value);
}

TEST_CASE("pipeline: the largest of several long arrays is cut first, others listed") {
  Fixture fixture(small_budget(1500));
  const json::value value{{"small", numbered_items(60, 5)}, {"large", numbered_items(400, 60)}};
  auto rewritten = fixture.process(text_result(ctxguard::to_json(value)));
  REQUIRE(rewritten.has_value());
  const json::value out = parse(text_at(rewritten->result, 0));
  REQUIRE(out.at("_ctxguard").at("path").as_string() == "/large");
  REQUIRE(rebuild_json(fixture, rewritten->result, 1500) == value);
}

namespace {

// 30 folders of 12 or 120 items each.
json::array two_level_tree() {
  json::array tree;
  for (int d = 0; d < 30; ++d) {
    tree.push_back(json::object{{"name", "dir" + std::to_string(d)},
                                {"children", numbered_items(d % 3 == 0 ? 120 : 12, 8)}});
  }
  return tree;
}

}  // namespace

TEST_CASE("pipeline: nested long arrays get cursors of their own and rebuild exactly") {
  ctxguard::config::BudgetSettings settings = small_budget(1200);
  settings.summarization = false;  // pagination alone
  Fixture fixture(settings);
  const json::array tree = two_level_tree();
  auto rewritten = fixture.process(text_result(ctxguard::to_json(tree)));
  REQUIRE(rewritten.has_value());
  REQUIRE(tokens_of(rewritten->result) <= 1200);
  std::size_t pages = 0;
  REQUIRE(rebuild_json(fixture, rewritten->result, 1200, &pages) == json::value(tree));
  REQUIRE(pages > 3);
}

TEST_CASE("pipeline: a tree over the budget shows every folder before any folder's items") {
  Fixture fixture(small_budget(1200));
  const json::array tree = two_level_tree();
  auto rewritten = fixture.process(text_result(ctxguard::to_json(tree)));
  REQUIRE(rewritten.has_value());
  REQUIRE(tokens_of(rewritten->result) <= 1200);
  const json::value out = parse(text_at(rewritten->result, 0));
  const json::array& shown = out.at("items").as_array();
  REQUIRE(shown.size() == tree.size());
  // Every folder by name; the items of those that fit after that are given back whole.
  std::int64_t collapsed = 0;
  for (std::size_t d = 0; d < shown.size(); ++d) {
    const json::object& folder = shown[d].as_object();
    REQUIRE(folder.at("name") == tree[d].at("name"));
    const std::size_t items = tree[d].at("children").as_array().size();
    if (folder.at("children").is_string()) {
      ++collapsed;
      REQUIRE(folder.at("children").as_string() == "[array of " + std::to_string(items) +
                                                       " items: /" + std::to_string(d) +
                                                       "/children]");
    } else {
      REQUIRE(folder.at("children") == tree[d].at("children"));
    }
  }
  REQUIRE(out.at("_ctxguard").at("valuesCollapsed").as_int64() == collapsed);
  REQUIRE(collapsed < 30);
  REQUIRE(tokens_of(rewritten->result) >= 1200 * 85 / 100);
  ValueResolver resolver(fixture, 1200);
  REQUIRE(resolver.rebuild(rewritten->result) == json::value(tree));
}

TEST_CASE("pipeline: structuredContent that mirrors the text is rewritten the same way") {
  Fixture fixture;
  const json::value value{{"entities", numbered_items(200)}, {"relations", json::array{}}};
  json::object result = text_result(pretty(value));
  result["structuredContent"] = value;
  auto rewritten = fixture.process(result);
  REQUIRE(rewritten.has_value());
  const json::value text = parse(text_at(rewritten->result, 0));
  REQUIRE(rewritten->result.at("structuredContent") == text);
  REQUIRE(tokens_of(rewritten->result) <= 1000);  // both copies count
  REQUIRE(rebuild_json(fixture, rewritten->result, 1000) == value);
}

TEST_CASE("pipeline: a wrapper of JSON text holds the rewritten JSON as a value") {
  // server-filesystem answers {"content": <the text>}: Claude Code and Codex show the model that,
  // so a page goes in readable, not escaped in a string, with the answer's _ctxguard first.
  Fixture fixture;
  const json::value value = numbered_items(200);
  const std::string text = pretty(value);
  json::object result = text_result(text);
  result["structuredContent"] = json::object{{"content", text}, {"truncated", false}};
  auto rewritten = fixture.process(result);
  REQUIRE(rewritten.has_value());
  const json::value shown = parse(text_at(rewritten->result, 0));
  const json::object& structured = rewritten->result.at("structuredContent").as_object();
  REQUIRE(structured.size() == 3);
  CHECK(structured.begin()->key() == "_ctxguard");
  CHECK(structured.at("_ctxguard") == shown.at("_ctxguard"));
  CHECK(structured.at("content") == shown.at("items"));  // a top-level array: its page
  CHECK(structured.at("truncated") == json::value(false));
  CHECK(tokens_of(rewritten->result) <= 1000);

  SECTION("an object keeps its members, the _ctxguard lifted to the wrapper") {
    const json::value document{{"rows", numbered_items(200)}, {"total", 200}};
    const std::string object_text = pretty(document);
    json::object object_result = text_result(object_text);
    object_result["structuredContent"] = json::object{{"content", object_text}};
    auto paged = fixture.process(object_result);
    REQUIRE(paged.has_value());
    json::object page = parse(text_at(paged->result, 0)).as_object();
    const json::object& wrapper = paged->result.at("structuredContent").as_object();
    CHECK(wrapper.begin()->key() == "_ctxguard");
    CHECK(wrapper.at("_ctxguard") == page.at("_ctxguard"));
    page.erase("_ctxguard");
    CHECK(wrapper.at("content") == json::value(page));
  }
}

TEST_CASE("pipeline: a wrapper of JSON text that is only compacted holds its value") {
  const json::value value{{"items", numbered_items(25, 4)}, {"pi", 3.14159}};
  const std::string text = pretty(value);
  // Both copies over the budget pretty, within it minified.
  const std::size_t minified = ctxguard::budget::estimate_json_tokens(value);
  const std::size_t indented = ctxguard::budget::estimate_tokens(text);
  REQUIRE(indented > minified + 20);
  Fixture fixture(small_budget(minified + indented));
  json::object result = text_result(text);
  result["structuredContent"] = json::object{{"content", text}};
  auto rewritten = fixture.process(result);
  REQUIRE(rewritten.has_value());
  REQUIRE(rewritten->record.stages == std::vector<std::string_view>{"compact"});
  CHECK(parse(text_at(rewritten->result, 0)) == value);
  CHECK(rewritten->result.at("structuredContent") == json::value{{"content", value}});
}

TEST_CASE("pipeline: a wrapper of plain text holds the new text and the _ctxguard") {
  Fixture fixture;
  std::string log;
  for (int i = 0; i < 3000; ++i) log += "line " + std::to_string(i) + " of the log\n";
  json::object result = text_result(log);
  result["structuredContent"] = json::object{{"content", log}};
  auto rewritten = fixture.process(result);
  REQUIRE(rewritten.has_value());
  const json::object& structured = rewritten->result.at("structuredContent").as_object();
  CHECK(structured.begin()->key() == "_ctxguard");
  CHECK(structured.at("content").as_string() == text_at(rewritten->result, 0));
  CHECK(structured.at("_ctxguard") == parse(text_at(rewritten->result, 1)).at("_ctxguard"));
}

TEST_CASE("pipeline: other content and result members pass through") {
  Fixture fixture;
  json::object result = text_result(ctxguard::to_json(numbered_items(300)));
  result["content"].as_array().push_back(
      json::object{{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}});
  result["_meta"] = json::object{{"k", 1}};
  auto rewritten = fixture.process(result);
  REQUIRE(rewritten.has_value());
  REQUIRE(content_of(rewritten->result).at(1).at("type").as_string() == "image");
  REQUIRE(rewritten->result.at("_meta").at("k").as_int64() == 1);
}

TEST_CASE(
    "pipeline: plain text passes under the chunk size and is chunked with a cursor above it") {
  Fixture fixture;  // budget 1000: chunks of at most 610 tokens (the trailer and the way on)
  std::string lines;
  for (int i = 0; lines.size() < 1150; ++i) lines += "[FILE] file-" + std::to_string(i) + ".txt\n";
  REQUIRE(ctxguard::budget::estimate_tokens(lines) <=
          ctxguard::pipeline::chunk_tokens(fixture.budget));
  REQUIRE_FALSE(fixture.process(text_result(lines)).has_value());

  while (ctxguard::budget::estimate_tokens(lines) < 20000) lines += lines;
  auto rewritten = fixture.process(text_result(lines));
  REQUIRE(rewritten.has_value());
  REQUIRE(tokens_of(rewritten->result) <= 1000);
  const std::string first = text_at(rewritten->result, 0);
  REQUIRE(first.back() == '\n');  // cut at a line break
  REQUIRE(rebuild_text(fixture, rewritten->result, 0) == lines);
}

TEST_CASE("pipeline: isError results pass unless over the hard cap") {
  Fixture fixture;
  json::object result = text_result(ctxguard::to_json(numbered_items(60)));
  result["isError"] = true;
  REQUIRE(ctxguard::budget::estimate_tokens(text_at(result, 0)) > 1000);
  REQUIRE_FALSE(fixture.process(result).has_value());
  result = text_result(ctxguard::to_json(numbered_items(2000)));
  result["isError"] = true;
  auto rewritten = fixture.process(result);
  REQUIRE(rewritten.has_value());
  REQUIRE(is_error(rewritten->result));
  REQUIRE(tokens_of(rewritten->result) <= 3000);
}

TEST_CASE("pipeline: with rewriting off only the hard cap applies, as a text cut") {
  Fixture fixture;
  const std::string text = ctxguard::to_json(numbered_items(80));
  REQUIRE_FALSE(fixture.process(text_result(text), "tool", false).has_value());
  const std::string big = ctxguard::to_json(numbered_items(2000));
  auto rewritten = fixture.process(text_result(big), "tool", false);
  REQUIRE(rewritten.has_value());
  REQUIRE(tokens_of(rewritten->result) <= 3000);
  REQUIRE(rebuild_text(fixture, rewritten->result, 0) == big);
}

TEST_CASE("pipeline: numbers survive a rewrite JSON-equal") {
  Fixture fixture;
  json::array items;
  for (int i = 0; i < 400; ++i) {
    items.push_back(json::object{{"v", 1238.8249400479617 * i},
                                 {"big", 18446744073709551615ull},
                                 {"neg", -9223372036854775807ll},
                                 {"tiny", 5e-324}});
  }
  auto rewritten = fixture.process(text_result(ctxguard::to_json(items)));
  REQUIRE(rewritten.has_value());
  REQUIRE(rebuild_json(fixture, rewritten->result, 1000) == json::value(items));
}

TEST_CASE("pipeline: the call record says what happened") {
  Fixture fixture;
  auto rewritten = fixture.process(text_result(ctxguard::to_json(numbered_items(500))), "list");
  REQUIRE(rewritten.has_value());
  const auto& record = rewritten->record;
  CHECK(record.tool == "list");
  CHECK(record.original_tokens > record.final_tokens);
  CHECK(record.items_total == 500);
  CHECK(record.items_shown > 0);
  CHECK(record.cache_entry != 0);
  CHECK(std::find(record.stages.begin(), record.stages.end(), "paginate") != record.stages.end());
}

TEST_CASE("pipeline: the cache is charged what the parsed result takes, not nothing or double") {
  Fixture fixture;
  const std::string text = ctxguard::to_json(numbered_items(20000, 20));
  auto rewritten = fixture.process(text_result(text));
  REQUIRE(rewritten.has_value());
  const auto& stats = fixture.cache.stats();
  REQUIRE(stats.entries == 1);
  // A parsed document of small objects takes several times its text (7x here); a charge near
  // zero (the arena lost) or far above (parser scratch kept in the arena: 13x) is a bug.
  CHECK(stats.bytes > text.size() * 2);
  CHECK(stats.bytes < text.size() * 10);
}

TEST_CASE("pipeline: a result forwarded as it came is measured too") {
  Fixture fixture;
  const auto context = [&fixture] {
    return ctxguard::pipeline::CallContext{
        .tool = "list", .rewrite = true, .now = fixture.now, .wall_now = fixture.wall_now};
  };
  json::object small = text_result("three short words");
  const auto forwarded = fixture.pipeline.process(small, fixture.budget, context());
  CHECK_FALSE(forwarded.rewritten.has_value());
  CHECK(forwarded.original_tokens == ctxguard::pipeline::result_tokens(small)->total);
  CHECK(forwarded.original_tokens > 0);

  json::object large = text_result(ctxguard::to_json(numbered_items(500)));
  const std::size_t large_tokens = ctxguard::pipeline::result_tokens(large)->total;
  const auto rewritten = fixture.pipeline.process(large, fixture.budget, context());
  REQUIRE(rewritten.rewritten.has_value());
  CHECK(rewritten.original_tokens == large_tokens);
  CHECK(rewritten.rewritten->record.original_tokens == large_tokens);

  json::object not_a_call_result{{"contents", json::array{}}};
  const auto other = fixture.pipeline.process(not_a_call_result, fixture.budget, context());
  CHECK_FALSE(other.rewritten.has_value());
  CHECK(other.original_tokens == 0);
}

TEST_CASE("pipeline: observe mode computes the answer but stores nothing") {
  Fixture fixture;
  json::object result = text_result(ctxguard::to_json(numbered_items(500)));
  auto observed = fixture.pipeline
                      .process(result, fixture.budget,
                               ctxguard::pipeline::CallContext{.tool = "list",
                                                               .rewrite = true,
                                                               .now = fixture.now,
                                                               .wall_now = fixture.wall_now,
                                                               .dry_run = true})
                      .rewritten;
  REQUIRE(observed.has_value());
  CHECK(observed->record.cache_entry != 0);  // what enforce mode would have cached
  CHECK(fixture.cache.stats().entries == 0);
  CHECK(fixture.cache.stats().bytes == 0);
  // Its cursors lead nowhere: the entry was never stored.
  const json::value page = parse(text_at(observed->result, 0));
  const json::value cursor = page.at("_ctxguard").at("nextCursor");
  CHECK(is_error(fixture.fetch_page({{"cursor", cursor}})));
}

TEST_CASE("pipeline: only the entry whose cursors go out is stored") {
  // Pages cannot bring these records (one long string each, summarization off) within the hard
  // cap: the paginated entry is abandoned and the result is cut as text.
  auto budget = small_budget(1000);
  budget.summarization = false;
  Fixture fixture(budget);
  json::array items;
  for (int i = 0; i < 12; ++i) {
    std::string note;
    for (int word = 0; word < 3000; ++word) note += "w" + std::to_string(i * 1000 + word) + " ";
    items.push_back(json::object{{"id", i}, {"note", note}});
  }
  auto rewritten = fixture.process(text_result(ctxguard::to_json(items)));
  REQUIRE(rewritten.has_value());
  REQUIRE(std::find(rewritten->record.stages.begin(), rewritten->record.stages.end(),
                    std::string_view("hard-cap")) != rewritten->record.stages.end());
  CHECK(fixture.cache.stats().entries == 1);
  CHECK(rebuild_text(fixture, rewritten->result, 0) == ctxguard::to_json(items));
}

TEST_CASE("pipeline: JSON too large to parse within the cache size is chunked as text") {
  // An array of small numbers takes about 8 times its text once parsed (16 bytes a value), more
  // with the parser's stack: over a 4 MiB cache it is never parsed whole, but served as text.
  std::string numbers = "[";
  for (int i = 0; i < 400000; ++i) numbers += (i == 0 ? "" : ",") + std::to_string(i % 10);
  numbers += "]";
  ctxguard::config::ProcessSettings process;
  process.cache_bytes = 4 << 20;
  Fixture fixture(small_budget(), {}, process);
  auto rewritten = fixture.process(text_result(numbers));
  REQUIRE(rewritten.has_value());
  CHECK(rewritten->record.stages == std::vector<std::string_view>{"chunk"});
  CHECK(numbers.starts_with(text_at(rewritten->result, 0)));

  // With room for the parsed form, the same array is paginated.
  process.cache_bytes = 256 << 20;
  Fixture roomy(small_budget(), {}, process);
  auto paginated = roomy.process(text_result(numbers));
  REQUIRE(paginated.has_value());
  CHECK(std::find(paginated->record.stages.begin(), paginated->record.stages.end(),
                  std::string_view("paginate")) != paginated->record.stages.end());
}

TEST_CASE("pipeline: many text items over the hard cap are cut as one text within it") {
  // Found by tests/fuzz/pipeline_fuzz: each item cut on its own carried its own _ctxguard item,
  // so 200 short items (4,600 tokens, cap 3000) came out at 26,000 tokens.
  Fixture fixture(small_budget(1000));
  json::array content;
  std::string all;
  for (int i = 0; i < 200; ++i) {
    std::string line = "hit " + std::to_string(i) + ":";
    for (int word = 0; word < 20; ++word) line += " word";
    content.push_back(json::object{{"type", "text"}, {"text", line}});
    all += (i == 0 ? "" : "\n") + line;
  }
  content.push_back(json::object{{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}});
  const json::object result{{"content", content}};
  auto rewritten = fixture.process(result);
  REQUIRE(rewritten.has_value());
  const json::object& answer = rewritten->result;
  // After the way on, the joined text's first piece, its trailer, and the image.
  REQUIRE(content_of(answer).size() == 3);
  CHECK(content_of(answer).at(2).at("type").as_string() == "image");
  json::object texts = answer;
  json::array& items = texts["content"].as_array();
  items.pop_back();
  CHECK(tokens_of(texts) <= fixture.budget.hard_cap);
  CHECK(rebuild_text(fixture, texts, 0) == all);
}

TEST_CASE("pipeline: a result within the hard cap never comes out above it") {
  // Found by tests/fuzz/pipeline_fuzz: text items just over the chunk size of a small budget
  // were chunked, each chunk with its _ctxguard item, past the hard cap; the cut as text that
  // followed gave every item a _ctxguard item again (1,245 tokens for a cap of 300). The server's
  // answer was within the cap: it goes out as it came.
  ctxguard::config::BudgetSettings budget = small_budget(140);
  budget.hard_cap = 300;
  Fixture fixture(budget);
  std::string item;  // just over the chunk size
  for (int word = 0;
       ctxguard::budget::estimate_tokens(item) <= ctxguard::pipeline::chunk_tokens(fixture.budget);
       ++word) {
    item += "word" + std::to_string(word) + " ";
  }
  json::array content;
  while ((content.size() + 1) * ctxguard::budget::estimate_tokens(item) <= 300) {
    content.push_back(json::object{{"type", "text"}, {"text", item}});
  }
  REQUIRE(content.size() >= 3);
  const auto rewritten = fixture.process(json::object{{"content", content}});
  if (rewritten) CHECK(tokens_of(rewritten->result) <= 300);
  CHECK_FALSE(rewritten.has_value());
}

TEST_CASE("pipeline: rows that fit keep their small nested arrays (given back after breadth)") {
  // 2,000 bookings, each with notes.history: an array of one small object. The breadth level
  // collapses arrays inside arrays; the rows shown get theirs back, first rows first, as far as
  // they fit.
  json::array rows;
  for (int i = 0; i < 2000; ++i) {
    rows.push_back(json::object{
        {"id", i},
        {"guest", "guest " + std::to_string(i)},
        {"status", i % 3 == 0 ? "cancelled" : "confirmed"},
        {"request",
         "Late arrival, around 23:00; quiet room away from the lift, two pillows, "
         "a cot for the baby and breakfast from 6:30 if possible. " +
             std::to_string(i)},
        {"notes",
         json::object{{"history", json::array{json::object{{"at", "2026-03-04T08:02:11Z"},
                                                           {"by", "desk"},
                                                           {"what", "booked by phone"}}}}}}});
  }
  Fixture fixture(small_budget(4000));
  auto rewritten = fixture.process(text_result(ctxguard::to_json(rows)));
  REQUIRE(rewritten.has_value());
  const json::value out = parse(text_at(rewritten->result, 0));
  const json::array& shown = out.at("items").as_array();
  REQUIRE(shown.size() >= 10);
  std::size_t given_back = 0;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    INFO("row " << i << ": " << ctxguard::to_json(shown[i]));
    if (shown[i] == rows[i]) {
      REQUIRE(given_back == i);  // the first rows first
      ++given_back;
      continue;
    }
    json::value collapsed = rows[i];
    collapsed.at("notes").at("history") =
        "[array of 1 item: /" + std::to_string(i) + "/notes/history]";
    REQUIRE(shown[i] == collapsed);
  }
  CHECK(given_back >= 2);
  require_within(fixture, rewritten->result, 4000);
  CHECK(tokens_of(rewritten->result) >= 4000 * 95 / 100);
}
