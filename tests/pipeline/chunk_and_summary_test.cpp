// The pipeline with issue 4's stages: chunked text, summarized JSON, searches and line ranges,
// driven end to end through ResultPipeline and FetchTool.
#include "pipeline_fixture.hpp"
#include "support/file_text.hpp"
#include "value_resolver.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>

using namespace ctxguard::pipeline::testing;
using ctxguard::config::BudgetSettings;
using ctxguard::pipeline::CallContext;
namespace json = boost::json;

namespace {

std::string application_log(std::size_t entries) {
  std::string log;
  for (std::size_t i = 0; i < entries; ++i) {
    log += "2026-11-22T10:" + std::to_string(10 + i % 50) + ":00.000Z INFO request " +
           std::to_string(i) + " handled in " + std::to_string(i % 97) + " ms\n";
    if (i % 25 == 7) {
      log += "2026-11-22T10:00:01.000Z ERROR payment failed for order " + std::to_string(i) + "\n";
      for (int frame = 0; frame < 12; ++frame) {
        log += "    at com.example.Payments.charge(Payments.java:" + std::to_string(100 + frame) +
               ")\n";
      }
      log += "Caused by: java.net.SocketTimeoutException: connect timed out\n";
    }
  }
  return log;
}

json::object meta_of(const json::object& answer, std::size_t item) {
  return parse(text_at(answer, item)).at("_ctxguard").as_object();
}

}  // namespace

TEST_CASE("chunks: plain text over the chunk size comes as its first chunk with position data") {
  BudgetSettings budget = small_budget(4000);
  budget.summary.chunk_tokens = 2000;
  Fixture fixture(budget);
  const std::string log = application_log(3000);
  auto rewritten = fixture.process(text_result(log));
  REQUIRE(rewritten.has_value());
  const json::object& result = rewritten->result;
  REQUIRE(content_of(result).size() == 2);
  const json::object meta = meta_of(result, 1);
  CHECK(meta.at("chunkIndex").as_int64() == 0);
  CHECK(meta.at("startLine").as_int64() == 1);
  CHECK(meta.at("totalLines").as_int64() ==
        static_cast<std::int64_t>(std::count(log.begin(), log.end(), '\n')));
  CHECK(meta.at("totalChunks").as_int64() > 1);
  CHECK(tokens_of(result) <= fixture.budget.token_budget);
  CHECK(ctxguard::budget::estimate_tokens(text_at(result, 0)) <= budget.summary.chunk_tokens);
  // The digest of the whole text, and the hint's one sentence naming it.
  CHECK(meta.at("digest").at("levels").at("ERROR").as_int64() > 0);
  const std::string_view hint = meta.at("hint").as_string();
  CHECK(hint.ends_with(ctxguard::pipeline::kTextDigestHint));

  // Every chunk: within the budget, never starting on a continuation line; together the text.
  std::string rebuilt = text_at(result, 0);
  json::object next = meta;
  std::int64_t index = 0;
  while (const json::value* cursor = next.if_contains("nextCursor")) {
    const json::object chunk = fixture.fetch_page({{"cursor", *cursor}});
    REQUIRE_FALSE(is_error(chunk));
    REQUIRE(tokens_of(chunk) <= fixture.budget.token_budget);
    const std::string text = text_at(chunk, 0);
    CHECK(text.rfind("2026-", 0) == 0);  // every chunk starts a log entry
    rebuilt += text;
    next = meta_of(chunk, 1);
    CHECK(next.at("chunkIndex").as_int64() == ++index);
    CHECK(next.at("hint").as_string().find("digest") == json::string::npos);
  }
  CHECK(index + 1 == meta.at("totalChunks").as_int64());
  CHECK(rebuilt == log);
}

