#include <catch2/catch.hpp>

#include <string>

#include <boost/json.hpp>

#include "pipeline/text/text_digest.hpp"
#include "support/json_writer.hpp"
#include "support/text_scan.hpp"

namespace json = boost::json;
using ctxguard::pipeline::digest_text;
using ctxguard::pipeline::kTextDigestChars;
using ctxguard::pipeline::LineIndex;

namespace {

json::object digest_of_text(const std::string& text) { return digest_text(text, LineIndex(text)); }

}  // namespace

TEST_CASE("text digest of a log: span, levels and the most frequent messages, masked") {
  std::string log;
  for (int i = 0; i < 40; ++i) {
    const std::string time = "2024-01-02T00:" + std::to_string(10 + i) + ":00.000Z";
    if (i % 10 == 3) {
      log += time + " ERROR [worker-" + std::to_string(i % 4) + "] request " +
             std::to_string(1000 + i) + " failed: connection refused\n";
      log += "    at Pool.acquire (pool.js:" + std::to_string(i) + ")\n";  // not an entry
    } else {
      log += time + " INFO  [worker-1] served request " + std::to_string(i) + " in " +
             std::to_string(i * 3) + " ms\n";
    }
  }
  const json::object digest = digest_of_text(log);
  CHECK(digest.at("kind") == "log");
  CHECK(digest.at("entries") == 40);
  CHECK(
      digest.at("span") ==
      json::parse(R"({"first": "2024-01-02T00:10:00.000Z", "last": "2024-01-02T00:49:00.000Z"})"));
  CHECK(digest.at("levels") == json::parse(R"({"INFO": 36, "ERROR": 4})"));
  const auto& messages = digest.at("messages").as_array();
  CHECK(
      messages.at(0) ==
      json::parse(
          R"({"template": "[worker-<*>] served request <*> in <*> ms", "count": 36, "firstLine": 1})"));
  CHECK(ctxguard::to_json(digest).size() <= kTextDigestChars);
  CHECK(
      messages.at(1) ==
      json::parse(
          R"({"template": "[worker-<*>] request <*> failed: connection refused", "count": 4, "firstLine": 4})"));
}

TEST_CASE("text digest of a log: date and time apart, bracketed, and levels spelled otherwise") {
  const std::string log =
      "[2024-05-01 12:30:45,123] warning: disk 91% full\n"
      "[2024-05-01 12:31:00,001] Error: disk 95% full\n"
      "[2024-05-01 12:32:10,500] info: cleaned 3 files\n";
  const json::object digest = digest_of_text(log);
  CHECK(digest.at("span") ==
        json::parse(R"({"first": "2024-05-01 12:30:45,123", "last": "2024-05-01 12:32:10,500"})"));
  CHECK(digest.at("levels") == json::parse(R"({"WARN": 1, "ERROR": 1, "INFO": 1})"));
  CHECK(digest.at("messages").at(0).at("template") == "disk <*>% full");
  CHECK(digest.at("messages").at(0).at("count") == 2);
}

TEST_CASE("text digest of a log: a template cut at its length never splits a character") {
  using ctxguard::text::whole_characters;
  CHECK(whole_characters("abc") == 3);
  CHECK(whole_characters("ab\xC3\xA9") == 4);      // é whole
  CHECK(whole_characters("ab\xC3") == 2);          // é cut after its first byte
  CHECK(whole_characters("ab\xE6\x97") == 2);      // 日 cut after two of three bytes
  CHECK(whole_characters("ab\xF0\x9F\x98") == 2);  // 😀 cut after three of four bytes
  CHECK(whole_characters("\x80\x80") == 2);        // not UTF-8: left as it is
  // Messages of 2- and 3-byte characters whose 90th byte falls inside one.
  for (const std::string word : {"é", "日本", "Grüße"}) {
    std::string log;
    for (int i = 0; i < 3; ++i) {
      log += "2024-05-01T12:30:4" + std::to_string(i) + "Z ERROR x";
      for (int k = 0; k < 60; ++k) log += word;
      log += "\n";
    }
    const std::string tmpl(digest_of_text(log).at("messages").at(0).at("template").as_string());
    CHECK(tmpl.size() <= 90);
    CHECK(tmpl.size() > 86);
    CHECK(whole_characters(tmpl) == tmpl.size());
  }
}

TEST_CASE("text digest of Markdown: the outline, headings in code fences left out") {
  const std::string markdown =
      "# Guide\n\nIntro.\n\n## Install\n\n```sh\n# not a heading\n```\n\n### From source\nText.\n";
  const json::object digest = digest_of_text(markdown);
  CHECK(digest.at("kind") == "markdown");
  CHECK(digest.at("outline") == json::parse(R"([{"line": 1, "heading": "# Guide"},
      {"line": 5, "heading": "## Install"}, {"line": 11, "heading": "### From source"}])"));
}

TEST_CASE("text digest of other text: the longest lines; always bounded") {
  const std::string text =
      "short\n" + std::string(300, 'x') + "\nmid line here\n" + std::string(90, 'y');
  const json::object digest = digest_of_text(text);
  CHECK(digest.at("kind") == "text");
  CHECK(digest.at("longestLines") ==
        json::parse(
            R"([{"line": 2, "chars": 300}, {"line": 4, "chars": 90}, {"line": 3, "chars": 13}])"));

  std::string headings;
  for (int i = 0; i < 500; ++i)
    headings += "## Section " + std::to_string(i) + std::string(200, 'h') + "\n";
  CHECK(ctxguard::to_json(digest_of_text(headings)).size() <= kTextDigestChars);
  std::string noisy;
  for (int i = 0; i < 3000; ++i) {
    noisy += "2024-01-02 00:00:0" + std::to_string(i % 10) + " ERROR " +
             std::string(400, static_cast<char>('a' + i % 26)) + "\n";
  }
  CHECK(ctxguard::to_json(digest_of_text(noisy)).size() <= kTextDigestChars);
}
