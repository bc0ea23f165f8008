#include "telemetry/answer_sampler.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "budget/token_estimator.hpp"
#include "telemetry/call_event.hpp"

using ctxguard::telemetry::AnswerSampler;
using ctxguard::telemetry::RecordWriter;
namespace json = boost::json;

namespace {

// Lines a RecordWriter wrote, collected in memory.
struct Collected {
  std::mutex mutex;
  std::string text;
};

std::unique_ptr<RecordWriter> collecting(const std::shared_ptr<Collected>& into) {
  return std::make_unique<RecordWriter>(
      [into](std::string_view batch) {
        const std::lock_guard lock(into->mutex);
        into->text.append(batch);
        return std::error_code();
      },
      ctxguard::telemetry::WriterLimits{}, "samples");
}

std::vector<json::object> lines_of(const std::string& text) {
  std::vector<json::object> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    lines.push_back(json::parse(text.substr(at, end - at)).as_object());
    at = end + 1;
  }
  return lines;
}

json::object result_of(std::initializer_list<std::string> texts) {
  json::array content;
  for (const std::string& text : texts) content.push_back({{"type", "text"}, {"text", text}});
  content.push_back({{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}});
  return {{"content", content}};
}

}  // namespace

TEST_CASE("answer sampler: a sample is the text a client reads, with its estimate") {
  auto collected = std::make_shared<Collected>();
  {
    AnswerSampler sampler(collecting(collected), 100.0, 7);
    REQUIRE(sampler.draw());  // every answer at 100%
    const auto time = *ctxguard::telemetry::parse_time("2026-11-27T02:04:05.123Z");
    sampler.offer(time, "list_bookings", "claude-code",
                  result_of({"first é", "{\"_ctxguard\":{}}"}));
    sampler.offer(time, "images_only", "", json::object{{"content", json::array{}}});
    REQUIRE(sampler.taken() == 1);
  }  // the writer drains on destruction
  const std::vector<json::object> lines = lines_of(collected->text);
  REQUIRE(lines.size() == 1);  // a result without text items is not sampled
  const json::object& line = lines.front();
  const std::string text = "first é\n{\"_ctxguard\":{}}";
  CHECK(line.at("time") == "2026-11-27T02:04:05.123Z");
  CHECK(line.at("tool") == "list_bookings");
  CHECK(line.at("client") == "claude-code");
  CHECK(line.at("text").as_string() == text);
  CHECK(line.at("bytes").as_int64() == static_cast<std::int64_t>(text.size()));
  CHECK(line.at("estimated_tokens").as_int64() ==
        static_cast<std::int64_t>(ctxguard::budget::estimate_tokens(text)));
}

TEST_CASE("answer sampler: the rate is the share of answers drawn") {
  AnswerSampler one_percent(collecting(std::make_shared<Collected>()), 1.0, 2026);
  int drawn = 0;
  for (int i = 0; i < 100'000; ++i) drawn += one_percent.draw() ? 1 : 0;
  // 1,000 expected; the binomial's standard deviation is about 31.
  CHECK(drawn > 850);
  CHECK(drawn < 1150);
}
