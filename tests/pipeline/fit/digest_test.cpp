#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "pipeline/fit/digest.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using ctxguard::pipeline::ArrayDigest;
using ctxguard::pipeline::digest_array;
using ctxguard::pipeline::DigestLimits;

json::array parse_array(std::string_view text) {
  auto parsed = ctxguard::parse_json(text);
  REQUIRE(parsed.has_value());
  REQUIRE(parsed.value().is_array());
  return parsed.value().as_array();
}

std::string fields_json(const ArrayDigest& digest) {
  return ctxguard::to_json(json::value(digest.fields));
}

std::size_t code_points(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// Every multi-byte sequence whole (the summary must never end inside one).
bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (lead >= 0x80 && lead < 0xC0) return false;
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

constexpr std::string_view kBookings = R"([
  {"id": 1001, "status": "confirmed", "guest": {"name": "Ana Silva", "email": "ana@example.com"},
   "checkIn": "2024-05-03", "total": 420.5,
   "notes": "Late arrival after 22:00, key box code sent by email on the day before"},
  {"id": 1002, "status": "cancelled", "guest": {"name": "Jonas Berg", "email": "jb@example.org"},
   "checkIn": "2024-04-28", "total": 189, "notes": "Cancelled by guest through the partner site"},
  {"id": 1003, "status": "confirmed", "guest": {"name": "Mei Tanaka", "email": "mei@example.jp"},
   "checkIn": "2024-06-15", "total": 1250, "notes": "Honeymoon: flowers and champagne in the room"},
  {"id": 1004, "status": "pending", "guest": {"name": "Omar Haddad", "email": "omar@example.com"},
   "checkIn": "2024-05-20", "total": 99.9, "notes": "Waiting for the deposit, reminder sent twice"},
  {"id": 1005, "status": "confirmed", "guest": {"name": "Lucía Gómez", "email": "lg@example.es"},
   "checkIn": "2024-05-11", "total": 310, "notes": "Needs a baby cot and a quiet room, high floor"},
  {"id": 1006, "status": "pending", "guest": {"name": "Sven Olsen", "email": "sven@example.no"},
   "checkIn": "2024-06-01", "total": 560.75, "notes": "Group of four, asked about airport transfer"},
  {"id": 1007, "status": "cancelled", "guest": {"name": "Priya Nair", "email": "pn@example.in"},
   "checkIn": "2024-05-05", "total": 75, "notes": "No-show policy applied, fee charged to the card"},
  {"id": 1008, "status": "confirmed", "guest": {"name": "Tom Weber", "email": "tom@example.de"},
   "checkIn": "2024-05-29", "total": 880, "notes": "Business trip, invoice to the company address"}
])";

// `count` bookings whose statuses cycle through `statuses` (each repeated `weights[k]` times).
json::array weighted_bookings(const std::vector<std::string>& statuses,
                              const std::vector<int>& weights) {
  json::array bookings;
  int id = 5000;
  for (std::size_t k = 0; k < statuses.size(); ++k) {
    for (int i = 0; i < weights[k]; ++i) {
      json::object booking;
      booking["id"] = ++id;
      booking["status"] = statuses[k];
      bookings.push_back(std::move(booking));
    }
  }
  return bookings;
}

}  // namespace

TEST_CASE("digest: bookings by status, check-in dates and totals") {
  const json::array bookings = parse_array(kBookings);
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  REQUIRE(digest->summary == "8 bookings; status: confirmed 4, cancelled 2, pending 2");
  // The ids, the nested guest and the free-text notes are left out.
  REQUIRE(fields_json(*digest) ==
          R"({"status":{"top":{"confirmed":4,"cancelled":2,"pending":2},"distinct":3},)"
          R"("checkIn":{"min":"2024-04-28","max":"2024-06-15"},"total":{"min":75,"max":1250}})");
}

TEST_CASE("digest: the top values by count, ties by value, and the distinct count of all") {
  const json::array bookings = weighted_bookings(
      {"pending", "no_show", "confirmed", "checked_in", "cancelled", "refunded", "archived"},
      {30, 20, 100, 30, 80, 2, 1});
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  const json::object& status = digest->fields.at("status").as_object();
  REQUIRE(ctxguard::to_json(status) ==
          R"({"top":{"confirmed":100,"cancelled":80,"checked_in":30,"pending":30,"no_show":20},)"
          R"("distinct":7})");
  // Two more values than listed: the line says so.
  REQUIRE(digest->summary ==
          "263 bookings; status: confirmed 100, cancelled 80, checked_in 30, pending 30, "
          "no_show 20, …");
  REQUIRE(code_points(digest->summary) <= 100);
}

