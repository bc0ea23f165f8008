#include "../../cursor/altered_cursor.hpp"
#include "../pipeline_fixture.hpp"

using namespace ctxguard::pipeline;
using namespace ctxguard::pipeline::testing;
namespace json = boost::json;

namespace {

json::array rows(std::size_t count) {
  json::array items;
  for (std::size_t i = 0; i < count; ++i) {
    items.push_back(json::object{{"id", i},
                                 {"status", i % 3 == 0 ? "cancelled" : "confirmed"},
                                 {"guest", "guest " + std::to_string(i)},
                                 {"notes", std::string(60, 'n')}});
  }
  return items;
}

// The first answer's cursor for a 500-row result.
std::string first_cursor(Fixture& fixture) {
  auto rewritten =
      fixture.process(text_result(ctxguard::to_json(json::object{{"rows", rows(500)}})));
  REQUIRE(rewritten.has_value());
  return std::string(
      parse(text_at(rewritten->result, 0)).at("_ctxguard").at("nextCursor").as_string());
}

std::string error_text(const json::object& result) {
  REQUIRE(is_error(result));
  REQUIRE(content_of(result).size() == 1);
  return text_at(result, 0);
}

}  // namespace

TEST_CASE("fetch: a page continues where the first answer stopped, within the budget") {
  Fixture fixture;
  const std::string cursor = first_cursor(fixture);
  const json::object page_result = fixture.fetch_page({{"cursor", cursor}});
  REQUIRE_FALSE(is_error(page_result));
  REQUIRE(tokens_of(page_result) <= fixture.budget.token_budget);
  const json::value page = parse(text_at(page_result, 0));
  const auto& meta = page.at("_ctxguard").as_object();
  const auto offset = meta.at("offset").as_int64();
  REQUIRE(offset > 0);
  REQUIRE(page.at("items").as_array().front().at("id").as_int64() == offset);
  REQUIRE(meta.at("totalCount").as_int64() == 500);
  REQUIRE(meta.at("path").as_string() == "/rows");
}

TEST_CASE("fetch: limit sets the page size and fields project the items") {
  Fixture fixture;
  const std::string cursor = first_cursor(fixture);
  const json::value page = parse(
      text_at(fixture.fetch_page(
                  {{"cursor", cursor}, {"limit", 7}, {"fields", json::array{"id", "status"}}}),
              0));
  const auto& items = page.at("items").as_array();
  REQUIRE(items.size() == 7);
  for (const json::value& item : items) {
    REQUIRE(item.as_object().size() == 2);
    REQUIRE(item.as_object().contains("status"));
  }
  // The next cursor keeps limit and fields.
  const json::value next =
      parse(text_at(fixture.fetch_page({{"cursor", page.at("_ctxguard").at("nextCursor")}}), 0));
  REQUIRE(next.at("items").as_array().size() == 7);
  REQUIRE(next.at("items").as_array().front().as_object().size() == 2);
  REQUIRE(next.at("_ctxguard").at("fields").as_array().size() == 2);
}

TEST_CASE("fetch: a page too large for the budget returns fewer items") {
  Fixture fixture(small_budget(400));
  const std::string cursor = first_cursor(fixture);
  const json::object page_result = fixture.fetch_page({{"cursor", cursor}, {"limit", 200}});
  REQUIRE_FALSE(is_error(page_result));
  REQUIRE(tokens_of(page_result) <= 400);
  const json::value page = parse(text_at(page_result, 0));
  REQUIRE(page.at("items").as_array().size() < 200);
  REQUIRE(page.at("_ctxguard").at("hasMore").as_bool());
}

