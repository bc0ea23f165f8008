#include "jsonrpc/message.hpp"

#include <optional>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

using namespace ctxguard;
using jsonrpc::Kind;

TEST_CASE("message: a request has a method and an id, kept with its JSON type") {
  auto message = jsonrpc::parse_message(R"({"jsonrpc":"2.0","id":"7","method":"tools/call"})");
  REQUIRE(message.has_value());
  REQUIRE(message->envelopes.size() == 1);
  CHECK(message->envelopes[0].kind == Kind::kRequest);
  CHECK(message->envelopes[0].method == "tools/call");
  CHECK(message->envelopes[0].id.is_string());
  CHECK_FALSE(message->batch);
}

TEST_CASE("message: a notification has a method and no id") {
  auto message = jsonrpc::parse_message(R"({"jsonrpc":"2.0","method":"notifications/progress"})");
  REQUIRE(message.has_value());
  CHECK(message->envelopes[0].kind == Kind::kNotification);
  CHECK(message->envelopes[0].id.is_null());
}

TEST_CASE("message: responses are recognised by result or error") {
  auto result = jsonrpc::parse_message(R"({"jsonrpc":"2.0","id":0,"result":{}})");
  auto error = jsonrpc::parse_message(R"({"jsonrpc":"2.0","id":3,"error":{"code":-1}})");
  REQUIRE(result.has_value());
  REQUIRE(error.has_value());
  CHECK(result->envelopes[0].kind == Kind::kResponse);
  CHECK(result->envelopes[0].id.as_int64() == 0);
  CHECK(error->envelopes[0].kind == Kind::kResponse);
}

TEST_CASE("message: a batch is classified element by element") {
  auto message = jsonrpc::parse_message(
      R"([{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},{"id":9,"result":1},42])");
  REQUIRE(message.has_value());
  CHECK(message->batch);
  REQUIRE(message->envelopes.size() == 4);
  CHECK(message->envelopes[0].kind == Kind::kRequest);
  CHECK(message->envelopes[1].kind == Kind::kNotification);
  CHECK(message->envelopes[2].kind == Kind::kResponse);
  CHECK(message->envelopes[3].kind == Kind::kUnknown);
}

TEST_CASE("message: text that is not JSON is an error value, not an exception") {
  for (const char* line : {"not json", "{\"a\":", "{\"a\":1}}", "\x01\x02"}) {
    auto message = jsonrpc::parse_message(line);
    CHECK(message.error() == Error::kInvalidJson);
  }
}

TEST_CASE("message: an empty batch is an error") {
  CHECK(jsonrpc::parse_message("[]").error() == Error::kEmptyBatch);
}

TEST_CASE("message: JSON that is not JSON-RPC parses as unknown") {
  for (const char* line : {"42", "\"text\"", "{}", R"({"id":1})", R"({"method":5,"id":1})"}) {
    auto message = jsonrpc::parse_message(line);
    REQUIRE(message.has_value());
    CHECK(message->envelopes[0].kind == Kind::kUnknown);
  }
}

TEST_CASE("message: nesting far beyond Boost.JSON's default depth of 32 parses") {
  std::string deep = std::string(1000, '[') + std::string(1000, ']');
  auto message = jsonrpc::parse_message(R"({"id":1,"result":)" + deep + "}");
  REQUIRE(message.has_value());
  CHECK(message->envelopes[0].kind == Kind::kResponse);
}

TEST_CASE("message: invalid UTF-8 inside strings is carried, not rejected") {
  auto message = jsonrpc::parse_message("{\"id\":1,\"result\":\"\xff\xfe\"}");
  REQUIRE(message.has_value());
  CHECK(message->envelopes[0].kind == Kind::kResponse);
}

TEST_CASE("message: an error response echoes the id with its exact type") {
  auto numeric = boost::json::parse(jsonrpc::make_error_response(7, -32000, "gone"));
  auto text = boost::json::parse(jsonrpc::make_error_response("7", -32000, "gone"));
  CHECK(numeric.at("id").is_int64());
  CHECK(text.at("id").is_string());
  CHECK(numeric.at("error").at("code").as_int64() == -32000);
  CHECK(numeric.at("error").at("message").as_string() == "gone");
  CHECK(numeric.at("jsonrpc").as_string() == "2.0");
}

TEST_CASE("message: a lone surrogate escape (JavaScript text cut mid-emoji) still routes") {
  for (const char* line : {R"({"jsonrpc":"2.0","id":1,"result":{"text":"cut \ud83d"}})",
                           R"({"jsonrpc":"2.0","id":1,"result":{"text":"\ude00 tail"}})",
                           R"({"jsonrpc":"2.0","id":1,"result":{"text":"\uD83D\uD83D\uDE00"}})"}) {
    auto message = jsonrpc::parse_message(line);
    REQUIRE(message.has_value());
    CHECK(message->envelopes[0].kind == Kind::kResponse);
    CHECK(message->envelopes[0].id.as_int64() == 1);
  }
}

TEST_CASE("message: surrogate repair touches only lone surrogate escapes") {
  CHECK(jsonrpc::replace_lone_surrogates(R"("\ud83d\ude00 pair")") == std::nullopt);
  CHECK(jsonrpc::replace_lone_surrogates(R"("\\ud83d is text")") == std::nullopt);
  CHECK(jsonrpc::replace_lone_surrogates(R"("\u0041")") == std::nullopt);
  CHECK(jsonrpc::replace_lone_surrogates(R"("a\ud83db")") == std::string(R"("a\ufffdb")"));
  CHECK(jsonrpc::replace_lone_surrogates(R"("\ud83d\ud83d\ude00")") ==
        std::string(R"("\ufffd\ud83d\ude00")"));
  CHECK(jsonrpc::replace_lone_surrogates(R"("\\\udc00")") == std::string(R"("\\\ufffd")"));
  CHECK(jsonrpc::replace_lone_surrogates(R"("\ud83")") == std::nullopt);  // cut short: not ours
}
