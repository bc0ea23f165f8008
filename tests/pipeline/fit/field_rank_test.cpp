#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"
#include "pipeline/fit/field_rank.hpp"
#include "support/json_reader.hpp"

namespace {

namespace json = boost::json;
using ctxguard::pipeline::choose_fields;
using ctxguard::pipeline::FieldKind;
using ctxguard::pipeline::FieldStat;
using ctxguard::pipeline::rank_fields;

std::vector<json::object> parse_records(std::string_view text) {
  auto parsed = ctxguard::parse_json(text);
  REQUIRE(parsed.has_value());
  std::vector<json::object> records;
  for (const json::value& record : parsed.value().as_array()) records.push_back(record.as_object());
  return records;
}

std::vector<const json::object*> pointers(const std::vector<json::object>& records) {
  std::vector<const json::object*> result;
  for (const json::object& record : records) result.push_back(&record);
  return result;
}

const FieldStat& stat_of(const std::vector<FieldStat>& ranked, std::string_view key) {
  for (const FieldStat& stat : ranked) {
    if (stat.key == key) return stat;
  }
  FAIL("no field " << key);
  return ranked.front();
}

std::vector<std::string> keys_of(const std::vector<FieldStat>& ranked) {
  std::vector<std::string> keys;
  for (const FieldStat& stat : ranked) keys.push_back(stat.key);
  return keys;
}

// What the contract says a field costs in one record: `"key":value,` as minified JSON.
double member_tokens(std::string_view key, const json::value& value) {
  ctxguard::budget::TokenCounter counter;
  counter.add_json_string(key);
  counter.add(":");
  counter.add_json(value);
  counter.add(",");
  return counter.fractional_tokens();
}

FieldStat field_stat(std::string key, double tokens) {
  FieldStat result;
  result.key = std::move(key);
  result.tokens = tokens;
  return result;
}

}  // namespace

TEST_CASE("field rank: kinds from the many spellings of a key") {
  // Short string values that are not dates: the key alone decides.
  const std::vector<json::object> records = parse_records(R"([{
    "id": "b-1", "bookingId": "BK-1", "booking_id": "BK-1", "BookingID": "BK-1",
    "booking-ref": "R1", "UUID": "u1", "guestName": "Ana", "full_name": "Ana Silva",
    "title": "Suite", "e-mail": "ana@example.com", "fileName": "a.pdf", "status": "confirmed",
    "paymentStatus": "paid", "room_type": "double", "HTTPStatus": "ok", "created_at": "yesterday",
    "updatedAt": "last week", "dateOfBirth": "n/a", "modifiedOn": "Monday",
    "totalPrice": "120.50 EUR", "item_count": "12", "currency": "EUR", "createdBy": "ana",
    "paid": "yes", "valid": "yes", "on": "yes"
  }])");
  const std::vector<FieldStat> ranked = rank_fields(pointers(records));
  REQUIRE(ranked.size() == records[0].size());
  for (const char* key : {"id", "bookingId", "booking_id", "BookingID", "booking-ref", "UUID"}) {
    INFO(key);
    REQUIRE(stat_of(ranked, key).kind == FieldKind::kIdentifier);
  }
  for (const char* key : {"guestName", "full_name", "title", "e-mail", "fileName"}) {
    INFO(key);
    REQUIRE(stat_of(ranked, key).kind == FieldKind::kName);
  }
  for (const char* key : {"status", "paymentStatus", "room_type", "HTTPStatus"}) {
    INFO(key);
    REQUIRE(stat_of(ranked, key).kind == FieldKind::kStatus);
  }
  for (const char* key : {"created_at", "updatedAt", "dateOfBirth", "modifiedOn"}) {
    INFO(key);
    REQUIRE(stat_of(ranked, key).kind == FieldKind::kDate);
  }
  for (const char* key : {"totalPrice", "item_count"}) {
    INFO(key);
    REQUIRE(stat_of(ranked, key).kind == FieldKind::kAmount);
  }
  // Words, not substrings: "createdBy" is no date, "paid" and "valid" hold no "id".
  for (const char* key : {"currency", "createdBy", "paid", "valid", "on"}) {
    INFO(key);
    REQUIRE(stat_of(ranked, key).kind == FieldKind::kShortScalar);
  }
}

