// ResultRewriter on its own: which answers go through the pipeline, and the record each leaves in
// its line's context (docs/telemetry.md), fed responses as the Interceptor hands them over.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include <boost/json.hpp>

#include "../config/profile_from.hpp"
#include "interceptor_session.hpp"
#include "proxy/result_rewriter.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using ctxguard::config::ProfilePtr;
using ctxguard::config::testing::profile_from;
using ctxguard::proxy::Answer;
using ctxguard::proxy::LineContext;
using ctxguard::proxy::Route;
using ctxguard::telemetry::CallEvent;
using ctxguard::telemetry::CallKind;
using ctxguard::testing::big_result;
using ctxguard::testing::response;

struct Bench {
  ctxguard::cursor::CursorCodec codec{{std::string(32, 'r')}, std::chrono::seconds(600)};
  ctxguard::pipeline::ResultCache cache{std::size_t{64} << 20, codec.ttl()};
  ctxguard::mcp::OwnToolNames names;
  ctxguard::mcp::ProtocolState protocol;
  ctxguard::proxy::CallRecords records{protocol};
  ctxguard::proxy::ResultRewriter rewriter{codec, cache, names, records};
  LineContext line{std::chrono::steady_clock::now(), std::chrono::system_clock::now()};
  bool in_batch = false;  // the document is then serialized again: it must stay whole

  // `response` as the answer to a `method` request about `subject`, arrived under `profile`.
  bool answer(json::value& response, const char* method, const char* subject,
              const ProfilePtr& profile) {
    Route route;
    route.kind = ctxguard::jsonrpc::Kind::kResponse;
    route.method = method;
    route.subject = subject;
    route.context = profile;
    const json::value id = response.at("id");
    json::object* result =
        response.as_object().contains("result") ? &response.at("result").as_object() : nullptr;
    const Answer answer{route, id, *profile, line, ctxguard::to_json(response).size(), in_batch};
    return rewriter.rewrite(response, result, answer);
  }
};

}  // namespace

TEST_CASE("ResultRewriter: a tool result over the budget is rewritten, and recorded once") {
  Bench bench;
  const ProfilePtr profile = profile_from("tokenBudget: 500\n");
  json::value answer = response(1, big_result(2000));
  CHECK(bench.answer(answer, "tools/call", "rows", profile));
  REQUIRE(bench.line.events.size() == 1);
  const CallEvent& record = bench.line.events.front();
  CHECK(record.kind == CallKind::kCall);
  CHECK(record.tool == "rows");
  CHECK(record.budget == 500);
  CHECK(record.over_budget);
  CHECK(record.final_tokens < record.original_tokens);
  CHECK(answer.at("result").at("content").as_array().size() > 1);  // the way on, then the page

  json::value small = response(2, big_result(3));
  CHECK_FALSE(bench.answer(small, "tools/call", "rows", profile));
  CHECK(bench.line.events.size() == 2);  // recorded, forwarded as it came
  CHECK_FALSE(bench.line.events.back().over_budget);
}

TEST_CASE("ResultRewriter: an error answers a call; an interim answer and other methods do not") {
  Bench bench;
  const ProfilePtr profile = profile_from("tokenBudget: 500\n");
  json::value error = json::object{{"jsonrpc", "2.0"},
                                   {"id", 1},
                                   {"error", json::object{{"code", -32603}, {"message", "boom"}}}};
  CHECK_FALSE(bench.answer(error, "tools/call", "rows", profile));
  REQUIRE(bench.line.events.size() == 1);
  CHECK(bench.line.events.front().outcome == ctxguard::telemetry::Outcome::kError);
  CHECK(bench.line.events.front().budget == 500);

  json::value other_error = error;
  CHECK_FALSE(bench.answer(other_error, "prompts/get", "", profile));
  json::object interim = big_result(2000);
  interim["resultType"] = "input_required";
  json::value asking = response(2, interim);
  CHECK_FALSE(bench.answer(asking, "tools/call", "rows", profile));
  json::value prompt = response(3, big_result(2000));
  CHECK_FALSE(bench.answer(prompt, "prompts/get", "", profile));
  CHECK(bench.line.events.size() == 1);
}

TEST_CASE("ResultRewriter: a task's result is rewritten and recorded under the tool that ran") {
  Bench bench;
  const ProfilePtr profile = profile_from("tokenBudget: 500\n");
  json::value started =
      response(1, json::object{{"task", json::object{{"taskId", "t-1"}, {"status", "working"}}}});
  CHECK_FALSE(bench.answer(started, "tools/call", "export", profile));
  CHECK(bench.line.events.empty());  // the call is not over

  json::value done = response(2, big_result(2000));
  CHECK(bench.answer(done, "tasks/result", "t-1", profile));
  REQUIRE(bench.line.events.size() == 1);
  CHECK(bench.line.events.front().kind == CallKind::kTask);
  CHECK(bench.line.events.front().tool == "export");
}

TEST_CASE("ResultRewriter: observe mode sends the answer as it came and records the rewrite") {
  Bench bench;
  bench.in_batch =
      true;  // alone on its line the answer's own bytes go out: the document may be spent
  const ProfilePtr profile = profile_from("mode: observe\ntokenBudget: 500\n");
  json::value answer = response(1, big_result(2000));
  const json::value sent = answer;
  CHECK_FALSE(bench.answer(answer, "tools/call", "rows", profile));
  CHECK(answer == sent);
  REQUIRE(bench.line.events.size() == 1);
  const CallEvent& record = bench.line.events.front();
  CHECK(record.observed);
  CHECK(record.over_budget);
  CHECK(record.final_bytes < ctxguard::to_json(sent).size());  // what enforce would have sent
}