TEST_CASE("chunks: text that structuredContent repeats comes in chunks that fit twice") {
  // server-filesystem's read_text_file answers {content: [text], structuredContent: {content:
  // text}}: the chunk goes out twice, so it must fit the budget twice.
  Fixture fixture;
  fixture.budget.token_budget = 4000;
  fixture.budget.hard_cap = 12000;
  const std::string log = application_log(3000);
  json::object result = text_result(log);
  result["structuredContent"] = json::object{{"content", log}};
  auto rewritten = fixture.process(result);
  REQUIRE(rewritten.has_value());
  CHECK(tokens_of(rewritten->result) <= fixture.budget.token_budget);
  const json::object& structured = rewritten->result.at("structuredContent").as_object();
  CHECK(structured.at("content").as_string() == text_at(rewritten->result, 0));
  CHECK(rebuild_text(fixture, rewritten->result, 0) == log);
}

TEST_CASE("chunks: text under the chunk size is never chunked") {
  Fixture fixture(small_budget(4000));
  CHECK_FALSE(fixture.process(text_result(application_log(20))).has_value());
}

TEST_CASE("ranges: exactly the lines asked for, and line search with line numbers") {
  Fixture fixture(small_budget(4000));
  const std::string log = application_log(3000);
  auto rewritten = fixture.process(text_result(log));
  REQUIRE(rewritten.has_value());
  const json::value cursor = meta_of(rewritten->result, 1).at("nextCursor");

  const json::object range =
      fixture.fetch_page({{"cursor", cursor}, {"startLine", 100}, {"endLine", 110}});
  REQUIRE_FALSE(is_error(range));
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < log.size()) {
    const std::size_t end = log.find('\n', start);
    lines.push_back(log.substr(start, end - start + 1));
    start = end + 1;
  }
  std::string expected;
  for (std::size_t line = 100; line <= 110; ++line) expected += lines[line - 1];
  CHECK(text_at(range, 0) == expected);
  CHECK(meta_of(range, 1).at("endLine").as_int64() == 110);

  const json::object found = fixture.fetch_page({{"cursor", cursor}, {"query", "order 1007"}});
  REQUIRE_FALSE(is_error(found));
  CHECK(meta_of(found, 1).at("totalMatches").as_int64() == 1);
  CHECK(text_at(found, 0).find(": 2026-11-22T10:00:01.000Z ERROR payment failed for order 1007") !=
        std::string::npos);

  // A search of a log starts with the digest of the entries it matched: 120 errors (one in 25
  // entries), their one template; the stack lines that match ("Payments.charge") are no entries.
  const json::object errors = fixture.fetch_page({{"cursor", cursor}, {"query", "payment"}});
  REQUIRE_FALSE(is_error(errors));
  const json::object first_page = meta_of(errors, 1);
  const json::object& digest = first_page.at("digest").as_object();
  CHECK(digest.at("entries").as_int64() == 120);
  CHECK(digest.at("levels") == json::value{{"ERROR", 120}});
  CHECK(digest.at("messages").at(0).at("template") == "payment failed for order <*>");
  CHECK(digest.at("messages").at(0).at("firstLine").as_int64() == 9);
  CHECK(first_page.at("hint").as_string().ends_with(ctxguard::pipeline::kMatchesDigestHint));
  CHECK(tokens_of(errors) <= fixture.budget.token_budget);
  // Its next page does not repeat it.
  const json::object second = fixture.fetch_page({{"cursor", first_page.at("nextCursor")}});
  CHECK_FALSE(meta_of(second, 1).contains("digest"));

  const json::object bad = fixture.fetch_page({{"cursor", cursor}, {"startLine", 0}});
  CHECK(is_error(bad));
}

TEST_CASE("ranges: lines over the budget come in pieces that go on where the last one ended") {
  Fixture fixture(small_budget(1000));
  // Line 2 alone is several budgets long; a range over it once restarted at its first byte on
  // every continuation, forever.
  std::string long_line;
  for (int i = 0; i < 6000; ++i) long_line += "word" + std::to_string(i) + " ";
  long_line += "end\n";
  const std::string text = "first line\n" + long_line + "third line\nfourth line\n";
  auto rewritten = fixture.process(text_result(text));
  REQUIRE(rewritten.has_value());
  const json::value cursor = meta_of(rewritten->result, 1).at("nextCursor");

  json::object piece = fixture.fetch_page({{"cursor", cursor}, {"startLine", 2}, {"endLine", 3}});
  std::string rebuilt;
  std::size_t pieces = 0;
  for (;;) {
    REQUIRE_FALSE(is_error(piece));
    REQUIRE(tokens_of(piece) <= fixture.budget.token_budget);
    REQUIRE(++pieces < 100);
    const json::object meta = meta_of(piece, 1);
    CHECK(meta.at("offset").as_int64() == static_cast<std::int64_t>(11 + rebuilt.size()));
    rebuilt += text_at(piece, 0);
    const json::value* next = meta.if_contains("nextCursor");
    if (next == nullptr) {
      CHECK(meta.at("endLine").as_int64() == 3);
      break;
    }
    piece = fixture.fetch_page({{"cursor", *next}});
  }
  CHECK(rebuilt == long_line + "third line\n");
  CHECK(pieces > 3);
}