TEST_CASE("digest: booleans and small integers are categories, after strings") {
  const json::array bookings = parse_array(R"([
    {"bookingId": "BK-1", "guests": 2, "paid": true, "roomType": "double"},
    {"bookingId": "BK-2", "guests": 1, "paid": true, "roomType": "single"},
    {"bookingId": "BK-3", "guests": 2, "paid": false, "roomType": "double"},
    {"bookingId": "BK-4", "guests": 4, "paid": true, "roomType": "suite"},
    {"bookingId": "BK-5", "guests": 2, "paid": false, "roomType": "double"},
    {"bookingId": "BK-6", "guests": 10, "paid": true, "roomType": "single"}
  ])");
  const auto digest = digest_array(bookings, "/data/bookings");
  REQUIRE(digest.has_value());
  // Integers order numerically among equal counts (4 before 10), booleans false before true.
  REQUIRE(fields_json(*digest) ==
          R"({"roomType":{"top":{"double":3,"single":2,"suite":1},"distinct":3},)"
          R"("paid":{"top":{"true":4,"false":2},"distinct":2},)"
          R"("guests":{"top":{"2":3,"1":1,"4":1,"10":1},"distinct":4}})");
  REQUIRE(digest->summary == "6 bookings; roomType: double 3, single 2, suite 1");
}

TEST_CASE("digest: identifiers and integers that never repeat are not categories") {
  const json::array bookings = parse_array(R"([
    {"id": 1, "roomId": 12, "hotel_id": 3, "guestID": 7, "bookingNumber": 880011, "floor": 1},
    {"id": 2, "roomId": 12, "hotel_id": 3, "guestID": 7, "bookingNumber": 880012, "floor": 2},
    {"id": 3, "roomId": 14, "hotel_id": 3, "guestID": 8, "bookingNumber": 880013, "floor": 1},
    {"id": 4, "roomId": 14, "hotel_id": 3, "guestID": 9, "bookingNumber": 880010, "floor": 1}
  ])");
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  REQUIRE(fields_json(*digest) == R"({"floor":{"top":{"1":3,"2":1},"distinct":2},)"
                                  R"("bookingNumber":{"min":880010,"max":880013}})");
}

TEST_CASE("digest: number ranges over integers, doubles and both") {
  json::array bookings;
  for (int i = 0; i < 40; ++i) {
    json::object booking;
    booking["nights"] = 1 + (i * 7) % 31;  // 31 distinct: too many for categories
    booking["rate"] = 80.25 + i * 1.5;
    // Integers and doubles mixed, negatives included.
    if (i == 17) {
      booking["adjustment"] = -12.5;
    } else if (i == 23) {
      booking["adjustment"] = 990;
    } else {
      booking["adjustment"] = i % 2 == 0 ? json::value(i) : json::value(i + 0.25);
    }
    bookings.push_back(std::move(booking));
  }
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  REQUIRE(fields_json(*digest) ==
          R"({"nights":{"min":1,"max":31},"rate":{"min":80.25,"max":138.75},)"
          R"("adjustment":{"min":-12.5,"max":990}})");
  REQUIRE(digest->fields.at("nights").at("max").is_int64());
  REQUIRE(digest->fields.at("rate").at("min").is_double());
  // No categorical field: the summary is the count alone.
  REQUIRE(digest->summary == "40 bookings");
}

TEST_CASE("digest: date ranges of dates and date-times, compared as instants") {
  const json::array bookings = parse_array(R"([
    {"checkIn": "2024-05-03", "createdAt": "2024-05-01T23:30:00-02:00", "seen": "2024-05-01"},
    {"checkIn": "2023-12-30", "createdAt": "2024-05-02T00:30:00Z", "seen": "2024-05-02"},
    {"checkIn": "2024-02-29", "createdAt": "2024-04-30T08:15:00.5+02:00", "seen": "soon"},
    {"checkIn": "2024-11-09", "createdAt": "2024-04-30T06:15:00.25Z", "seen": "2024-05-01"}
  ])");
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  // 23:30 at -02:00 is 01:30Z on May 2, later than 00:30Z; 08:15:00.5+02:00 is 06:15:00.5Z.
  const json::object& created = digest->fields.at("createdAt").as_object();
  REQUIRE(created.at("min").as_string() == "2024-04-30T06:15:00.25Z");
  REQUIRE(created.at("max").as_string() == "2024-05-01T23:30:00-02:00");
  const json::object& check_in = digest->fields.at("checkIn").as_object();
  REQUIRE(check_in.at("min").as_string() == "2023-12-30");
  REQUIRE(check_in.at("max").as_string() == "2024-11-09");
  // One value that is not a date: no range; its repeated values make it a category instead.
  REQUIRE(ctxguard::to_json(digest->fields.at("seen")) ==
          R"({"top":{"2024-05-01":2,"2024-05-02":1,"soon":1},"distinct":3})");
}

