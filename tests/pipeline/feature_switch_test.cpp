// The per-tool feature switches and the estimator margin (issue 5: FR-027, FR-035, FR-013),
// through the same ResultPipeline and FetchTool the proxy uses.
#include <catch2/catch.hpp>

#include <string>

#include "config/settings.hpp"
#include "pipeline_fixture.hpp"

using namespace ctxguard::pipeline;
using namespace ctxguard::pipeline::testing;

namespace {

// Records with one long description each: over the budget, both by count and by size.
// Words, so the estimate is a prose-like ~4-5 characters per token.
std::string prose(std::size_t chars, std::size_t seed) {
  static const char* const kWords[] = {"guest",   "arrives", "late",    "breakfast", "included",
                                       "parking", "ocean",   "view",    "room",      "quiet",
                                       "floor",   "allergy", "request", "transfer",  "airport"};
  std::string text;
  for (std::size_t i = seed; text.size() < chars; i = i * 7 + 3) {
    text += kWords[i % std::size(kWords)];
    text += ' ';
  }
  text.resize(chars);
  return text;
}

json::object bookings(std::size_t count, std::size_t description_chars = 300) {
  json::array items;
  for (std::size_t i = 0; i < count; ++i) {
    items.push_back(json::object{{"id", i},
                                 {"status", i % 3 == 0 ? "cancelled" : "confirmed"},
                                 {"description", prose(description_chars, i)}});
  }
  return text_result(ctxguard::to_json(json::value(json::object{{"bookings", std::move(items)}})));
}

std::string plain_log(std::size_t lines) {
  std::string text;
  for (std::size_t i = 0; i < lines; ++i) {
    text += "2026-11-22T10:00:" + std::to_string(i % 60) + "Z INFO request " + std::to_string(i) +
            " served in 12 ms\n";
  }
  return text;
}

const json::object& meta_of(const json::value& value) {
  return value.as_object().at("_ctxguard").as_object();
}

}  // namespace

TEST_CASE("switches: pagination off keeps every array whole; summarization still shortens") {
  Fixture fixture(small_budget(2000));
  fixture.budget.pagination = false;
  auto rewritten = fixture.process(bookings(60));
  REQUIRE(rewritten.has_value());
  const json::value answer = parse(text_at(rewritten->result, 0));
  CHECK(answer.at("bookings").as_array().size() == 60);
  INFO(ctxguard::to_json(meta_of(answer)));
  CHECK((meta_of(answer).contains("stringsCut") || meta_of(answer).contains("valuesCollapsed")));
  CHECK_FALSE(meta_of(answer).contains("totalCount"));
  CHECK(tokens_of(rewritten->result) <= 2000);

  // The same result with pagination on: a page.
  Fixture paged(small_budget(2000));
  auto page = paged.process(bookings(60));
  REQUIRE(page.has_value());
  CHECK(parse(text_at(page->result, 0)).at("bookings").as_array().size() < 60);
}

TEST_CASE("switches: summarization off leaves values whole, in first answers and in pages") {
  Fixture fixture(small_budget(2000));
  fixture.budget.summarization = false;
  auto rewritten = fixture.process(bookings(60));
  REQUIRE(rewritten.has_value());
  const json::value answer = parse(text_at(rewritten->result, 0));
  const json::object& meta = meta_of(answer);
  CHECK_FALSE(meta.contains("stringsCut"));
  CHECK_FALSE(meta.contains("projections"));
  for (const json::value& item : answer.at("bookings").as_array()) {
    CHECK(item.at("description").as_string().size() == 300);  // never cut
  }
  CHECK(tokens_of(rewritten->result) <= 2000);
  // ctxguard_fetch pages hold whole records too, fewer of them.
  const json::object page = fixture.fetch_page({{"cursor", meta.at("nextCursor")}, {"limit", 50}});
  REQUIRE_FALSE(is_error(page));
  const json::value page_value = parse(text_at(page, 0));
  CHECK_FALSE(meta_of(page_value).contains("stringsCut"));
  for (const json::value& item : page_value.at("items").as_array()) {
    CHECK(item.at("description").as_string().size() == 300);
  }
  CHECK(tokens_of(page) <= 2000);
  // Everything is still reachable.
  CHECK(rebuild_json(fixture, rewritten->result, 2000) == parse(text_at(bookings(60), 0)));
}