TEST_CASE(
    "summary: one huge object fits the budget with long strings cut and deep values collapsed") {
  Fixture fixture(small_budget(1000));
  std::string description;
  for (int i = 0; i < 900; ++i) description += "word" + std::to_string(i) + " ";
  description += "end";
  json::object booking{{"id", "bk_1"},
                       {"status", "confirmed"},
                       {"description", description},
                       {"deep", parse(R"({"a":{"b":{"c":{"d":{"e":{"f":1}}}}}})")}};
  auto rewritten = fixture.process(text_result(ctxguard::to_json(json::value(booking))));
  REQUIRE(rewritten.has_value());
  const json::object& result = rewritten->result;
  CHECK(tokens_of(result) <= fixture.budget.token_budget);
  const json::value shown = parse(text_at(result, 0));
  const json::object& meta = shown.at("_ctxguard").as_object();
  CHECK(meta.at("stringsCut").as_int64() == 1);
  CHECK(shown.at("id").as_string() == "bk_1");
  const std::string shown_description(shown.at("description").as_string());
  REQUIRE(shown_description.find("…[+") != std::string::npos);
  CHECK(shown_description.find(": /description]") != std::string::npos);

  // The whole string, by path.
  const json::object full =
      fixture.fetch_page({{"cursor", meta.at("resultCursor")}, {"path", "/description"}});
  REQUIRE_FALSE(is_error(full));
  CHECK(rebuild_text(fixture, full, 0) == description);
  // A collapsed value, by path.
  const json::object deep =
      fixture.fetch_page({{"cursor", meta.at("resultCursor")}, {"path", "/deep/a/b/c"}});
  REQUIRE_FALSE(is_error(deep));
  CHECK(parse(text_at(deep, 0)).at("d").at("e").at("f").as_int64() == 1);
  // A path that is not there.
  CHECK(is_error(fixture.fetch_page({{"cursor", meta.at("resultCursor")}, {"path", "/nope"}})));
}

TEST_CASE("summary: when the configured limits are not enough, strings and depth tighten") {
  // Fourteen 5,000-character strings cut at 500 still cost ~1,800 tokens, twice over when
  // structuredContent repeats the text: the answer only fits with shorter strings.
  Fixture fixture;
  fixture.budget.token_budget = 4000;
  fixture.budget.hard_cap = 12000;
  json::object document{{"title", "report"}};
  for (int i = 0; i < 14; ++i) {
    std::string body;
    while (body.size() < 5000) body += "sentence number " + std::to_string(body.size()) + ". ";
    document["section" + std::to_string(i)] = json::object{{"body", body}, {"index", i}};
  }
  const std::string text = ctxguard::to_json(json::value(document));
  json::object result = text_result(text);
  result["structuredContent"] = json::object{{"content", text}};
  auto rewritten = fixture.process(result);
  REQUIRE(rewritten.has_value());
  CHECK(tokens_of(rewritten->result) <= fixture.budget.token_budget);
  const json::value shown = parse(text_at(rewritten->result, 0));
  const std::string body(shown.at("section0").at("body").as_string());
  CHECK(body.find("…[+") < 500);  // shorter than the configured 500 characters
  ValueResolver resolver(fixture, fixture.budget.token_budget);
  CHECK(resolver.rebuild(rewritten->result) == json::value(document));
}