TEST_CASE("digest: what counts as an ISO 8601 date") {
  const auto is_date_field = [](std::vector<std::string> values) {
    json::array items;
    for (std::string& value : values) items.push_back(json::object{{"at", std::move(value)}});
    const auto digest = digest_array(items, "/events");
    REQUIRE(digest.has_value());
    return digest->fields.contains("at") && digest->fields.at("at").as_object().contains("min");
  };
  REQUIRE(is_date_field({"2024-05-01", "2024-05-01T12:30Z"}));
  REQUIRE(is_date_field({"2024-05-01 12:30:00", "2024-05-01t12:30:00.123456789z"}));
  REQUIRE(is_date_field({"2024-05-01T12:30:00+05:30", "2024-05-01T12:30:00+0530",
                         "2024-05-01T12:30:00-05", "2024-02-29"}));
  REQUIRE_FALSE(is_date_field({"2024-05-01", "2023-02-29"}));  // not a leap year
  REQUIRE_FALSE(is_date_field({"2024-05-01", "2024-13-01"}));  // no 13th month
  REQUIRE_FALSE(is_date_field({"2024-05-01", "2024-05-01T24:00"}));
  REQUIRE_FALSE(is_date_field({"2024-05-01", "2024-05-01T12:30:00+05:"}));
  REQUIRE_FALSE(is_date_field({"2024-05-01", "2024/05/01"}));
  REQUIRE_FALSE(is_date_field({"2024-05-01", "2024-05-01T12"}));
  REQUIRE_FALSE(is_date_field({"2024-05-01", "2024-05-01Z junk"}));

  // The same instant written two ways: min and max do not depend on the items' order.
  const json::array forward =
      parse_array(R"([{"at": "2024-05-01T12:00:00Z"}, {"at": "2024-05-01T14:00:00+02:00"}])");
  const json::array backward =
      parse_array(R"([{"at": "2024-05-01T14:00:00+02:00"}, {"at": "2024-05-01T12:00:00Z"}])");
  const auto a = digest_array(forward, "/events");
  const auto b = digest_array(backward, "/events");
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  REQUIRE(fields_json(*a) == fields_json(*b));
}

TEST_CASE("digest: summary values stay on one line") {
  const json::array rows = parse_array(R"([
    {"remark": ""}, {"remark": ""}, {"remark": ""}, {"remark": "two\nlines"}, {"remark": "two\nlines"}
  ])");
  const auto digest = digest_array(rows, "/rows");
  REQUIRE(digest.has_value());
  REQUIRE(digest->summary == "5 rows; remark: \"\" 3, two lines 2");
  REQUIRE(ctxguard::to_json(digest->fields.at("remark")) ==
          R"({"top":{"":3,"two\nlines":2},"distinct":2})");
}

TEST_CASE("digest: fields in fewer than half of the items are left out") {
  json::array bookings;
  for (int i = 0; i < 10; ++i) {
    json::object booking;
    booking["status"] = i % 3 == 0 ? "cancelled" : "confirmed";
    if (i < 4) booking["discount"] = 10 + i;                                    // 4 of 10
    if (i >= 5) booking["deposit"] = 100 + i;                                   // 5 of 10
    booking["voucher"] = i < 6 ? json::value(nullptr) : json::value("SPRING");  // nulls: absent
    bookings.push_back(std::move(booking));
  }
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  REQUIRE(digest->fields.contains("status"));
  REQUIRE(digest->fields.contains("deposit"));
  REQUIRE_FALSE(digest->fields.contains("discount"));
  REQUIRE_FALSE(digest->fields.contains("voucher"));
}

TEST_CASE("digest: nested values, mixed kinds and long strings leave a field out") {
  json::array bookings;
  for (int i = 0; i < 12; ++i) {
    json::object booking;
    booking["status"] = i % 2 == 0 ? "confirmed" : "pending";
    booking["guest"] = i == 7 ? json::value("unknown") : json::value(json::object{{"name", "A"}});
    booking["channel"] = i == 3 ? json::value(5) : json::value("web");
    booking["remark"] = i % 2 == 0 ? std::string(41, 'x') : std::string("short");
    booking["board"] = i == 11 ? json::value(json::array{"breakfast"}) : json::value("none");
    bookings.push_back(std::move(booking));
  }
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  REQUIRE(fields_json(*digest) == R"({"status":{"top":{"confirmed":6,"pending":6},"distinct":2}})");
}

