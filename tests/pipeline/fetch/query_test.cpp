#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "pipeline/fetch/query.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using ctxguard::pipeline::kMaxQueryBytes;
using ctxguard::pipeline::kMaxQueryTerms;
using ctxguard::pipeline::Query;
using Op = Query::Op;

Query query(std::string_view text) {
  auto parsed = Query::parse(text);
  if (!parsed) FAIL("`" << text << "` did not parse: " << parsed.error().message);
  return *std::move(parsed);
}

std::string error_of(std::string_view text) {
  auto parsed = Query::parse(text);
  INFO("query: " << text);
  REQUIRE_FALSE(parsed.has_value());
  return std::move(parsed.error().message);
}

// Parsed as the cache parses results, so doubles are the ones the model was shown.
// (Throws on invalid JSON rather than REQUIRE: the fixtures below are built before any test.)
json::value item(std::string_view text) { return ctxguard::parse_json(text).value(); }

bool hit(std::string_view text, const json::value& value) { return query(text).matches(value); }

using Path = std::vector<std::string>;

const json::value kBooking = item(R"({
  "id": "BK100007", "status": "Cancelled", "checkIn": "2026-11-17",
  "guest": {"name": "Anna Smith", "email": "anna.smith@example.com",
            "address": {"city": "Paris", "country": "FR"}},
  "nights": 3, "total": 361.5, "paid": true, "voucher": null,
  "tags": ["vip", "late-checkin"], "rooms": []
})");

const json::value kIssue = item(R"({
  "number": 1347, "title": "Crash when the config file is missing", "state": "open",
  "user": {"login": "octocat", "site_admin": false},
  "labels": [{"name": "bug", "color": "d73a4a"}, {"name": "good first issue", "color": "7057ff"}],
  "comments": 12, "locked": false, "milestone": null,
  "body": "Steps:\n1. delete ~/.tool/config.yml\n2. run `tool sync`\nIt says \"config not found\" and exits 2."
})");

}  // namespace

TEST_CASE("query: words and field terms parse into operators, paths and lowered values") {
  const Query parsed = query("Confirmed guest.name~Smith status!=Cancelled total=120.5");
  const auto& terms = parsed.terms();
  REQUIRE(terms.size() == 4);
  CHECK(terms[0].op == Op::kAnywhere);
  CHECK(terms[0].field.empty());
  CHECK(terms[0].value == "confirmed");
  CHECK(terms[0].text == "confirmed");
  CHECK(terms[1].op == Op::kContains);
  CHECK(terms[1].field == Path{"guest", "name"});
  CHECK(terms[1].value == "smith");
  CHECK(terms[1].text == "guest.name~smith");
  CHECK(terms[2].op == Op::kNotEquals);
  CHECK(terms[2].field == Path{"status"});
  CHECK(terms[2].value == "cancelled");
  CHECK(terms[2].text == "status!=cancelled");
  CHECK(terms[3].op == Op::kEquals);
  CHECK(terms[3].field == Path{"total"});
  CHECK(terms[3].value == "120.5");
  // Field names keep their case: they are keys, matched exactly.
  CHECK(query("checkIn=2026-11-17").terms()[0].field == Path{"checkIn"});
  // Any run of spaces, tabs or newlines separates terms.
  CHECK(query("  error\t\tpayments \n timeout ").terms().size() == 3);
  // A bare word keeps its dots: only field terms are paths.
  const Query word = query("example.com");
  CHECK(word.terms()[0].op == Op::kAnywhere);
  CHECK(word.terms()[0].field.empty());
  CHECK(word.terms()[0].value == "example.com");
}