TEST_CASE("summary: items with long text are projected and the page says what was kept") {
  Fixture fixture(small_budget(2000));
  json::array items;
  for (int i = 0; i < 40; ++i) {
    items.push_back(json::object{{"id", i},
                                 {"status", i % 3 == 0 ? "cancelled" : "confirmed"},
                                 {"guestName", "guest " + std::to_string(i)},
                                 {"checkIn", "2026-12-0" + std::to_string(1 + i % 9)},
                                 {"total", 100 + i},
                                 {"notes", std::string(400, 'n')},
                                 {"history", json::array{"a", "b", "c", "d"}}});
  }
  auto rewritten = fixture.process(text_result(ctxguard::to_json(json::value(items))));
  REQUIRE(rewritten.has_value());
  CHECK(tokens_of(rewritten->result) <= fixture.budget.token_budget);
  const json::value shown = parse(text_at(rewritten->result, 0));
  const json::object& meta = shown.at("_ctxguard").as_object();
  INFO(ctxguard::to_json(meta));
  CHECK(meta.contains("summary"));
  CHECK(meta.at("summary").as_string().size() <= 300);  // 100 characters, UTF-8 allowed
  CHECK(meta.at("totalCount").as_int64() == 40);
}

TEST_CASE("query: the matching items of a cached array, counted, paginated and indexed") {
  Fixture fixture(small_budget(1000));
  json::array items;
  for (int i = 0; i < 2000; ++i) {
    items.push_back(json::object{{"id", i},
                                 {"status", i % 100 == 0 ? "cancelled" : "confirmed"},
                                 {"guest", json::object{{"name", "guest " + std::to_string(i)}}}});
  }
  auto rewritten = fixture.process(text_result(ctxguard::to_json(json::value(items))));
  REQUIRE(rewritten.has_value());
  const json::value first = parse(text_at(rewritten->result, 0));
  const json::value cursor = first.at("_ctxguard").at("nextCursor");

  json::object page =
      fixture.fetch_page({{"cursor", cursor}, {"query", "status=cancelled"}, {"limit", 8}});
  REQUIRE_FALSE(is_error(page));
  std::vector<std::int64_t> ids;
  for (;;) {
    const json::value body = parse(text_at(page, 0));
    const json::object& meta = body.at("_ctxguard").as_object();
    CHECK(meta.at("totalMatches").as_int64() == 20);
    for (const json::value& item : body.at("items").as_array()) {
      CHECK(item.at("status").as_string() == "cancelled");
      ids.push_back(item.at("id").as_int64());
    }
    const json::value* next = meta.if_contains("nextCursor");
    if (next == nullptr) break;
    page = fixture.fetch_page({{"cursor", *next}});
    REQUIRE_FALSE(is_error(page));
  }
  REQUIRE(ids.size() == 20);
  for (std::size_t k = 0; k < ids.size(); ++k) CHECK(ids[k] == static_cast<std::int64_t>(k * 100));

  const json::object bad = fixture.fetch_page({{"cursor", cursor}, {"query", "\"open"}});
  CHECK(is_error(bad));
  CHECK(is_error(fixture.fetch_page({{"cursor", cursor}, {"query", ""}})));

  // A search with `fields` keeps them on every page it continues to.
  page = fixture.fetch_page(
      {{"cursor", cursor}, {"query", "status=cancelled"}, {"limit", 5}, {"fields", {"id"}}});
  for (int pages = 0;; ++pages) {
    REQUIRE_FALSE(is_error(page));
    REQUIRE(pages < 10);
    const json::value body = parse(text_at(page, 0));
    for (const json::value& item : body.at("items").as_array()) {
      CHECK(item.as_object().size() == 1);
      CHECK(item.as_object().contains("id"));
    }
    const json::value* next = body.at("_ctxguard").as_object().if_contains("nextCursor");
    if (next == nullptr) break;
    page = fixture.fetch_page({{"cursor", *next}});
  }
}

