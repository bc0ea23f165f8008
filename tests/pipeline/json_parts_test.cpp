#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "pipeline/json_parts.hpp"

namespace json = boost::json;
using ctxguard::pipeline::kNotContent;
using ctxguard::pipeline::parse_text_json;
using ctxguard::pipeline::result_tokens;
using ctxguard::pipeline::ResultParts;
using ctxguard::pipeline::split_result;
using ctxguard::pipeline::StructuredRelation;

namespace {

constexpr std::size_t kNoLimit = std::size_t(1) << 30;

json::object text_item(std::string_view text) {
  return json::object{{"type", "text"}, {"text", text}};
}

ResultParts split(const json::object& result) {
  return split_result(result, *result_tokens(result), true, kNoLimit);
}

}  // namespace

TEST_CASE("json parts: a result without a content array is no tool result") {
  REQUIRE_FALSE(result_tokens(json::object{{"contents", json::array{}}}).has_value());
  REQUIRE_FALSE(result_tokens(json::object{{"content", "text"}}).has_value());
}

TEST_CASE("json parts: tokens count text items and structuredContent, nothing else") {
  const json::object result{
      {"content",
       json::array{text_item("hello world"), json::object{{"type", "image"}, {"data", "AAAA"}},
                   text_item("more words here")}},
      {"structuredContent", json::object{{"a", 1}}}};
  const auto tokens = result_tokens(result);
  REQUIRE(tokens.has_value());
  REQUIRE(tokens->items.size() == 3);
  REQUIRE(tokens->items[0] > 0);
  REQUIRE(tokens->items[1] == 0);  // an image is not counted
  REQUIRE(tokens->items[2] > 0);
  REQUIRE(tokens->structured > 0);
  REQUIRE(tokens->total == tokens->items[0] + tokens->items[2] + tokens->structured);
}

TEST_CASE("json parts: text holding an object or array is a JSON part, other text is not") {
  const json::object result{
      {"content", json::array{text_item(R"(  {"rows": [1, 2]})"), text_item("[1, 2, 3]"),
                              text_item("42"), text_item("{not json"), text_item("plain")}}};
  const ResultParts parts = split(result);
  REQUIRE(parts.relation == StructuredRelation::kAbsent);
  REQUIRE(parts.parts.size() == 5);
  REQUIRE(parts.parts[0].is_json);
  REQUIRE(parts.parts[0].json.at("rows").as_array().size() == 2);
  REQUIRE(parts.parts[1].is_json);
  REQUIRE_FALSE(parts.parts[2].is_json);  // a scalar stays text
  REQUIRE_FALSE(parts.parts[3].is_json);
  REQUIRE_FALSE(parts.parts[4].is_json);
  REQUIRE(parts.parts[4].content_index == 4);
  REQUIRE(parts.parts[4].text == "plain");
}

TEST_CASE("json parts: structuredContent equal to a text's JSON is its mirror") {
  const json::object result{
      {"content", json::array{text_item("note"), text_item(R"({"b": [1, 2], "a": "x"})")}},
      {"structuredContent", json::object{{"a", "x"}, {"b", json::array{1, 2}}}}};
  const ResultParts parts = split(result);
  REQUIRE(parts.relation == StructuredRelation::kMirror);
  REQUIRE(parts.related_part == 1);
  REQUIRE(parts.parts.size() == 2);  // the mirror is not a part of its own
}

TEST_CASE("json parts: structuredContent holding a text as a member wraps it") {
  const std::string log = "line one\nline two\n";
  const json::object result{{"content", json::array{text_item(log)}},
                            {"structuredContent", json::object{{"content", log}}}};
  const ResultParts parts = split(result);
  REQUIRE(parts.relation == StructuredRelation::kWrapper);
  REQUIRE(parts.related_part == 0);
  REQUIRE(parts.parts.size() == 1);
}

TEST_CASE("json parts: any other structuredContent is a part of its own, the last") {
  const json::object result{{"content", json::array{text_item("Found 2 rows.")}},
                            {"structuredContent", json::array{1, 2}}};
  const ResultParts parts = split(result);
  REQUIRE(parts.relation == StructuredRelation::kIndependent);
  REQUIRE(parts.related_part == 1);
  REQUIRE(parts.parts.size() == 2);
  REQUIRE(parts.parts[1].content_index == kNotContent);
  REQUIRE(parts.parts[1].is_json);
  REQUIRE(parts.parts[1].json == json::array{1, 2});

  const json::object scalar{{"content", json::array{text_item("42")}}, {"structuredContent", 42}};
  const ResultParts scalar_parts = split(scalar);
  REQUIRE(scalar_parts.relation == StructuredRelation::kIndependent);
  REQUIRE_FALSE(scalar_parts.parts.back().is_json);  // priced, never paginated
}

TEST_CASE("json parts: a text too large to parse within the limit stays text") {
  std::string numbers = "[";
  for (int i = 0; i < 2000; ++i) numbers += (i == 0 ? "" : ",") + std::to_string(i % 10);
  numbers += "]";
  REQUIRE(parse_text_json(numbers, kNoLimit).has_value());
  REQUIRE_FALSE(parse_text_json(numbers, 4096).has_value());
  const json::object result{{"content", json::array{text_item(numbers)}}};
  const ResultParts parts = split_result(result, *result_tokens(result), true, 4096);
  REQUIRE_FALSE(parts.parts.front().is_json);
}
