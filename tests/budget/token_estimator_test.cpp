#include "budget/token_estimator.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "budget/token_model.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using ctxguard::budget::estimate_json_tokens;
using ctxguard::budget::estimate_tokens;
using ctxguard::budget::TokenCounter;

// Texts with their token counts by Claude's tokenizer (@anthropic-ai/tokenizer 0.0.4,
// countTokens), the reference of tests/e2e/estimator-accuracy.test.mjs.
struct Counted {
  std::string_view text;
  std::size_t tokens;
};
constexpr Counted kEnglish{
    "The quick brown fox jumps over the lazy dog. It was not amused, and said so in a long "
    "letter to the editor.",
    26};
constexpr Counted kJson{
    R"({"id":1234,"name":"ctxguard","tags":["proxy","mcp"],"active":true,"score":98.6,)"
    R"("owner":{"login":"octocat","id":583231}})",
    41};
constexpr Counted kCode{"function add(a, b) {\n  return a + b;\n}\n\nexport default add;\n", 23};
constexpr Counted kJapanese{
    "東京は日本の首都であり、世界で最も人口の多い都市圏の一つです。多くの企業の本社が集まっています"
    "。",
    48};
constexpr Counted kKorean{
    "서울은 대한민국의 수도이며 가장 큰 도시입니다. 많은 사람들이 살고 있습니다.", 42};
constexpr Counted kRussian{
    "Москва — столица России, крупнейший по численности населения город страны.", 37};

double ratio(const Counted& sample) {
  return static_cast<double>(estimate_tokens(sample.text)) / static_cast<double>(sample.tokens);
}

double tokens_per_byte(std::string_view text) {
  return static_cast<double>(estimate_tokens(text)) / static_cast<double>(text.size());
}

std::string mixed_text() {
  std::string text;
  for (const Counted* sample : {&kEnglish, &kJson, &kCode, &kJapanese, &kKorean, &kRussian}) {
    text += sample->text;
    text += '\n';
  }
  text += "\t\x01\x7f\xff\xc3(\xe4\xb8\xf0\x9f\x98\x80 \\u00e9 \"quoted\"";  // odd and broken bytes
  return text;
}

// A random JSON document: strings with every kind of byte the writer escapes or copies.
json::value random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth > 4 ? 5 : 7);
  const auto random_string = [&rng] {
    static constexpr std::string_view kPieces[] = {"a",  "word", " ",    "\"",   "\\", "/",
                                                   "\n", "\t",   "\x01", "\x1f", "é",  "日本",
                                                   "ё",  "😀",    "{",    "0"};
    std::uniform_int_distribution<std::size_t> piece(0, std::size(kPieces) - 1);
    std::uniform_int_distribution<int> length(0, 12);
    std::string s;
    for (int n = length(rng); n > 0; --n) s += kPieces[piece(rng)];
    return s;
  };
  switch (pick(rng)) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(rng()) - static_cast<std::int64_t>(rng()) * 1000;
    case 3:
      return std::numeric_limits<std::uint64_t>::max() - rng();
    case 4:
      return std::ldexp(static_cast<double>(rng()) - 2e9, static_cast<int>(rng() % 200) - 100);
    case 5:
      return json::string(random_string());
    case 6: {
      json::array array;
      for (int n = static_cast<int>(rng() % 5); n > 0; --n)
        array.push_back(random_value(rng, depth + 1));
      return array;
    }
    default: {
      json::object object;
      for (int n = static_cast<int>(rng() % 5); n > 0; --n) {
        object[random_string()] = random_value(rng, depth + 1);
      }
      return object;
    }
  }
}

}  // namespace

TEST_CASE("estimate: empty text is zero tokens") {
  CHECK(estimate_tokens("") == 0);
  const TokenCounter counter;
  CHECK(counter.tokens() == 0);
  CHECK(counter.bytes() == 0);
}

TEST_CASE("estimate: any non-empty text is at least one token") {
  for (const std::string_view text : {"a", " ", "\n", "{", "0", "é", "日", "\xff"}) {
    CHECK(estimate_tokens(text) >= 1);
  }
}

TEST_CASE("estimate: appending text never lowers the estimate") {
  const std::string text = mixed_text();
  std::size_t previous = 0;
  for (std::size_t length = 0; length <= text.size(); ++length) {
    const std::size_t tokens = estimate_tokens(std::string_view(text).substr(0, length));
    REQUIRE(tokens >= previous);
    previous = tokens;
  }
}