TEST_CASE("switches: chunking off passes text under the hard cap untouched") {
  Fixture fixture(small_budget(1000));
  const std::string log = plain_log(60);  // ~1500 tokens: over the chunk size, under the cap
  fixture.budget.chunking = false;
  CHECK_FALSE(fixture.process(text_result(log)).has_value());
  // Over the hard cap it is still cut.
  auto capped = fixture.process(text_result(plain_log(400)));
  REQUIRE(capped.has_value());
  CHECK(tokens_of(capped->result) <= fixture.budget.hard_cap);
  CHECK(rebuild_text(fixture, capped->result, 0) == plain_log(400));

  fixture.budget.chunking = true;
  CHECK(fixture.process(text_result(log)).has_value());
}

TEST_CASE("switches: search off makes a query on the tool's results an error") {
  Fixture fixture(small_budget(2000));
  auto rewritten = fixture.process(bookings(60), "list_bookings");
  REQUIRE(rewritten.has_value());
  const json::value cursor = meta_of(parse(text_at(rewritten->result, 0))).at("nextCursor");
  const json::object found =
      fixture.fetch_page({{"cursor", cursor}, {"query", "status=cancelled"}});
  CHECK_FALSE(is_error(found));
  // Switched off after the result was cached: the settings in force when the fetch arrives count.
  fixture.budget.search = false;
  const json::object refused =
      fixture.fetch_page({{"cursor", cursor}, {"query", "status=cancelled"}});
  REQUIRE(is_error(refused));
  CHECK_THAT(text_at(refused, 0), Catch::Contains("Search is turned off for results of "
                                                  "list_bookings"));
  CHECK_FALSE(is_error(fixture.fetch_page({{"cursor", cursor}})));  // paging still works
}

TEST_CASE("switches: limit is bounded by the maxPageSize of the tool whose result it pages") {
  Fixture fixture(small_budget(500));
  auto rewritten = fixture.process(bookings(60, 20));
  REQUIRE(rewritten.has_value());
  const json::value cursor = meta_of(parse(text_at(rewritten->result, 0))).at("nextCursor");
  fixture.budget.max_page_size = 30;
  const json::object refused = fixture.fetch_page({{"cursor", cursor}, {"limit", 31}});
  REQUIRE(is_error(refused));
  CHECK(text_at(refused, 0) == "`limit` must be a whole number from 1 to 30.");
  CHECK_FALSE(is_error(fixture.fetch_page({{"cursor", cursor}, {"limit", 30}})));
}

TEST_CASE("estimator margin: answers are planned against the lowered budget") {
  ctxguard::config::BudgetSettings configured = small_budget(1000);
  configured.estimator_margin_percent = 25;
  Fixture fixture(ctxguard::config::planning_budget(configured));
  CHECK(fixture.budget.token_budget == 800);
  CHECK(fixture.budget.hard_cap == 2400);
  auto rewritten = fixture.process(bookings(60, 40));
  REQUIRE(rewritten.has_value());
  CHECK(tokens_of(rewritten->result) <= 800);
  CHECK(meta_of(parse(text_at(rewritten->result, 0))).at("tokenBudget") == 800);
}

TEST_CASE("switches: a cursor's own limit is held to a maxPageSize lowered since") {
  Fixture fixture(small_budget(4000));
  auto rewritten = fixture.process(bookings(300, 20));
  REQUIRE(rewritten.has_value());
  const json::value cursor = meta_of(parse(text_at(rewritten->result, 0))).at("nextCursor");
  const json::object wide = fixture.fetch_page({{"cursor", cursor}, {"limit", 100}});
  REQUIRE_FALSE(is_error(wide));
  const json::value next = meta_of(parse(text_at(wide, 0))).at("nextCursor");  // carries 100
  fixture.budget.max_page_size = 30;
  fixture.budget.page_size = 30;
  const json::object page = fixture.fetch_page({{"cursor", next}});
  REQUIRE_FALSE(is_error(page));
  CHECK(parse(text_at(page, 0)).at("items").as_array().size() == 30);
}