TEST_CASE("digest: too many distinct values stop the categories but keep the ranges") {
  json::array bookings;
  for (int i = 0; i < 60; ++i) {
    json::object booking;
    booking["city"] = "City " + std::to_string(i % 25);  // 25 distinct > 20
    booking["rooms"] = i % 25;
    booking["country"] = i % 20 == 0 ? "NO" : "PT";
    bookings.push_back(std::move(booking));
  }
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  REQUIRE(fields_json(*digest) ==
          R"({"country":{"top":{"PT":57,"NO":3},"distinct":2},"rooms":{"min":0,"max":24}})");

  DigestLimits wide;
  wide.max_distinct = 25;
  const auto wider = digest_array(bookings, "/bookings", wide);
  REQUIRE(wider.has_value());
  REQUIRE(wider->fields.at("city").at("distinct").as_int64() == 25);
  REQUIRE(wider->fields.at("rooms").at("distinct").as_int64() == 25);
}

TEST_CASE("digest: keys first seen after the sample count when they reach half the items") {
  json::array bookings;
  for (int i = 0; i < 200; ++i) {
    json::object booking;
    booking["status"] = "confirmed";
    if (i >= 80) booking["rating"] = i % 5 + 1;  // 120 of 200, first at item 80
    if (i >= 150) booking["late"] = i % 2 == 0;  // 50 of 200: never half
    bookings.push_back(std::move(booking));
  }
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  REQUIRE(ctxguard::to_json(digest->fields.at("rating")) ==
          R"({"top":{"1":24,"2":24,"3":24,"4":24,"5":24},"distinct":5})");
  REQUIRE_FALSE(digest->fields.contains("late"));
}

TEST_CASE("digest: nullopt when fewer than half of the items are objects") {
  REQUIRE_FALSE(
      digest_array(parse_array(R"([{"a": 1}, {"a": 2}, {"a": 2}, "x", 4, null, [1]])"), "/rows")
          .has_value());
  const auto half =
      digest_array(parse_array(R"([{"a": 1}, "note", {"a": 2}, 7, {"a": 2}, null])"), "/rows");
  REQUIRE(half.has_value());
  // Counted over all the items, described from the objects.
  REQUIRE(half->summary == "6 rows; a: 2 2, 1 1");
  REQUIRE(fields_json(*half) == R"({"a":{"top":{"2":2,"1":1},"distinct":2}})");
}

TEST_CASE("digest: an empty array") {
  const auto digest = digest_array(json::array{}, "/bookings");
  REQUIRE(digest.has_value());
  REQUIRE(digest->summary == "0 bookings");
  REQUIRE(digest->fields.empty());
}

TEST_CASE("digest: the summary noun is the path's last key") {
  const json::array rows = parse_array(R"([{"s": "a"}, {"s": "a"}, {"s": "b"}])");
  const auto noun = [&](std::string_view path) {
    const auto digest = digest_array(rows, path);
    REQUIRE(digest.has_value());
    const std::string& summary = digest->summary;
    return summary.substr(2, summary.find(';') - 2);
  };
  REQUIRE(noun("/bookings") == "bookings");
  REQUIRE(noun("/result/content/0/hotel rooms") == "hotel rooms");
  REQUIRE(noun("/a~1b") == "a/b");
  REQUIRE(noun("/x~0y") == "x~y");
  REQUIRE(noun("/~01") == "~1");  // "~0" first, then a plain "1": not "/"
  REQUIRE(noun("/bookings/3") == "items");
  REQUIRE(noun("") == "items");
  REQUIRE(noun("/") == "items");
}