TEST_CASE("query: double quotes group a phrase or a value, and a backslash escapes a quote") {
  const Query phrase = query(R"(level=error "Connection refused")");
  REQUIRE(phrase.terms().size() == 2);
  CHECK(phrase.terms()[1].op == Op::kAnywhere);
  CHECK(phrase.terms()[1].value == "connection refused");

  const Query value = query(R"(status="In Progress")");
  REQUIRE(value.terms().size() == 1);
  CHECK(value.terms()[0].op == Op::kEquals);
  CHECK(value.terms()[0].field == Path{"status"});
  CHECK(value.terms()[0].value == "in progress");
  CHECK(value.terms()[0].text == "status=in progress");

  CHECK(query(R"("He said \"stop\" twice")").terms()[0].value == R"(he said "stop" twice)");
  CHECK(query(R"(path="C:\\Temp\\")").terms()[0].value == R"(c:\temp\)");
  // Other backslashes are kept: Windows paths and regex-looking text read as written.
  CHECK(query(R"(path~"C:\Temp\logs")").terms()[0].value == R"(c:\temp\logs)");
  // Outside quotes a backslash is an ordinary character.
  CHECK(query(R"(a\b)").terms()[0].value == R"(a\b)");

  // Quoted operators and dots are text: a word, or one key that contains a dot.
  const Query literal = query(R"("a=b" "k8s.io/name"=web guest."full name"~Anna)");
  REQUIRE(literal.terms().size() == 3);
  CHECK(literal.terms()[0].op == Op::kAnywhere);
  CHECK(literal.terms()[0].value == "a=b");
  CHECK(literal.terms()[1].op == Op::kEquals);
  CHECK(literal.terms()[1].field == Path{"k8s.io/name"});
  CHECK(literal.terms()[2].field == Path{"guest", "full name"});
  CHECK(literal.terms()[2].value == "anna");

  // A quote inside a word is an ordinary character; text after a closing quote continues the term.
  CHECK(query(R"(it"s)").terms()[0].value == R"(it"s)");
  CHECK(query(R"("abc"def)").terms()[0].value == "abcdef");
  CHECK(query(R"(name=O"Brien)").terms()[0].value == R"(o"brien)");
}

TEST_CASE("query: the operator is the first unquoted !=, = or ~ after a non-empty field") {
  const auto only = [](std::string_view text) {
    const Query parsed = query(text);
    REQUIRE(parsed.terms().size() == 1);
    return parsed.terms()[0];
  };
  Query::Term term = only("a=b=c");
  CHECK(term.op == Op::kEquals);
  CHECK(term.field == Path{"a"});
  CHECK(term.value == "b=c");
  term = only("url~?page=2");
  CHECK(term.op == Op::kContains);
  CHECK(term.value == "?page=2");
  term = only("x=~y");
  CHECK(term.op == Op::kEquals);
  CHECK(term.value == "~y");
  term = only("note~!=");
  CHECK(term.op == Op::kContains);
  CHECK(term.value == "!=");
  term = only("a!b=c");  // '!' alone is no operator
  CHECK(term.op == Op::kEquals);
  CHECK(term.field == Path{"a!b"});
  term = only("wow!");
  CHECK(term.op == Op::kAnywhere);
  CHECK(term.value == "wow!");
  term = only("guest.address.city!=Paris");
  CHECK(term.op == Op::kNotEquals);
  CHECK(term.field == Path{"guest", "address", "city"});
  CHECK(term.value == "paris");
  // Dots after the operator belong to the value.
  term = only("guest.email~smith@example.com");
  CHECK(term.field == Path{"guest", "email"});
  CHECK(term.value == "smith@example.com");
}

TEST_CASE("query: malformed queries get a one-line message that says what to do") {
  const auto check_message = [](const std::string& message) {
    INFO(message);
    CHECK(message.find('\n') == std::string::npos);
    REQUIRE_FALSE(message.empty());
    CHECK(message.back() == '.');
  };
  for (const std::string_view empty : {"", "   ", "\t\n"}) {
    const std::string message = error_of(empty);
    check_message(message);
    CHECK(message.find("empty") != std::string::npos);
  }
  for (const std::string_view unclosed :
       {R"("connection refused)", R"(status="in progress)", R"(ok "abc\")", R"(a "b" "c)"}) {
    const std::string message = error_of(unclosed);
    check_message(message);
    CHECK(message.find("quote is not closed") != std::string::npos);
  }

  const std::string longest(kMaxQueryBytes, 'x');
  CHECK(query(longest).terms().size() == 1);
  const std::string too_long = error_of(longest + "x");
  check_message(too_long);
  CHECK(too_long.find("1024") != std::string::npos);

  std::string sixteen;
  for (std::size_t i = 0; i < kMaxQueryTerms; ++i) sixteen += "w" + std::to_string(i) + " ";
  CHECK(query(sixteen).terms().size() == 16);
  const std::string too_many = error_of(sixteen + "w16");
  check_message(too_many);
  CHECK(too_many.find("16") != std::string::npos);

  for (const std::string_view empty_part :
       {"=x", "~smith", "!=cancelled", "status=", "status!=", "guest.name~", ".name=x",
        "guest..name=x", "guest.=x", R"(""=x)", R"(status="")", R"("")", "ok \"\" ok"}) {
    const std::string message = error_of(empty_part);
    check_message(message);
    CHECK(message.find("empty") != std::string::npos);
  }
  // The message names the term, so the model sees which one to fix.
  CHECK(error_of("level=error =x").find("\"=x\"") != std::string::npos);
  // Quoting is the way to look for such text.
  CHECK(query(R"("=x")").terms()[0].value == "=x");
  // A quoted newline does not break the message onto two lines.
  check_message(error_of("\"a\nb\"=  "));
}

TEST_CASE("query: a bare word matches any scalar value at any depth, never a key") {
  CHECK(hit("crash", kIssue));
  CHECK(hit("OCTOCAT", kIssue));               // nested object, case-insensitive
  CHECK(hit("\"good first issue\"", kIssue));  // inside an array of objects
  CHECK(hit("d73a4a", kIssue));
  CHECK(hit("1347", kIssue));  // numbers by their JSON text
  CHECK(hit("134", kIssue));   // ... as substrings, like any text
  CHECK(hit("false", kIssue));
  CHECK(hit("null", kIssue));
  CHECK(hit("\"config not found\"", kIssue));    // decoded string text, not its escaped form
  CHECK(hit("\"~/.tool/config.yml\"", kIssue));  // quoted: a leading ~ would be an operator
  CHECK_FALSE(hit("title", kIssue));
  CHECK_FALSE(hit("labels", kIssue));
  CHECK_FALSE(hit("site_admin", kIssue));
  CHECK_FALSE(hit("\\\"config", kIssue));  // the backslash of the JSON escape is not in the text
  CHECK_FALSE(hit("wontfix", kIssue));
  CHECK_FALSE(hit("true", kIssue));
  CHECK(hit("true", kBooking));
  CHECK(hit("361.5", kBooking));
  CHECK(hit("-11-", kBooking));
  CHECK_FALSE(hit("361.50", kBooking));
}

TEST_CASE("query: field=value compares whole strings case-insensitively") {
  CHECK(hit("status=cancelled", kBooking));
  CHECK(hit("status=CANCELLED", kBooking));
  CHECK(hit("id=bk100007", kBooking));
  CHECK(hit("checkIn=2026-11-17", kBooking));
  CHECK_FALSE(hit("status=cancel", kBooking));
  CHECK_FALSE(hit("status=cancelled!", kBooking));
  CHECK_FALSE(hit("status=confirmed", kBooking));
  CHECK(hit("status!=confirmed", kBooking));
  CHECK_FALSE(hit("status!=Cancelled", kBooking));
  // Keys are matched exactly, as the model sees them in the result.
  CHECK_FALSE(hit("Status=cancelled", kBooking));
  CHECK_FALSE(hit("checkin=2026-11-17", kBooking));
  // A field holding an object equals no text; != is then true.
  CHECK_FALSE(hit("guest=paris", kBooking));
  CHECK(hit("guest!=paris", kBooking));
  // Strings with escapes compare by their decoded text.
  const json::value quoted = item(R"({"title":"Say \"hi\""})");
  CHECK(hit(R"(title="say \"hi\"")", quoted));
}

TEST_CASE("query: field~text finds text inside the field, or anywhere inside an object") {
  CHECK(hit("guest.name~smith", kBooking));
  CHECK(hit("guest.name~SMI", kBooking));
  CHECK(hit("guest.name~\"anna smith\"", kBooking));
  CHECK(hit("guest.email~@example.com", kBooking));
  CHECK_FALSE(hit("guest.name~jones", kBooking));
  CHECK_FALSE(hit("guest.name~paris", kBooking));  // in another field
  CHECK(hit("guest~paris", kBooking));             // the object reached contains it
  CHECK(hit("guest.address~fr", kBooking));
  CHECK_FALSE(hit("guest~name", kBooking));  // keys are not text
  CHECK(hit("total~361", kBooking));
  CHECK(hit("total~.5", kBooking));
  CHECK(hit("paid~ru", kBooking));
  CHECK(hit("voucher~nul", kBooking));
  CHECK_FALSE(hit("nights~4", kBooking));
  CHECK_FALSE(hit("missing~a", kBooking));
}

TEST_CASE("query: numbers compare by the JSON text ctxguard writes for them") {
  // 42 is an integer; 42.0 and 4.2e1 are the same double, which ctxguard (and the page the
  // model read) writes as 42.0. Equality is on that text, so the model matches what it saw.
  const json::value integer = item(R"({"count":42})");
  const json::value with_fraction = item(R"({"count":42.0})");
  const json::value exponent = item(R"({"count":4.2e1})");
  const json::value text = item(R"({"count":"42"})");
  CHECK(hit("count=42", integer));
  CHECK_FALSE(hit("count=42", with_fraction));
  CHECK_FALSE(hit("count=42", exponent));
  CHECK(hit("count=42", text));  // a string "42" reads 42 too
  CHECK_FALSE(hit("count=42.0", integer));
  CHECK(hit("count=42.0", with_fraction));
  CHECK(hit("count=42.0", exponent));
  CHECK_FALSE(hit("count=42.0", text));
  CHECK_FALSE(hit("count=4.2e1", integer));
  CHECK_FALSE(hit("count=4.2e1", with_fraction));
  CHECK_FALSE(hit("count=4.2e1", exponent));
  CHECK(hit("count!=42.0", integer));
  CHECK(hit("count!=42", with_fraction));
  // Substrings of that text: 42 is inside 42.0.
  CHECK(hit("count~42", with_fraction));
  CHECK(hit("42", exponent));
  CHECK(hit("count~.0", exponent));
  CHECK_FALSE(hit("count~.0", integer));

  CHECK(hit("n=-7", item(R"({"n":-7})")));
  CHECK(hit("n=18446744073709551615", item(R"({"n":18446744073709551615})")));
  CHECK(hit("n=-9223372036854775808", item(R"({"n":-9223372036854775808})")));
  CHECK(hit("x=1e+21", item(R"({"x":1e21})")));
  CHECK(hit("x=1E+21", item(R"({"x":1E21})")));  // values are lowered like any text
  CHECK_FALSE(hit("x=1e21", item(R"({"x":1e21})")));
  CHECK(hit("x=0.1", item(R"({"x":1e-1})")));
  CHECK(hit("x=1e999", item(R"({"x":2e720})")));  // infinity, as ctxguard writes it
  CHECK(hit("x=-1e999", item(R"({"x":-2e720})")));
  CHECK(hit("x=-0.0", item(R"({"x":-0.0})")));
}

TEST_CASE("query: a number's text is exactly what write_json_scalar writes") {
  for (const std::string_view number :
       {"0", "-1", "9223372036854775807", "18446744073709551615", "0.0", "100.0", "120.5",
        "1238.8249400479617", "5e-324", "1.7976931348623157e308", "1e16", "123456789012345680000",
        "1e22", "-2.5e-8", "0.30000000000000004", "3.0e2"}) {
    const json::value value = item("{\"x\":" + std::string(number) + "}");
    std::string written;
    ctxguard::write_json_scalar(written, value.at("x"));
    INFO(number << " is written " << written);
    CHECK(hit("x=" + written, value));
    CHECK(hit(written, value));
    CHECK_FALSE(hit("x!=" + written, value));
  }
}

TEST_CASE("query: booleans and null compare by their JSON text") {
  CHECK(hit("paid=true", kBooking));
  CHECK(hit("paid=TRUE", kBooking));
  CHECK_FALSE(hit("paid=false", kBooking));
  CHECK(hit("paid!=false", kBooking));
  CHECK_FALSE(hit("paid=1", kBooking));
  CHECK(hit("voucher=null", kBooking));
  CHECK(hit("voucher=Null", kBooking));
  CHECK_FALSE(hit("voucher!=null", kBooking));
  CHECK(hit("user.site_admin=false", kIssue));
  CHECK(hit("milestone=null", kIssue));
  // A missing field is not null: nothing is reached.
  CHECK_FALSE(hit("coupon=null", kBooking));
  CHECK(hit("coupon!=null", kBooking));
  // Strings that read like them compare the same way.
  CHECK(hit("flag=true", item(R"({"flag":"True"})")));
}

TEST_CASE("query: dotted fields reach into nested objects; missing ones only match !=") {
  CHECK(hit("guest.address.city=paris", kBooking));
  CHECK(hit("guest.address.country!=DE", kBooking));
  CHECK_FALSE(hit("guest.address.city=london", kBooking));
  CHECK_FALSE(hit("guest.phone=123", kBooking));
  CHECK(hit("guest.phone!=123", kBooking));
  CHECK_FALSE(hit("guest.name.first=anna", kBooking));  // through a string: nothing there
  CHECK(hit("guest.name.first!=anna", kBooking));
  CHECK_FALSE(hit("address.city=paris", kBooking));  // paths start at the item
  CHECK(hit("address.city!=paris", kBooking));
  CHECK(hit("user.login=octocat", kIssue));
}

TEST_CASE("query: a field that leads to an array matches when any element does") {
  CHECK(hit("tags=vip", kBooking));
  CHECK(hit("tags=VIP", kBooking));
  CHECK(hit("tags~late", kBooking));
  CHECK_FALSE(hit("tags=late", kBooking));
  CHECK_FALSE(hit("tags!=vip", kBooking));  // one element equals
  CHECK(hit("tags!=gold", kBooking));
  // An empty array reaches nothing.
  CHECK_FALSE(hit("rooms=101", kBooking));
  CHECK(hit("rooms!=101", kBooking));
  // Arrays of objects: the path goes on into each element.
  CHECK(hit("labels.name=bug", kIssue));
  CHECK(hit("labels.name=\"good first issue\"", kIssue));
  CHECK(hit("labels.color~7057", kIssue));
  CHECK_FALSE(hit("labels.name=enhancement", kIssue));
  CHECK_FALSE(hit("labels.name!=bug", kIssue));
  CHECK(hit("labels.name!=enhancement", kIssue));
  CHECK(hit("labels~first", kIssue));  // objects in the array contain the text
  // Arrays of arrays, and arrays on the way and at the end of a longer path.
  const json::value order = item(R"({
    "order": "SO-2231",
    "shipments": [{"parcels": [{"sku": ["A-100", "B-220"]}, {"sku": "C-310"}]},
                  {"parcels": []}],
    "grid": [["x", "y"], ["z", ["deep", 7]]]
  })");
  CHECK(hit("shipments.parcels.sku=b-220", order));
  CHECK(hit("shipments.parcels.sku=c-310", order));
  CHECK_FALSE(hit("shipments.parcels.sku=d-400", order));
  CHECK(hit("shipments.parcels.sku!=d-400", order));
  CHECK(hit("grid=deep", order));
  CHECK(hit("grid=7", order));
  CHECK(hit("grid~ee", order));
  CHECK_FALSE(hit("grid.x=y", order));
}

TEST_CASE("query: items that are not objects have no fields") {
  const json::value text = item(R"("Anna Smith, room 12")");
  CHECK(hit("smith", text));
  CHECK_FALSE(hit("name=smith", text));
  CHECK_FALSE(hit("name~smith", text));
  CHECK(hit("name!=smith", text));
  const json::value number = item("42");
  CHECK(hit("42", number));
  CHECK_FALSE(hit("value=42", number));
  CHECK(hit("value!=42", number));
  // An array item is not an object either, even one holding objects.
  const json::value row = item(R"([{"name": "Anna"}, 3])");
  CHECK(hit("anna", row));
  CHECK_FALSE(hit("name=anna", row));
  CHECK(hit("name!=anna", row));
  CHECK(hit("null", item("null")));
  CHECK(hit("x!=1", item("null")));
}

TEST_CASE("query: case-insensitivity is ASCII only; UTF-8 is matched byte for byte") {
  const json::value guest =
      item(R"({"name": "ÉMILE Durand", "city": "Zürich", "street": "Hauptstraße 5",
               "note": "需要 late check-in"})");
  CHECK(query("city=ZÜRICH").terms()[0].value == "zÜrich");  // only ASCII letters lowered
  CHECK(hit("city=zürich", guest));
  CHECK(hit("city=ZüRICH", guest));
  CHECK_FALSE(hit("city=ZÜRICH", guest));  // Ü and ü are different bytes
  CHECK(hit("city~zür", guest));
  CHECK(hit("name~ÉMILE", guest));
  CHECK(hit("name~Émile", guest));
  CHECK_FALSE(hit("name~émile", guest));
  CHECK(hit("DURAND", guest));
  CHECK(hit("street~straße", guest));
  CHECK_FALSE(hit("street~strasse", guest));
  CHECK(hit("需要", guest));
  CHECK(hit("note~\"需要 LATE\"", guest));
}

TEST_CASE("query: every term must match") {
  const json::value logs = item(R"([
    {"ts": "2026-01-12T10:04:11Z", "level": "ERROR", "service": "payments",
     "message": "connection refused by 10.0.3.7:5432", "attempt": 3},
    {"ts": "2026-01-12T10:04:12Z", "level": "WARN", "service": "payments",
     "message": "retrying after connection refused", "attempt": 4},
    {"ts": "2026-01-12T10:04:15Z", "level": "ERROR", "service": "search",
     "message": "Connection refused by opensearch:9200", "attempt": 1},
    {"ts": "2026-01-12T10:05:00Z", "level": "INFO", "service": "payments",
     "message": "connected to 10.0.3.7:5432"}
  ])");
  const auto count = [&](std::string_view text) {
    const Query parsed = query(text);
    const json::array& records = logs.as_array();
    return std::count_if(records.begin(), records.end(),
                         [&](const json::value& record) { return parsed.matches(record); });
  };
  CHECK(count(R"("connection refused")") == 3);
  CHECK(count(R"(level=error "connection refused")") == 2);
  CHECK(count(R"(level=error service=payments "connection refused")") == 1);
  CHECK(count(R"(level=error service=payments "connection refused" attempt=4)") == 0);
  CHECK(count("service=payments level!=error") == 2);
  CHECK(count("attempt!=3 10.0.3.7") == 1);
  CHECK(count("payments attempt!=3") == 2);  // the INFO record has no attempt
  CHECK(count("message~refused message~opensearch") == 1);
  CHECK(count("ts~2026-01-12 ts~10:04") == 3);
}