TEST_CASE("fetch: bad arguments are tool errors with one line") {
  Fixture fixture;
  const std::string cursor = first_cursor(fixture);
  CHECK(error_text(fixture.fetch_page({})).find("`cursor` is required") != std::string::npos);
  CHECK(error_text(fixture.fetch_page({{"cursor", 5}})).find("`cursor`") != std::string::npos);
  for (const json::value& limit :
       {json::value(0), json::value(201), json::value(-3), json::value("ten"), json::value(2.5)}) {
    CHECK(error_text(fixture.fetch_page({{"cursor", cursor}, {"limit", limit}})).find("limit") !=
          std::string::npos);
  }
  CHECK(error_text(fixture.fetch_page({{"cursor", cursor}, {"fields", "id"}})).find("fields") !=
        std::string::npos);
  CHECK(error_text(fixture.fetch_page({{"cursor", cursor}, {"fields", json::array{1}}}))
            .find("fields") != std::string::npos);
}

TEST_CASE("fetch: malformed, tampered, foreign, expired and evicted cursors say so") {
  Fixture fixture;
  const std::string cursor = first_cursor(fixture);
  CHECK(error_text(fixture.fetch_page({{"cursor", "not a cursor!"}})).find("not a valid cursor") !=
        std::string::npos);
  const std::string tampered = ctxguard::testing::altered_cursor(cursor, cursor.size() / 2);
  CHECK(error_text(fixture.fetch_page({{"cursor", tampered}})).find("altered") !=
        std::string::npos);

  Fixture other;  // same payload, another key
  ctxguard::cursor::CursorCodec foreign({std::string(32, 'z')}, std::chrono::seconds(600));
  auto payload = fixture.codec.decode(cursor, fixture.wall_now);
  REQUIRE(payload.has_value());
  CHECK(error_text(fixture.fetch_page({{"cursor", foreign.encode(*payload)}})).find("altered") !=
        std::string::npos);

  fixture.wall_now += fixture.process_settings.cursor_ttl + std::chrono::seconds(1);
  CHECK(error_text(fixture.fetch_page({{"cursor", cursor}})).find("expired") != std::string::npos);

  fixture.wall_now -= fixture.process_settings.cursor_ttl;
  fixture.now +=
      fixture.process_settings.cursor_ttl + std::chrono::seconds(1);  // the cache entry expired
  CHECK(error_text(fixture.fetch_page({{"cursor", cursor}})).find("no longer cached") !=
        std::string::npos);
}

TEST_CASE("fetch: the last page has no nextCursor and reading past it is empty") {
  Fixture fixture;
  std::string cursor = first_cursor(fixture);
  json::value page;
  for (int guard = 0; guard < 100; ++guard) {
    page = parse(text_at(fixture.fetch_page({{"cursor", cursor}, {"limit", 200}}), 0));
    const json::value* next = page.at("_ctxguard").as_object().if_contains("nextCursor");
    if (next == nullptr) break;
    cursor = std::string(next->as_string());
  }
  REQUIRE_FALSE(page.at("_ctxguard").at("hasMore").as_bool());
  REQUIRE(page.at("items").as_array().back().at("id").as_int64() == 499);
}

TEST_CASE("fetch: one item larger than the budget comes as text pieces, then the next items") {
  // The last resort, when summarizing is off (with it on, the long string would be cut and
  // reached by path: chunk_and_summary_test.cpp).
  ctxguard::config::BudgetSettings budget = small_budget();
  budget.summary.max_string_chars = 0;
  budget.summary.max_depth = 0;
  budget.summary.project = false;
  Fixture fixture(budget);
  json::array items = rows(300);
  items[60].as_object()["notes"] = std::string(40000, 'z') + " end";
  const json::value value{{"rows", items}};
  auto rewritten = fixture.process(text_result(ctxguard::to_json(value)));
  REQUIRE(rewritten.has_value());
  std::string cursor(
      parse(text_at(rewritten->result, 0)).at("_ctxguard").at("nextCursor").as_string());
  json::object big;
  for (int guard = 0; guard < 50; ++guard) {
    big = fixture.fetch_page({{"cursor", cursor}});
    REQUIRE(tokens_of(big) <= fixture.budget.token_budget);
    if (content_of(big).size() == 2) break;  // the text form
    cursor = std::string(parse(text_at(big, 0)).at("_ctxguard").at("nextCursor").as_string());
  }
  REQUIRE(content_of(big).size() == 2);
  // The item's pieces rebuild it; the items after it continue with nextItemsCursor.
  const std::string item = rebuild_text(fixture, big, 0);
  REQUIRE(parse(item) == items[60]);
  const json::value meta = parse(text_at(big, 1)).at("_ctxguard");
  const json::value after =
      parse(text_at(fixture.fetch_page({{"cursor", meta.at("nextItemsCursor")}}), 0));
  REQUIRE(after.at("items").as_array().front().at("id").as_int64() == 61);
}