TEST_CASE("digest: the summary stays within its characters with multibyte values") {
  const json::array bookings = weighted_bookings(
      {"подтверждено", "отменено", "ожидает оплаты", "заселён 😀", "確認済み", "no-show"},
      {9, 7, 5, 3, 2, 1});
  json::array renamed;
  for (const json::value& booking : bookings) {
    renamed.push_back(json::object{{"статус", booking.at("status")}});
  }
  const auto digest = digest_array(renamed, "/бронирования");
  REQUIRE(digest.has_value());
  REQUIRE(digest->summary.rfind("27 бронирования; статус: подтверждено 9, отменено 7, ", 0) == 0);
  REQUIRE(code_points(digest->summary) <= 100);
  REQUIRE(is_valid_utf8(digest->summary));

  for (std::size_t limit = 0; limit <= 110; ++limit) {
    DigestLimits limits;
    limits.summary_chars = limit;
    for (const std::string& path :
         {std::string("/бронирования"), std::string("/b"), "/" + std::string(150, 'n')}) {
      const auto cut = digest_array(renamed, path, limits);
      REQUIRE(cut.has_value());
      INFO("limit " << limit << ": " << cut->summary);
      REQUIRE(code_points(cut->summary) <= limit);
      REQUIRE(is_valid_utf8(cut->summary));
      // A value list is cut after a whole "value count" pair, never inside one.
      const std::size_t colon = cut->summary.find("статус: ");
      if (colon != std::string::npos) {
        const std::string last = cut->summary.substr(cut->summary.rfind(' ') + 1);
        REQUIRE((last == "…" || std::all_of(last.begin(), last.end(),
                                            [](char c) { return c >= '0' && c <= '9'; })));
      }
    }
  }
}

TEST_CASE("digest: max_fields is respected, the most useful first") {
  const json::array bookings = parse_array(kBookings);
  DigestLimits limits;
  limits.max_fields = 2;
  const auto digest = digest_array(bookings, "/bookings", limits);
  REQUIRE(digest.has_value());
  REQUIRE(digest->fields.size() == 2);
  REQUIRE(digest->fields.begin()->key() == "status");
  REQUIRE((digest->fields.begin() + 1)->key() == "checkIn");

  limits.max_fields = 0;
  const auto none = digest_array(bookings, "/bookings", limits);
  REQUIRE(none.has_value());
  REQUIRE(none->fields.empty());
  REQUIRE(none->summary == "8 bookings; status: confirmed 4, cancelled 2, pending 2");

  limits = DigestLimits{};
  limits.top_values = 2;
  const auto two = digest_array(bookings, "/bookings", limits);
  REQUIRE(two.has_value());
  REQUIRE(ctxguard::to_json(two->fields.at("status")) ==
          R"({"top":{"confirmed":4,"cancelled":2},"distinct":3})");
  REQUIRE(two->summary == "8 bookings; status: confirmed 4, cancelled 2, …");
}

TEST_CASE("digest: deterministic, and independent of the items' order") {
  const std::vector<std::string> statuses = {"confirmed", "cancelled", "pending", "no_show"};
  json::array bookings;
  for (int i = 0; i < 1000; ++i) {
    json::object booking;
    booking["id"] = 70000 + i;
    booking["status"] = statuses[static_cast<std::size_t>((i * 7) % 4)];
    booking["checkIn"] = "2024-0" + std::to_string(1 + i % 9) + "-1" + std::to_string(i % 10);
    booking["total"] = i % 3 == 0 ? json::value(100 + i % 50) : json::value(99.5 + i % 70);
    booking["paid"] = i % 5 != 0;
    bookings.push_back(std::move(booking));
  }
  const auto first = digest_array(bookings, "/bookings");
  const auto second = digest_array(bookings, "/bookings");
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  REQUIRE(first->summary == second->summary);
  REQUIRE(fields_json(*first) == fields_json(*second));

  json::array reversed(bookings.rbegin(), bookings.rend());
  const auto backwards = digest_array(reversed, "/bookings");
  REQUIRE(backwards.has_value());
  REQUIRE(backwards->summary == first->summary);
  REQUIRE(fields_json(*backwards) == fields_json(*first));
}

TEST_CASE("digest: a field naming a state or kind leads the summary, ahead of a channel") {
  // 20 bookings: the channel comes first and has fewer values; the status is what is asked about.
  json::array bookings;
  const char* statuses[] = {"confirmed",  "cancelled",   "pending",
                            "checked_in", "checked_out", "no_show"};
  for (int i = 0; i < 20; ++i) {
    bookings.push_back(json::object{{"channel", i % 2 == 0 ? "web" : "phone"},
                                    {"bookingStatus", statuses[i % 6]},
                                    {"nights", 1 + i % 3}});
  }
  const auto digest = digest_array(bookings, "/bookings");
  REQUIRE(digest.has_value());
  CHECK(digest->summary.rfind("20 bookings; bookingStatus: ", 0) == 0);
  CHECK(digest->fields.begin()->key() == "bookingStatus");

  // A state that never varies says nothing: the channel leads then.
  json::array settled;
  for (int i = 0; i < 10; ++i) {
    settled.push_back(json::object{{"channel", i % 2 == 0 ? "web" : "phone"}, {"state", "done"}});
  }
  CHECK(digest_array(settled, "/bookings")->summary.rfind("10 bookings; channel: ", 0) == 0);
}