TEST_CASE("field rank: kinds from the values") {
  const std::string long_note(120, 'n');
  json::object record{
      {"checkIn", "2024-05-01"},
      {"checkOut", "2024-05-03T11:00:00Z"},
      {"nights", 2},
      {"rate", 89.5},
      {"roomId", 12},
      {"priority", 2},
      {"updated", 1714557600},
      {"breakfast", true},
      {"state", true},
      {"notes", long_note},
      {"title", std::string(100, 't')},
      {"guest", json::object{{"name", "Ana"}}},
      {"tags", json::array{"vip"}},
      {"name", json::object{{"first", "Ana"}, {"last", "Silva"}}},
      {"code", "AB12"},
      {"version", "2024-05-01-beta"},
      {"room", "2024"},
  };
  const std::vector<FieldStat> ranked = rank_fields({&record});
  const auto kind = [&](std::string_view key) { return stat_of(ranked, key).kind; };
  REQUIRE(kind("checkIn") == FieldKind::kDate);
  REQUIRE(kind("checkOut") == FieldKind::kDate);
  REQUIRE(kind("nights") == FieldKind::kAmount);
  REQUIRE(kind("rate") == FieldKind::kAmount);
  // Numbers take what the key says: an id, a status, a timestamp.
  REQUIRE(kind("roomId") == FieldKind::kIdentifier);
  REQUIRE(kind("priority") == FieldKind::kStatus);
  REQUIRE(kind("updated") == FieldKind::kDate);
  // Booleans are short scalars unless the key says status.
  REQUIRE(kind("breakfast") == FieldKind::kShortScalar);
  REQUIRE(kind("state") == FieldKind::kStatus);
  // Long text and nested values are what they cost, whatever the key.
  REQUIRE(kind("notes") == FieldKind::kLongText);
  REQUIRE(kind("title") == FieldKind::kLongText);
  REQUIRE(kind("guest") == FieldKind::kNested);
  REQUIRE(kind("tags") == FieldKind::kNested);
  REQUIRE(kind("name") == FieldKind::kNested);
  REQUIRE(kind("code") == FieldKind::kShortScalar);
  REQUIRE(kind("version") == FieldKind::kShortScalar);
  REQUIRE(kind("room") == FieldKind::kShortScalar);
}

TEST_CASE("field rank: a field's kind is that of its heaviest values across records") {
  const std::vector<json::object> records = parse_records(R"([
    {"id": 1, "notes": "", "discount": null, "extra": null, "guest": "walk-in", "remark": "ok"},
    {"id": 2, "notes": "", "discount": null, "extra": null, "guest": "walk-in", "remark": "ok"},
    {"id": 3, "notes": "ok", "discount": 5, "extra": null,
     "guest": {"name": "Mei Tanaka", "email": "mei@example.jp", "phone": "+81 3 1234 5678"},
     "remark": "ok"},
    {"id": 4, "remark": "Guest asked twice for a late checkout and a taxi to the airport at six",
     "notes": "Guest asked twice for a late checkout, a taxi to the airport at six and a packed breakfast for two"}
  ])");
  const std::vector<FieldStat> ranked = rank_fields(pointers(records));
  REQUIRE(stat_of(ranked, "notes").kind == FieldKind::kLongText);
  REQUIRE(stat_of(ranked, "discount").kind == FieldKind::kAmount);
  REQUIRE(stat_of(ranked, "extra").kind == FieldKind::kShortScalar);
  REQUIRE(stat_of(ranked, "guest").kind == FieldKind::kNested);
  // 70 characters: short, however much longer than its siblings.
  REQUIRE(stat_of(ranked, "remark").kind == FieldKind::kShortScalar);
  REQUIRE(stat_of(ranked, "id").present == 4);
  REQUIRE(stat_of(ranked, "discount").present == 3);
}

TEST_CASE("field rank: ordered by kind, id/name/title first, then cheaper first") {
  const std::vector<json::object> records = parse_records(R"([
    {"rooms": [{"number": 204, "type": "double", "beds": 2}, {"number": 205, "type": "single"}],
     "notes": "Arrives late from the airport, needs a taxi booked for the return trip on Sunday morning as well, paid by card",
     "description": "Sea view suite with balcony, renovated in 2023, next to the lift and the ice machine",
     "guest": {"name": "Ana"}, "gate": "B", "wing": "A", "paid": true, "total": 420.5,
     "checkIn": "2024-05-03", "status": "confirmed", "guestName": "Ana Silva", "label": "A",
     "title": "Sea view suite with balcony", "bookingRef": "BR-1",
     "id": "7f0c2a8e-5b1d-4c3e-9a6f-2d8e1b4c7a90"}
  ])");
  const std::vector<FieldStat> ranked = rank_fields(pointers(records));
  // Equal prices keep their order of first appearance.
  REQUIRE(stat_of(ranked, "gate").tokens == stat_of(ranked, "wing").tokens);
  REQUIRE(stat_of(ranked, "id").tokens > stat_of(ranked, "bookingRef").tokens);
  REQUIRE(stat_of(ranked, "title").tokens > stat_of(ranked, "label").tokens);
  REQUIRE(stat_of(ranked, "paid").tokens < stat_of(ranked, "gate").tokens);
  REQUIRE(keys_of(ranked) == std::vector<std::string>{"id", "bookingRef", "title", "label",
                                                      "guestName", "status", "checkIn", "total",
                                                      "paid", "gate", "wing", "description",
                                                      "notes", "guest", "rooms"});
}