TEST_CASE("fetch: arguments that do not apply to what the cursor names are one-line errors") {
  Fixture fixture(small_budget(1000));
  auto text = fixture.process(text_result(application_log(400)));
  REQUIRE(text.has_value());
  const json::value text_cursor = meta_of(text->result, 1).at("nextCursor");
  const json::object path_on_text =
      fixture.fetch_page({{"cursor", text_cursor}, {"path", "/items"}});
  REQUIRE(is_error(path_on_text));
  CHECK(text_at(path_on_text, 0).find("`path` applies to JSON") != std::string::npos);

  json::array items;
  std::string long_note;  // item 1's note: varied words, several budgets long
  for (int w = 0; long_note.size() < 30000; ++w) long_note += "n" + std::to_string(w) + " ";
  std::string short_note;  // the others' notes: 600 characters of words
  while (short_note.size() < 600) short_note += "note ";
  for (int i = 0; i < 300; ++i) {
    items.push_back(json::object{{"id", i}, {"note", i == 1 ? long_note : short_note}});
  }
  auto listing = fixture.process(text_result(ctxguard::to_json(json::value(items))));
  REQUIRE(listing.has_value());
  const json::value shown = parse(text_at(listing->result, 0));
  const json::value result_cursor = shown.at("_ctxguard").at("resultCursor");
  const json::object query_on_string =
      fixture.fetch_page({{"cursor", result_cursor}, {"path", "/1/note"}, {"query", "n"}});
  REQUIRE(is_error(query_on_string));
  CHECK(text_at(query_on_string, 0).find("is a string") != std::string::npos);

  // The pieces of one value go on by their cursor; a `query` there is an error too (it once
  // sent the first piece again).
  const json::object note = fixture.fetch_page({{"cursor", result_cursor}, {"path", "/1/note"}});
  REQUIRE_FALSE(is_error(note));
  const json::value piece_cursor = meta_of(note, 1).at("nextCursor");
  CHECK(is_error(fixture.fetch_page({{"cursor", piece_cursor}, {"query", "n"}})));
  CHECK_FALSE(is_error(fixture.fetch_page({{"cursor", piece_cursor}})));
}

TEST_CASE("resources: a long text resource is chunked like a tool result") {
  Fixture fixture(small_budget(4000));
  const std::string log = application_log(3000);
  json::object result{
      {"contents", json::array{json::object{
                       {"uri", "file:///app.log"}, {"mimeType", "text/plain"}, {"text", log}}}}};
  fixture.held = result;
  auto rewritten = fixture.pipeline.process_resource(
      fixture.held, fixture.budget,
      CallContext{"file:///app.log", true, fixture.now, fixture.wall_now});
  REQUIRE(rewritten.has_value());
  const json::array& contents = rewritten->result.at("contents").as_array();
  REQUIRE(contents.size() == 2);
  CHECK(contents[1].at("uri").as_string() == "file:///app.log");
  const json::object meta =
      parse(std::string_view(contents[1].at("text").as_string())).at("_ctxguard").as_object();
  std::string rebuilt(contents[0].at("text").as_string());
  json::object next = meta;
  while (const json::value* cursor = next.if_contains("nextCursor")) {
    const json::object chunk = fixture.fetch_page({{"cursor", *cursor}});
    rebuilt += text_at(chunk, 0);
    next = parse(text_at(chunk, 1)).at("_ctxguard").as_object();
  }
  CHECK(rebuilt == log);
}