TEST_CASE("estimate: bytes outside any UTF-8 character are charged; valid text as calibrated") {
  // Found by tests/fuzz: stray continuation bytes and 3-byte leads cost nothing, so a megabyte of
  // them passed any budget (a client shows each as U+FFFD, a token or more).
  constexpr std::size_t kBytes = 64 * 1024;
  const std::string continuations(kBytes, '\x80');
  const std::string leads(kBytes, '\xe4');
  std::string alternating;
  for (std::size_t i = 0; i < kBytes / 2; ++i) alternating += "a\x80";
  for (const std::string& text : {"a" + continuations, continuations, leads, alternating}) {
    CHECK(estimate_tokens(text) >= kBytes / 4);
  }
  CHECK(estimate_tokens(leads) >= kBytes - 1);        // every byte after a 3-byte lead is stray
  CHECK(estimate_tokens(alternating) >= kBytes / 2);  // every continuation after ASCII is stray

  // Valid text: no stray byte, and its continuation runs are exactly those its 3- and 4-byte
  // characters give back, so the calibrated weights hold unchanged.
  namespace detail = ctxguard::budget::detail;
  std::string valid;
  for (const Counted* sample : {&kEnglish, &kJson, &kCode, &kJapanese, &kKorean, &kRussian}) {
    valid += sample->text;
  }
  valid +=
      "é ñ ü € … “quoted” 日本語 한국어 😀👍🏽 ಕನ್ನಡ ไทย "
      "\xef\xbc\xa1";
  detail::Features features;
  std::uint8_t last_byte = detail::kStartByte;
  features.add(valid, last_byte);
  CHECK(features.stray_bytes == 0);
  std::uint64_t given_back = 0;
  for (std::size_t script = 0; script < detail::kScriptCount; ++script) {
    given_back += features.chars[script] * detail::continuation_runs_in(script);
  }
  CHECK(features.continuation_runs == given_back);
  CHECK(given_back > 0);
}

TEST_CASE("estimate: English prose is about one token per word") {
  CHECK(ratio(kEnglish) >= 0.9);
  CHECK(ratio(kEnglish) <= 1.3);
}

TEST_CASE("estimate: minified JSON and code are not underestimated") {
  CHECK(ratio(kJson) >= 0.9);
  CHECK(ratio(kJson) <= 1.3);
  CHECK(ratio(kCode) >= 0.9);
  CHECK(ratio(kCode) <= 1.3);
}

TEST_CASE("estimate: CJK text is not underestimated") {
  CHECK(ratio(kJapanese) >= 0.9);
  CHECK(ratio(kJapanese) <= 1.4);
  CHECK(ratio(kKorean) >= 0.9);
  CHECK(ratio(kKorean) <= 1.4);
}

TEST_CASE("estimate: Cyrillic text is not underestimated") {
  CHECK(ratio(kRussian) >= 0.9);
  CHECK(ratio(kRussian) <= 1.4);
}

TEST_CASE("estimate: JSON and CJK cost more tokens per byte than English prose") {
  // The seeds' 4-bytes-per-token rule treats all three alike.
  CHECK(tokens_per_byte(kJson.text) > tokens_per_byte(kEnglish.text));
  // Per character, CJK is about one token; per byte (3 bytes a character) still above prose.
  CHECK(tokens_per_byte(kJapanese.text) > tokens_per_byte(kEnglish.text));
  CHECK(estimate_tokens(kJapanese.text) >= 48);  // its 48 characters
}

TEST_CASE("TokenCounter: pieces counted one after another equal their concatenation") {
  const std::string text = mixed_text();
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    TokenCounter counter;
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t length = std::min<std::size_t>(rng() % 40, text.size() - at);
      counter.add(std::string_view(text).substr(at, length));
      at += length;
    }
    REQUIRE(counter.bytes() == text.size());
    REQUIRE(counter.tokens() == estimate_tokens(text));
  }
}

TEST_CASE("TokenCounter: the weight table and the model term by term agree") {
  namespace detail = ctxguard::budget::detail;
  const std::string text = mixed_text();
  for (std::size_t length = 0; length <= text.size(); length += 7) {
    const std::string_view piece = std::string_view(text).substr(0, length);
    detail::Features features;
    std::uint8_t last_byte = detail::kStartByte;
    features.add(piece, last_byte);
    const std::uint64_t weight = detail::weight_of(features);
    REQUIRE(estimate_tokens(piece) == (weight + detail::kUnit - 1) / detail::kUnit);
  }
}