TEST_CASE("query: over text lines every term is a plain substring, field syntax included") {
  const Query errors = query(R"(ERROR "connection refused")");
  CHECK(errors.matches_line("2026-01-12 10:04:11 error payments: Connection refused by db:5432"));
  CHECK_FALSE(errors.matches_line("2026-01-12 10:04:11 ERROR payments: timeout after 30s"));
  CHECK_FALSE(errors.matches_line("2026-01-12 10:04:11 WARN payments: connection refused"));

  const Query field = query("level=error");
  CHECK(field.matches_line("ts=2026-01-12T10:04:11Z level=ERROR service=payments"));
  CHECK_FALSE(field.matches_line("{\"level\": \"error\"}"));  // text, not a field lookup

  // Quotes are removed, escapes resolved; the rest is read as written.
  CHECK(query(R"(status="In Progress")").matches_line("| 4411 | status=in progress | anna |"));
  CHECK(query(R"("say \"hi\"")").matches_line(R"(then SAY "hi" again)"));
  CHECK(query("guest.name~smith").matches_line("GUEST.NAME~SMITH"));
  CHECK(query("Zürich").matches_line("Hotel in zürich"));
  CHECK_FALSE(query("Zürich").matches_line("Hotel in ZÜRICH"));
  CHECK(query("a").matches_line("A"));
  CHECK_FALSE(query("ab").matches_line("a"));
  CHECK_FALSE(query("x").matches_line(""));
}

TEST_CASE("query: items nested as deep as the reader allows are searched without trouble") {
  constexpr std::size_t kDepth = 2000;  // an object and an array a level: 4000 < kMaxJsonDepth
  std::string text;
  for (std::size_t i = 0; i < kDepth; ++i) text += "{\"next\":[";
  text += "\"needle in a haystack\"";
  for (std::size_t i = 0; i < kDepth; ++i) text += "]}";
  const json::value deep = item(text);
  CHECK(hit("haystack", deep));
  CHECK(hit("next~needle", deep));  // the object reached contains it, far down
  CHECK(hit("next.next.next~needle", deep));
  CHECK_FALSE(hit("next=needle", deep));
  CHECK_FALSE(hit("straw", deep));
}
