// ctxguard's own tools answered without the server (proxy/own_tools.hpp), without an
// Interceptor or any process: the cache, the tool listing and the protocol state they read.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "config/profile.hpp"
#include "cursor/cursor_codec.hpp"
#include "interceptor_session.hpp"
#include "jsonrpc/message.hpp"
#include "mcp/protocol_state.hpp"
#include "mcp/tool_list.hpp"
#include "pipeline/rewrite/result_pipeline.hpp"
#include "proxy/own_tools.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using ctxguard::proxy::LineContext;
using ctxguard::proxy::OwnTools;
using ctxguard::telemetry::CallEvent;
using ctxguard::telemetry::CallKind;

struct OwnToolsBench {
  ctxguard::cursor::CursorCodec codec{{std::string(32, 'o')}, std::chrono::seconds(600)};
  ctxguard::config::ProfilePtr profile = ctxguard::config::Profile::of({});
  ctxguard::pipeline::ResultCache cache{profile->process().cache_bytes, codec.ttl()};
  ctxguard::mcp::ToolListEditor tool_list;
  ctxguard::pipeline::ResultPipeline pipeline{codec, cache, tool_list.own_tool_names()};
  ctxguard::mcp::ProtocolState protocol;
  ctxguard::proxy::CallRecords records{protocol};
  OwnTools tools{codec, cache, tool_list, protocol, records};
  std::vector<CallEvent> events;

  OwnToolsBench() {
    records.set_sink([this](CallEvent&& event) { events.push_back(std::move(event)); });
  }

  // `message` from the client, as the Interceptor hands it over; kept in `last` (a call through
  // the call tool is redirected in it).
  OwnTools::Outcome send(const json::object& message) {
    last = *ctxguard::jsonrpc::parse_message(ctxguard::to_json(message));
    LineContext line(std::chrono::steady_clock::now(), std::chrono::system_clock::now());
    return tools.answer(last, ctxguard::mcp::Era::kLegacy, *profile, line);
  }

  ctxguard::jsonrpc::Message last;

  // A first answer of `rows` rows for `tool`, cut into pages: its nextCursor.
  std::string cached_cursor(std::size_t rows) {
    json::object result = ctxguard::testing::big_result(rows);
    auto rewritten = pipeline
                         .process(result, profile->global(),
                                  {.tool = "list_rows",
                                   .rewrite = true,
                                   .now = std::chrono::steady_clock::now(),
                                   .wall_now = std::chrono::system_clock::now()})
                         .rewritten;
    REQUIRE(rewritten.has_value());
    const json::value answer =
        ctxguard::testing::answer_json(json::value(std::move(rewritten->result)));
    return std::string(answer.at("_ctxguard").at("nextCursor").as_string());
  }
};

}  // namespace

using ctxguard::testing::call;

TEST_CASE("own tools: a call of a server's tool, or any other message, is not theirs") {
  OwnToolsBench bench;
  const OwnTools::Outcome outcome = bench.send(call(1, "list_rows"));
  CHECK_FALSE(outcome.reply.has_value());
  CHECK_FALSE(outcome.redirected);
  CHECK_FALSE(bench.send(json::object{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}})
                  .reply.has_value());
  CHECK(bench.events.empty());
}

TEST_CASE("own tools: ctxguard_fetch pages from the cache, with its record") {
  OwnToolsBench bench;
  const std::string cursor = bench.cached_cursor(3000);
  const OwnTools::Outcome outcome =
      bench.send(call(7, "ctxguard_fetch", json::object{{"cursor", cursor}}));
  REQUIRE(outcome.reply.has_value());
  const json::value response = json::parse(*outcome.reply);
  CHECK(response.at("id") == 7);
  const json::value page = ctxguard::testing::inner_json(response);
  CHECK(page.at("_ctxguard").at("offset").as_int64() > 0);
  REQUIRE(bench.events.size() == 1);
  const CallEvent& event = bench.events.front();
  CHECK(event.kind == CallKind::kFetch);
  CHECK(event.tool == "ctxguard_fetch:list_rows");
  CHECK(event.final_bytes == outcome.reply->size());
  CHECK(event.proxy_latency.count() > 0);
}

TEST_CASE("own tools: a bad cursor is refused as a result, recorded as a failed fetch") {
  OwnToolsBench bench;
  const OwnTools::Outcome outcome =
      bench.send(call(3, "ctxguard_fetch", json::object{{"cursor", "abcd"}}));
  REQUIRE(outcome.reply.has_value());
  const json::value response = json::parse(*outcome.reply);
  CHECK(response.at("result").at("isError") == true);
  REQUIRE(bench.events.size() == 1);
  CHECK(bench.events.front().stages == std::vector<std::string>{"fetch-error"});
}

TEST_CASE("own tools: a tool's definition is asked of the catalog; unknown before a listing") {
  OwnToolsBench bench;
  const OwnTools::Outcome outcome =
      bench.send(call(4, "ctxguard_fetch", json::object{{"tool", "read_file"}}));
  REQUIRE(outcome.reply.has_value());
  CHECK(json::parse(*outcome.reply).at("result").at("isError") == true);
  REQUIRE(bench.events.size() == 1);
  CHECK(bench.events.front().error == "tool");
}

TEST_CASE("own tools: in lazy mode the call tool becomes the call it stands for") {
  OwnToolsBench bench;
  ctxguard::config::ProcessSettings lazy;
  lazy.tool_list = ctxguard::config::ToolListMode::kLazy;
  bench.profile = ctxguard::config::Profile::of({}, lazy);
  const std::string call_tool = bench.tool_list.own_tool_names().call;
  const OwnTools::Outcome outcome = bench.send(
      call(5, call_tool.c_str(),
           json::object{{"name", "read_file"}, {"arguments", json::object{{"path", "/a"}}}}));
  CHECK_FALSE(outcome.reply.has_value());
  CHECK(outcome.redirected);
  const json::object& params = bench.last.document.at("params").as_object();
  CHECK(params.at("name") == "read_file");
  CHECK(params.at("arguments") == json::value{{"path", "/a"}});
  CHECK(bench.events.empty());  // the server answers it: that answer is recorded
  // A call without a name is refused by ctxguard itself.
  const OwnTools::Outcome refused = bench.send(call(6, call_tool.c_str(), json::object{}));
  REQUIRE(refused.reply.has_value());
  CHECK(json::parse(*refused.reply).at("result").at("isError") == true);
}