TEST_CASE("add_json: counts exactly the minified text ctxguard writes") {
  const auto same = [](std::string_view document, std::string_view minified) {
    const json::value value = json::parse(document);
    INFO(document);
    CHECK(estimate_json_tokens(value) == estimate_tokens(minified));
    TokenCounter counter;
    counter.add_json(value);
    CHECK(counter.bytes() == minified.size());
  };
  same(R"({ "a": 1, "b": [true, false, null], "c": "x" })",
       R"({"a":1,"b":[true,false,null],"c":"x"})");
  same("[1.5, 1e21, 0.0, -0.0, 5.0, 2.5e-7, 100]", "[1.5,1e+21,0.0,-0.0,5.0,2.5e-07,100]");
  same("[-9223372036854775808, 18446744073709551615]",
       "[-9223372036854775808,18446744073709551615]");
  same(R"({"path": "/usr/bin", "name": "héllo 日本 😀"})",
       R"({"path":"/usr/bin","name":"héllo 日本 😀"})");
  same(R"(["\"q\" \\ \b\f\n\r\t \u0001 \u001f \u007f"])",
       "[\"\\\"q\\\" \\\\ \\b\\f\\n\\r\\t \\u0001 \\u001f \x7f\"]");
  same(R"({"": {}, "e": [], "n": [[[]]]})", R"({"":{},"e":[],"n":[[[]]]})");
  same(R"("just a string")", R"("just a string")");
}

TEST_CASE("add_json: infinity and NaN count as the writer prints them") {
  CHECK(estimate_json_tokens(json::value(std::numeric_limits<double>::infinity())) ==
        estimate_tokens("1e999"));
  CHECK(estimate_json_tokens(json::value(-std::numeric_limits<double>::infinity())) ==
        estimate_tokens("-1e999"));
  CHECK(estimate_json_tokens(json::value(std::nan(""))) == estimate_tokens("null"));
}

TEST_CASE("add_json: agrees with ctxguard's JSON writer on random documents") {
  std::mt19937 rng(42);
  for (int round = 0; round < 500; ++round) {
    const json::value value = random_value(rng, 0);
    const std::string minified = ctxguard::to_json(value);
    INFO(minified);
    TokenCounter counter;
    counter.add_json(value);
    REQUIRE(counter.bytes() == minified.size());
    REQUIRE(counter.tokens() == estimate_tokens(minified));
  }
}

TEST_CASE("add_json_string: escapes count as the bytes the writer prints") {
  TokenCounter counter;
  counter.add_json_string("line\n\"two\"\x02");
  const std::string_view written = R"("line\n\"two\"\u0002")";
  CHECK(counter.bytes() == written.size());
  CHECK(counter.tokens() == estimate_tokens(written));
}

TEST_CASE("add_json: documents nested deeper than the explicit stack are counted whole") {
  constexpr int kDepth = 3000;
  json::value value = json::array{};
  std::string minified = "[]";
  for (int level = 1; level < kDepth; ++level) {
    if (level % 2 == 0) {
      value = json::array{std::move(value)};
      minified = "[" + minified + "]";
    } else {
      value = json::object{{"k", std::move(value)}};
      minified = R"({"k":)" + minified + "}";
    }
  }
  TokenCounter counter;
  counter.add_json(value);
  CHECK(counter.bytes() == minified.size());
  CHECK(counter.tokens() == estimate_tokens(minified));
}

TEST_CASE("estimate: concurrent estimates agree with a single-threaded one") {
  const std::string text = mixed_text();
  const std::size_t expected = estimate_tokens(text);
  std::vector<std::size_t> results(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 1000; ++round) results[t] = estimate_tokens(text);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::size_t result : results) CHECK(result == expected);
}

TEST_CASE("TokenCounter: fractional tokens round up to tokens and add up across pieces") {
  const std::string text = mixed_text();
  TokenCounter counter;
  double previous = 0;
  for (std::size_t at = 0; at < text.size(); at += 13) {
    counter.add(std::string_view(text).substr(at, 13));
    const double now = counter.fractional_tokens();
    REQUIRE(now >= previous);
    REQUIRE(static_cast<std::size_t>(std::ceil(now)) == counter.tokens());
    previous = now;
  }
  CHECK(counter.tokens() == estimate_tokens(text));
}