TEST_CASE("fetch: one string item larger than the budget comes as its characters, to the end") {
  // Found by the random-limits property (limits_property_test.cpp): the first piece was the
  // string's JSON text, and its cursor went on in the string's characters (as a value by path
  // does), so the pieces did not join up. Now the item's pieces are its characters throughout.
  ctxguard::config::BudgetSettings budget = small_budget();
  budget.summary.max_string_chars = 0;
  budget.summary.max_depth = 0;
  Fixture fixture(budget);
  json::array notes;
  for (int i = 0; i < 80; ++i) notes.emplace_back("note " + std::to_string(i));
  const std::string big = "a \"quoted\"\ttab, a line\nbreak and " + std::string(30000, 'z');
  notes[60] = big;
  auto rewritten = fixture.process(text_result(ctxguard::to_json(json::value{{"notes", notes}})));
  REQUIRE(rewritten.has_value());
  std::string cursor(
      parse(text_at(rewritten->result, 0)).at("_ctxguard").at("nextCursor").as_string());
  json::object piece;
  for (int guard = 0; guard < 50; ++guard) {
    piece = fixture.fetch_page({{"cursor", cursor}});
    if (content_of(piece).size() == 2) break;  // the text form
    cursor = std::string(parse(text_at(piece, 0)).at("_ctxguard").at("nextCursor").as_string());
  }
  REQUIRE(content_of(piece).size() == 2);
  const json::value meta = parse(text_at(piece, 1)).at("_ctxguard");
  REQUIRE(meta.at("valueType") == "string");
  REQUIRE(meta.at("valuePath") == "/notes/60");
  REQUIRE(rebuild_text(fixture, piece, 0) == big);
}

TEST_CASE("fetch: numbers beyond any page or line are refused or clamped, never converted blind") {
  // Found by tests/fuzz/pipeline_fuzz (UBSan): a double beyond int64's range was converted to
  // int64 unchecked, which is undefined (x86 gives INT64_MIN: "1e300" read as a negative line).
  Fixture fixture;
  const std::string cursor = first_cursor(fixture);
  for (const double huge : {1e30, -1e30, 1e300}) {
    const std::string error = error_text(fixture.fetch_page({{"cursor", cursor}, {"limit", huge}}));
    CHECK(error.find("`limit`") != std::string::npos);
    CHECK(error.find("-9223372036854775808") == std::string::npos);
  }
  std::string log;
  for (int i = 1; i <= 300; ++i) log += "line " + std::to_string(i) + " of the log\n";
  auto rewritten = fixture.process(text_result(log));
  REQUIRE(rewritten.has_value());
  const json::value text_cursor =
      parse(text_at(rewritten->result, 1)).at("_ctxguard").at("nextCursor");
  // endLine past the last line reads to the end, however it is written.
  const json::object lines =
      fixture.fetch_page({{"cursor", text_cursor}, {"startLine", 299}, {"endLine", 1e300}});
  REQUIRE_FALSE(is_error(lines));
  CHECK(text_at(lines, 0) == "line 299 of the log\nline 300 of the log\n");
}