TEST_CASE("field rank: tokens price each `\"key\":value,`, strings cut to max_string_chars") {
  const std::vector<json::object> records = parse_records(R"([
    {"notes": "Überbuchung wegen Messe, Zimmer getauscht", "nights": 3},
    {"notes": "short", "nights": 14},
    {"nights": 1}
  ])");
  const std::vector<FieldStat> whole = rank_fields(pointers(records));
  REQUIRE(stat_of(whole, "notes").present == 2);
  REQUIRE(stat_of(whole, "nights").present == 3);
  REQUIRE(stat_of(whole, "nights").tokens ==
          Approx(member_tokens("nights", 3) + member_tokens("nights", 14) +
                 member_tokens("nights", 1)));
  REQUIRE(stat_of(whole, "notes").tokens ==
          Approx(member_tokens("notes", "Überbuchung wegen Messe, Zimmer getauscht") +
                 member_tokens("notes", "short")));

  // Ten characters, not bytes: "Ü" is two bytes.
  const std::vector<FieldStat> cut = rank_fields(pointers(records), 10);
  REQUIRE(stat_of(cut, "notes").tokens ==
          Approx(member_tokens("notes", "Überbuchun") + member_tokens("notes", "short")));
  REQUIRE(stat_of(cut, "notes").tokens < stat_of(whole, "notes").tokens);
  REQUIRE(stat_of(cut, "nights").tokens == stat_of(whole, "nights").tokens);
  // Classified by the whole value, priced by the cut one.
  REQUIRE(stat_of(cut, "notes").kind == stat_of(whole, "notes").kind);
}

TEST_CASE("field rank: choose_fields keeps the longest prefix within the tokens") {
  const std::vector<FieldStat> ranked = {field_stat("id", 10), field_stat("status", 20),
                                         field_stat("total", 30), field_stat("tag", 1)};
  using Keys = std::vector<std::string>;
  REQUIRE(choose_fields(ranked, 35) == Keys{"id", "status"});
  REQUIRE(choose_fields(ranked, 30) == Keys{"id", "status"});  // the sum may equal the limit
  REQUIRE(choose_fields(ranked, 1000) == Keys{"id", "status", "total", "tag"});
  // A prefix: "tag" would fit on its own after "total" fails, but is not taken.
  REQUIRE(choose_fields(ranked, 59) == Keys{"id", "status"});
  // At least min_fields, whatever they cost; all when there are fewer.
  REQUIRE(choose_fields(ranked, 5) == Keys{"id"});
  REQUIRE(choose_fields(ranked, 5, 0).empty());
  REQUIRE(choose_fields(ranked, 5, 3) == Keys{"id", "status", "total"});
  REQUIRE(choose_fields(ranked, 35, 3) == Keys{"id", "status", "total"});
  REQUIRE(choose_fields(ranked, 5, 9) == Keys{"id", "status", "total", "tag"});
}

TEST_CASE("field rank: empty input") {
  REQUIRE(rank_fields({}).empty());
  REQUIRE(rank_fields({nullptr, nullptr}).empty());
  const json::object empty;
  REQUIRE(rank_fields({&empty, nullptr}).empty());
  REQUIRE(choose_fields({}, 100).empty());
  REQUIRE(choose_fields({}, 100, 5).empty());

  // Null records are skipped, not counted.
  const json::object booking{{"id", 1}};
  const std::vector<FieldStat> ranked = rank_fields({nullptr, &booking, nullptr});
  REQUIRE(ranked.size() == 1);
  REQUIRE(ranked[0].present == 1);
  REQUIRE(ranked[0].kind == FieldKind::kIdentifier);
}