TEST_CASE("spill: every kind of shortened answer names the file holding the server's whole text") {
  Fixture fixture(small_budget(1000));
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ctxguard-pipeline-spill-" +
       std::to_string(std::chrono::system_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(dir);
  ctxguard::spill::SpillDirectory spill_dir(dir);
  std::map<std::string, std::string> files;  // what the writer was given, by the file's path
  std::weak_ptr<const ctxguard::spill::SpillFile> first_file;
  fixture.pipeline.set_spill_writer(
      [&](std::string_view tool, std::string_view extension,
          std::string_view content) -> std::optional<ctxguard::pipeline::SpilledFile> {
        auto file = spill_dir.write(tool, extension, content);
        REQUIRE(file.has_value());
        if (first_file.expired()) first_file = *file;
        std::string path = (*file)->path().string();
        files[path] = std::string(content);
        return ctxguard::pipeline::SpilledFile{std::move(*file), std::move(path)};
      });
  const auto file_of = [&](const json::object& meta) {
    REQUIRE(meta.contains("file"));
    const std::string path(meta.at("file").as_string());
    const auto on_disk = ctxguard::read_file_text(path, std::size_t{1} << 24);
    REQUIRE(on_disk.has_value());
    CHECK(*on_disk == files.at(path));
    return *on_disk;
  };

  const std::string log = application_log(400);  // chunked text
  auto chunked = fixture.process(text_result(log));
  REQUIRE(chunked.has_value());
  CHECK(file_of(meta_of(chunked->result, 1)) == log);
  CHECK_FALSE(first_file.expired());  // held by the cache entry

  json::array items;  // paginated JSON
  for (int i = 0; i < 500; ++i) items.push_back(json::object{{"id", i}, {"name", "row"}});
  const std::string listing = ctxguard::to_json(json::value(items));
  auto paginated = fixture.process(text_result(listing));
  REQUIRE(paginated.has_value());
  CHECK(file_of(parse(text_at(paginated->result, 0)).at("_ctxguard").as_object()) == listing);

  // Cut at the hard cap (an error result is never paginated or summarized, only capped).
  json::object error_result = text_result(ctxguard::to_json(json::value(items)) + listing);
  error_result["isError"] = true;
  auto capped = fixture.process(error_result);
  REQUIRE(capped.has_value());
  CHECK(file_of(meta_of(capped->result, 1)) == ctxguard::to_json(json::value(items)) + listing);

  // JSON that pagination could not bring under the hard cap (one item alone is over it, and
  // summarization is off): one file, though the answer was first paginated, then cut as text.
  fixture.budget.summary.max_string_chars = 0;
  fixture.budget.summary.max_depth = 0;
  fixture.budget.summary.project = false;
  const std::size_t before = files.size();
  json::array wide;
  std::string blob;
  for (int w = 0; blob.size() < 20000; ++w) blob += "w" + std::to_string(w * 7919 % 100003) + " ";
  for (int i = 0; i < 30; ++i) wide.push_back(json::object{{"blob", blob}});
  auto cut = fixture.process(text_result(ctxguard::to_json(json::value(wide))));
  REQUIRE(cut.has_value());
  REQUIRE(content_of(cut->result).size() == 2);  // cut as text
  CHECK(files.size() == before + 1);
  // The log record says what went out, not what the abandoned levels did.
  CHECK(cut->record.stages.back() == "hard-cap");
  CHECK(std::find(cut->record.stages.begin(), cut->record.stages.end(), "paginate") ==
        cut->record.stages.end());
  CHECK(cut->record.items_total == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("tables: --tables shows uniform flat records as columns and rows, more per answer") {
  json::array rows;
  for (int i = 0; i < 2000; ++i) {
    rows.push_back(json::object{{"bookingId", "bk_" + std::to_string(i)},
                                {"status", i % 7 == 0 ? "cancelled" : "confirmed"},
                                {"checkInDate", "2026-12-01"},
                                {"totalAmount", 100 + i}});
  }
  const std::string text = ctxguard::to_json(json::value(json::object{{"bookings", rows}}));
  const auto first_page = [&](bool tables, json::value& shown) {
    Fixture fixture(small_budget(1500));
    fixture.budget.summary.tables = tables;
    fixture.budget.page_size = 1000;  // the budget, not the page size, decides how many show
    auto rewritten = fixture.process(text_result(text));
    REQUIRE(rewritten.has_value());
    REQUIRE(tokens_of(rewritten->result) <= fixture.budget.token_budget);
    shown = parse(text_at(rewritten->result, 0));
    if (tables) {
      ValueResolver resolver(fixture, fixture.budget.token_budget);
      CHECK(resolver.rebuild(rewritten->result) == parse(text));
    }
    return shown.at("_ctxguard").at("pageSize").as_int64();
  };
  json::value plain;
  json::value tabled;
  const std::int64_t plain_rows = first_page(false, plain);
  const std::int64_t table_rows = first_page(true, tabled);
  INFO(plain_rows << " rows as objects, " << table_rows << " as a table");
  CHECK(plain.at("bookings").is_array());
  const json::object& table = tabled.at("bookings").as_object();
  CHECK(table.at("columns").as_array().size() == 4);
  CHECK(static_cast<std::int64_t>(table.at("rows").as_array().size()) == table_rows);
  CHECK(tabled.at("_ctxguard").at("tables").as_array().front().as_string() == "/bookings");
  CHECK(table_rows > plain_rows * 5 / 4);  // keys once instead of in every row: about a third less
}

TEST_CASE("query: a search goes on past a match too large for the budget") {
  Fixture fixture(small_budget(1000));
  fixture.budget.summary.max_string_chars = 0;  // nothing shortens the large match
  fixture.budget.summary.max_depth = 0;
  fixture.budget.summary.project = false;
  std::string huge;
  for (int w = 0; huge.size() < 20000; ++w) huge += "h" + std::to_string(w) + " ";
  json::array items;
  for (int i = 0; i < 300; ++i) {
    items.push_back(json::object{{"id", i},
                                 {"status", i % 50 == 0 ? "cancelled" : "confirmed"},
                                 {"body", i == 50 ? huge : std::string("short")}});
  }
  auto rewritten = fixture.process(text_result(ctxguard::to_json(json::value(items))));
  REQUIRE(rewritten.has_value());
  const json::value cursor = parse(text_at(rewritten->result, 0)).at("_ctxguard").at("nextCursor");
  // Matches: 0, 50 (over the budget alone), 100, 150, 200, 250.
  json::object answer = fixture.fetch_page({{"cursor", cursor}, {"query", "status=cancelled"}});
  std::vector<std::int64_t> ids;
  for (int step = 0; step < 20; ++step) {
    REQUIRE_FALSE(is_error(answer));
    REQUIRE(tokens_of(answer) <= fixture.budget.token_budget);
    const json::value* next = nullptr;
    json::object meta;
    if (content_of(answer).size() == 2) {  // the large match, in pieces
      meta = meta_of(answer, 1);
      REQUIRE(meta.at("item").at("index").as_int64() == 50);
      CHECK(meta.at("totalMatches").as_int64() == 6);
      ids.push_back(50);
      next = meta.if_contains("nextItemsCursor");
    } else {
      const json::value body = parse(text_at(answer, 0));
      for (const json::value& item : body.at("items").as_array()) {
        ids.push_back(item.at("id").as_int64());
      }
      meta = body.at("_ctxguard").as_object();
      next = meta.if_contains("nextCursor");
    }
    if (next == nullptr) break;
    answer = fixture.fetch_page({{"cursor", *next}});
  }
  CHECK(ids == std::vector<std::int64_t>{0, 50, 100, 150, 200, 250});
}

TEST_CASE("tables: an array that fits as a table is not cut because it would not as objects") {
  const auto bookings = [](int count, int first) {
    json::array rows;
    for (int i = first; i < first + count; ++i) {
      rows.push_back(json::object{{"bookingId", "bk_" + std::to_string(i)},
                                  {"status", i % 7 == 0 ? "cancelled" : "confirmed"},
                                  {"checkInDate", "2026-12-01"},
                                  {"totalAmount", 100 + i}});
    }
    return rows;
  };
  // As tables, cutting the long array to a page is enough; as objects, both would need cutting.
  const std::string text = ctxguard::to_json(
      json::value(json::object{{"long", bookings(400, 0)}, {"short", bookings(200, 1000)}}));
  // As estimated: long 7,433 tokens as a table (947 for a page), 12,448 as objects (1,557);
  // short 3,727 as a table, 6,225 as objects.
  Fixture fixture(small_budget(6000));
  fixture.budget.summary.tables = true;
  auto rewritten = fixture.process(text_result(text));
  REQUIRE(rewritten.has_value());
  REQUIRE(tokens_of(rewritten->result) <= fixture.budget.token_budget);
  const json::value shown = parse(text_at(rewritten->result, 0));
  CHECK(shown.at("long").at("rows").as_array().size() < 400);
  CHECK(shown.at("short").at("rows").as_array().size() == 200);
  CHECK_FALSE(shown.at("_ctxguard").as_object().contains("otherCuts"));
}
