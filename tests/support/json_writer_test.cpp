#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

using ctxguard::parse_json;
using ctxguard::to_json;
namespace json = boost::json;

TEST_CASE("json writer: pretty JSON comes out minified and JSON-equal") {
  const std::string pretty =
      "{\n  \"a\": [\n    1,\n    2.5,\n    true,\n    null\n  ],\n  \"b\": {}\n}";
  const auto value = parse_json(pretty);
  REQUIRE(value.has_value());
  REQUIRE(to_json(*value) == R"({"a":[1,2.5,true,null],"b":{}})");
}

TEST_CASE("json writer: strings get the minimal escapes and UTF-8 is copied") {
  const boost::json::value text = "q\" b\\ \b\f\n\r\t \x01\x1f / é 漢";
  REQUIRE(to_json(text) == "\"q\\\" b\\\\ \\b\\f\\n\\r\\t \\u0001\\u001f / é 漢\"");
  const auto back = parse_json(to_json(text));
  REQUIRE(back.has_value());
  REQUIRE(*back == text);
}

TEST_CASE("json writer: doubles use the shortest form, not Boost's 1.5E0") {
  REQUIRE(to_json(boost::json::value(1.5)) == "1.5");
  REQUIRE(to_json(boost::json::value(1e21)) == "1e+21");
  REQUIRE(to_json(boost::json::value(-0.0)) == "-0.0");
  REQUIRE(to_json(boost::json::value(5.0)) == "5.0");
  REQUIRE(parse_json("5.0")->is_double());
}

TEST_CASE("json writer: pretty JSON for files people edit, member order kept") {
  const json::value value = json::parse(
      R"({"mcpServers":{"fs":{"command":"npx","args":["-y","x"],"env":{}}},"empty":[],"n":1.5})");
  CHECK(ctxguard::to_pretty_json(value) ==
        "{\n"
        "  \"mcpServers\": {\n"
        "    \"fs\": {\n"
        "      \"command\": \"npx\",\n"
        "      \"args\": [\n"
        "        \"-y\",\n"
        "        \"x\"\n"
        "      ],\n"
        "      \"env\": {}\n"
        "    }\n"
        "  },\n"
        "  \"empty\": [],\n"
        "  \"n\": 1.5\n"
        "}\n");
  CHECK(ctxguard::to_pretty_json(json::parse(R"({"a":[1]})"), 4) ==
        "{\n    \"a\": [\n        1\n    ]\n}\n");
  CHECK(json::parse(ctxguard::to_pretty_json(value)) == value);
}

TEST_CASE("json_longer_than agrees with the written size at every limit") {
  const char* const documents[] = {
      R"({})",
      R"([])",
      R"("")",
      R"({"a":[1,2.5,-3e300,1e999,true,null],"b\n\u0001":"q\"uo\\te\ttab","名前":{"x":[{}]}})",
      R"([[[[["deep"]]]],{"k":"v","l":[0.1,5.0,18446744073709551615,-9223372036854775808]}])",
  };
  for (const char* document : documents) {
    const auto value = parse_json(document);
    REQUIRE(value.has_value());
    const std::size_t size = to_json(*value).size();
    CAPTURE(document, size);
    for (std::size_t limit = 0; limit <= size + 2; ++limit) {
      CAPTURE(limit);
      CHECK(ctxguard::json_longer_than(*value, limit) == (size > limit));
    }
  }
}
