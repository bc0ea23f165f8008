#include <catch2/catch.hpp>

#include <chrono>
#include <set>
#include <string>

#include <boost/json.hpp>

#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "documented.hpp"
#include "pipeline/fetch/fetch_request.hpp"

namespace json = boost::json;
using ctxguard::cursor::CursorCodec;
using ctxguard::cursor::CursorKind;
using ctxguard::cursor::CursorPayload;
using ctxguard::pipeline::FetchError;
using ctxguard::pipeline::FetchRefusal;
using ctxguard::pipeline::FetchRequest;
using ctxguard::pipeline::parse_fetch_request;

namespace {

const auto kNow = std::chrono::system_clock::time_point{} + std::chrono::hours(24 * 20000);

const CursorCodec& codec() {
  static const CursorCodec codec({std::string(32, 'k')}, std::chrono::seconds(600), 0);
  return codec;
}

std::string cursor(CursorPayload payload = {}) {
  payload.entry = payload.entry == 0 ? 7 : payload.entry;
  payload.issued_at =
      std::chrono::duration_cast<std::chrono::seconds>(kNow.time_since_epoch()).count();
  return codec().encode(payload);
}

ctxguard::pipeline::Refusable<FetchRequest> parse(json::object arguments) {
  return parse_fetch_request(json::value(std::move(arguments)), codec(), kNow);
}

FetchRefusal refused(json::object arguments) {
  auto parsed = parse(std::move(arguments));
  REQUIRE_FALSE(parsed.has_value());
  return parsed.error();
}

FetchRequest accepted(json::object arguments) {
  auto parsed = parse(std::move(arguments));
  if (!parsed) FAIL(ctxguard::pipeline::fetch_refusal_message(parsed.error()));
  return *parsed;
}

}  // namespace

TEST_CASE("fetch request: the cursor is checked first, then each argument in order") {
  CHECK(refused({}).error == FetchError::kCursorMissing);
  CHECK(refused({{"cursor", 5}}).error == FetchError::kCursorMissing);
  CHECK(refused({{"cursor", "not a cursor"}, {"limit", -1}}).error == FetchError::kCursorMalformed);
  // Signed with another key: another session's cursor, or an altered one.
  const CursorCodec other({std::string(32, 'o')}, std::chrono::seconds(600), 0);
  CursorPayload fresh;
  fresh.entry = 1;
  fresh.issued_at =
      std::chrono::duration_cast<std::chrono::seconds>(kNow.time_since_epoch()).count();
  CHECK(refused({{"cursor", other.encode(fresh)}}).error == FetchError::kCursorForged);
  CursorPayload old;
  old.entry = 1;
  old.issued_at =
      std::chrono::duration_cast<std::chrono::seconds>(kNow.time_since_epoch()).count() - 601;
  const FetchRefusal expired = refused({{"cursor", codec().encode(old)}});
  CHECK(expired.error == FetchError::kCursorExpired);
  CHECK(expired.number == 600);

  // Several problems: the first in the order limit, fields, path, lines, query is reported.
  const std::string good = cursor();
  CHECK(refused({{"cursor", good}, {"limit", "ten"}, {"fields", 3}}).error ==
        FetchError::kNotWholeNumber);
  CHECK(refused({{"cursor", good}, {"fields", 3}, {"path", "x"}}).error ==
        FetchError::kFieldsNotList);
  CHECK(refused({{"cursor", good}, {"path", "x"}, {"startLine", 0}}).error ==
        FetchError::kPathNotPointer);
  CHECK(refused({{"cursor", good}, {"startLine", 0}, {"query", ""}}).error ==
        FetchError::kBelowOne);
  CHECK(refused({{"cursor", good}, {"query", ""}}).error == FetchError::kQueryEmpty);
  CHECK(refused({{"cursor", good}, {"query", 1}}).error == FetchError::kQueryNotString);
}

TEST_CASE("fetch request: numbers are whole and 1 or more, in any JSON spelling") {
  const std::string good = cursor();
  CHECK(accepted({{"cursor", good}, {"limit", 3}}).limit == 3u);
  CHECK(accepted({{"cursor", good}, {"limit", 3.0}}).limit == 3u);
  CHECK(accepted({{"cursor", good}, {"endLine", 1e30}}).end_line > 1000000u);
  const FetchRefusal fraction = refused({{"cursor", good}, {"limit", 2.5}});
  CHECK(fraction.error == FetchError::kNotWholeNumber);
  CHECK(ctxguard::pipeline::fetch_refusal_message(fraction) ==
        "`limit` must be a whole number, 1 or more.");
  const FetchRefusal negative = refused({{"cursor", good}, {"startLine", -4}});
  CHECK(ctxguard::pipeline::fetch_refusal_message(negative) ==
        "`startLine` -4 is out of range: it must be 1 or more.");
}