TEST_CASE("fetch: a chunk page fits its budget even with the longest trailer a chunk can get") {
  // Found by tests/fuzz/pipeline_fuzz's page budget check (and a flaky first run of the joined
  // items test): chunks left 200 tokens for their _ctxguard item, which takes more with some
  // cursors (their characters come out of a MAC, and the salted cache id spans 10 bytes in half
  // of all processes), so a page could come out at 1,895 tokens for a budget of 1,890.
  Fixture fixture;
  CachedPart part;
  for (int i = 0; i < 400'000; ++i) part.text += "line " + std::to_string(1000 + i % 9000) + "\n";
  part.lines = std::make_shared<LineIndex>(part.text);
  part.chunks.assign(100'000, TextChunk{});
  const std::size_t index = part.chunks.size() - 2;  // one with a next cursor
  part.chunks[index] =
      TextChunk{part.text.size() - 20'000, part.text.size() - 10'000, 397'999, 398'999};
  const auto wall_now = std::chrono::system_clock::time_point{std::chrono::seconds(1'800'000'000)};
  std::size_t longest = 0;
  // Cursors for many cache ids, each as long as a salted id gets: whatever the salt, some
  // process issues cursors as expensive as the most expensive of these. With a salt of 0 the
  // ids go on the wire as they are.
  const ctxguard::cursor::CursorCodec unsalted({std::string(32, 'k')}, std::chrono::minutes(10), 0);
  for (std::uint64_t id = 0; id < 400; ++id) {
    const CursorIssuer issuer(unsalted, ~std::uint64_t{0} - id, wall_now);
    for (const std::size_t budget_tokens : {500, 1890, 12000}) {
      const ctxguard::config::BudgetSettings budget = small_budget(budget_tokens);
      json::object meta = chunk_metadata(part, 9, index, issuer, "proxy_ctxguard_fetch");
      std::size_t tokens = 0;
      const std::string trailer = settle_budget_fields(meta, budget.token_budget,
                                                       chunk_tokens(budget), trailer_text, tokens);
      longest = std::max(longest, ctxguard::budget::estimate_tokens(trailer));
      INFO("budget " << budget_tokens << ", cache id " << id << ": " << trailer);
      REQUIRE(tokens <= budget.token_budget);
    }
  }
  WARN("longest trailer " << longest);
}

TEST_CASE("fetch aggregate: counts by status over all 500 rows, then groups page by page") {
  Fixture fixture;
  const std::string cursor = first_cursor(fixture);
  const json::value answer = parse(text_at(
      fixture.fetch_page({{"cursor", cursor}, {"aggregate", json::object{{"groupBy", "status"}}}}),
      0));
  CHECK(answer.at("items") == 500);
  CHECK(answer.at("groups") ==
        json::parse(
            R"([{"status": "confirmed", "count": 333}, {"status": "cancelled", "count": 167}])"));
  CHECK(answer.at("_ctxguard").at("hasMore") == false);

  // 500 groups (one per guest), a few per page; the cursor keeps the aggregate.
  const json::value first = parse(text_at(
      fixture.fetch_page({{"cursor", cursor},
                          {"limit", 3},
                          {"aggregate", json::object{{"groupBy", "guest"}, {"sum", "id"}}}}),
      0));
  CHECK(first.at("groups").as_array().size() == 3);
  CHECK(first.at("_ctxguard").at("groupsTotal") == 500);
  const json::value second =
      parse(text_at(fixture.fetch_page({{"cursor", first.at("_ctxguard").at("nextCursor")}}), 0));
  CHECK(second.at("_ctxguard").at("firstGroup") == 3);
  // Equal counts go in the order of the group values: "guest 0", "guest 1", "guest 10", "guest
  // 100".
  CHECK(second.at("groups").at(0) ==
        json::parse(R"({"guest": "guest 100", "count": 1, "sum": {"id": 100}})"));

  const json::object refused = fixture.fetch_page({{"cursor", cursor}, {"aggregate", "status"}});
  CHECK(error_text(refused).find("`aggregate` must be an object") == 0);
}