TEST_CASE("fetch request: fields, path and query are taken from the arguments over the cursor's") {
  CursorPayload payload;
  payload.kind = CursorKind::kArrayPage;
  payload.fields = {"id"};
  payload.query = "status=open";
  payload.offset = 40;
  const std::string carried = cursor(payload);
  const FetchRequest plain = accepted({{"cursor", carried}});
  CHECK(plain.fields == std::vector<std::string>{"id"});
  CHECK_FALSE(plain.fields_given);
  CHECK(plain.query == "status=open");
  CHECK(plain.payload.offset == 40);
  // The same query continues where the cursor points; a new one starts from the beginning.
  CHECK(accepted({{"cursor", carried}, {"query", "status=open"}}).payload.offset == 40);
  CHECK(accepted({{"cursor", carried}, {"query", "status=closed"}}).payload.offset == 0);
  const FetchRequest fields = accepted({{"cursor", carried}, {"fields", json::array{}}});
  CHECK(fields.fields.empty());
  CHECK(fields.fields_given);
  CHECK(accepted({{"cursor", carried}, {"path", "/a/0"}}).path == "/a/0");
  CHECK(accepted({{"cursor", carried}, {"path", ""}}).path == "");
}

TEST_CASE("fetch request: the page size is the given limit, the cursor's, or the tool's") {
  ctxguard::config::BudgetSettings settings;
  settings.page_size = 50;
  settings.max_page_size = 200;
  CursorPayload payload;
  payload.limit = 300;  // issued before a reload lowered the maximum
  const FetchRequest carried = accepted({{"cursor", cursor(payload)}});
  CHECK(ctxguard::pipeline::page_limit(carried, settings).value() == 200);
  const FetchRequest plain = accepted({{"cursor", cursor()}});
  CHECK(ctxguard::pipeline::page_limit(plain, settings).value() == 50);
  const FetchRequest given = accepted({{"cursor", cursor()}, {"limit", 120}});
  CHECK(ctxguard::pipeline::page_limit(given, settings).value() == 120);
  const FetchRequest over = accepted({{"cursor", cursor()}, {"limit", 201}});
  const auto refusal = ctxguard::pipeline::page_limit(over, settings).error();
  CHECK(ctxguard::pipeline::fetch_refusal_message(refusal) ==
        "`limit` must be a whole number from 1 to 200.");
}

TEST_CASE("fetch request: every refusal has a message of its own and a telemetry reason") {
  std::set<std::string> messages;
  const FetchError last = FetchError::kQueryOnScalar;
  for (int e = 0; e <= static_cast<int>(last); ++e) {
    const FetchRefusal refusal{.error = static_cast<FetchError>(e), .detail = "x", .number = 9};
    const std::string message = ctxguard::pipeline::fetch_refusal_message(refusal);
    CHECK_FALSE(message.empty());
    CHECK(message != "This call could not be answered.");
    messages.insert(message);
    CHECK_FALSE(ctxguard::pipeline::fetch_refusal_reason(refusal.error).empty());
  }
  // kQueryInvalid carries the query's own message ("x" here): all others are distinct texts.
  CHECK(messages.size() == static_cast<std::size_t>(last) + 1);
  CHECK(ctxguard::pipeline::fetch_refusal_reason(FetchError::kMismatch) == "mismatch");
  CHECK(ctxguard::pipeline::fetch_refusal_reason(FetchError::kPathNotPointer) == "argument");
}

TEST_CASE("fetch request: every refusal reads as docs/protocol.md 6 writes it") {
  using ctxguard::pipeline::fetch_refusal_message;
  const std::string errors =
      ctxguard::testing::section_of(ctxguard::testing::documented("protocol.md"), "## 6. Cursors");
  // Every FetchError but the two whose message is the problem found (kQueryInvalid,
  // kAggregateInvalid), with the values the table's examples name.
  const std::vector<FetchRefusal> refusals{
      {.error = FetchError::kCursorMissing},
      {.error = FetchError::kCursorMalformed},
      {.error = FetchError::kCursorForged},
      {.error = FetchError::kCursorExpired, .number = 600},
      {.error = FetchError::kNotWholeNumber, .detail = "limit"},
      {.error = FetchError::kBelowOne, .detail = "limit", .number = 0},
      {.error = FetchError::kLimitOverMax, .number = 200},
      {.error = FetchError::kFieldsNotList},
      {.error = FetchError::kPathNotPointer},
      {.error = FetchError::kQueryNotString},
      {.error = FetchError::kQueryEmpty},
      {.error = FetchError::kEvicted},
      {.error = FetchError::kMismatch},
      {.error = FetchError::kSearchOff, .detail = "search_bookings"},
      {.error = FetchError::kLinesOnJson},
      {.error = FetchError::kEndBeforeStart},
      {.error = FetchError::kPathOnText},
      {.error = FetchError::kNoValueAtPath, .detail = "/nope"},
      {.error = FetchError::kQueryOnPiece},
      {.error = FetchError::kQueryOnString, .detail = "/description"},
      {.error = FetchError::kQueryOnScalar},
      {.error = FetchError::kAggregateNotArray},
  };
  static_assert(static_cast<int>(FetchError::kAggregateNotArray) + 1 == 24,
                "a new FetchError goes in the list above and in docs/protocol.md 6");
  for (const FetchRefusal& refusal : refusals) {
    const std::string message = fetch_refusal_message(refusal);
    INFO(message);
    CHECK(errors.find(message) != std::string::npos);
  }
}
