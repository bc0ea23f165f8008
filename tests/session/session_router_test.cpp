#include "session/session_router.hpp"

#include <chrono>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

using namespace ctxguard;
using namespace ctxguard::session;
using jsonrpc::Kind;

namespace {

jsonrpc::Message parse(const std::string& line) {
  auto message = jsonrpc::parse_message(line);
  REQUIRE(message.has_value());
  return std::move(*message);
}

// What a test keeps with each request.
struct RouteNote {
  int number = 0;
};
using Router = SessionRouter<RouteNote>;

constexpr auto kClient = Direction::kClientToServer;
constexpr auto kServer = Direction::kServerToClient;

}  // namespace

TEST_CASE("router: a response is matched to the tools/call it answers, with the elapsed time") {
  Router router;
  const Clock::time_point t0{};
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":4,"method":"tools/call"})"), t0);
  auto routes = router.observe(kServer, parse(R"({"jsonrpc":"2.0","id":4,"result":{}})"),
                               t0 + std::chrono::milliseconds(12));
  REQUIRE(routes.size() == 1);
  CHECK(routes[0].kind == Kind::kResponse);
  CHECK(routes[0].method == kToolsCall);
  CHECK(routes[0].elapsed == std::chrono::milliseconds(12));
  CHECK(router.in_flight(kClient) == 0);
}

TEST_CASE("router: client and server id spaces are separate even when the ids overlap") {
  // server-everything sends roots/list with id 0 while the client's initialize is id 0 too.
  Router router;
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":0,"method":"initialize"})"), {});
  router.observe(kServer, parse(R"({"jsonrpc":"2.0","id":0,"method":"roots/list"})"), {});
  CHECK(router.in_flight(kClient) == 1);
  CHECK(router.in_flight(kServer) == 1);

  auto client_answer =
      router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":0,"result":{}})"), {});
  CHECK(client_answer[0].method == "roots/list");
  auto server_answer =
      router.observe(kServer, parse(R"({"jsonrpc":"2.0","id":0,"result":{}})"), {});
  CHECK(server_answer[0].method == kInitialize);
  CHECK(router.in_flight(kClient) == 0);
  CHECK(router.in_flight(kServer) == 0);
}

TEST_CASE("router: no initialize is needed to recognise a tools/list answer") {
  Router router;
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":"a","method":"tools/list"})"), {});
  auto routes = router.observe(kServer, parse(R"({"jsonrpc":"2.0","id":"a","result":{}})"), {});
  CHECK(routes[0].method == kToolsList);
}

TEST_CASE("router: server/discover answers are recognised") {
  Router router;
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":1,"method":"server/discover"})"), {});
  CHECK(router.observe(kServer, parse(R"({"id":1,"result":{}})"), {})[0].method == kServerDiscover);
}

TEST_CASE("router: an error response resolves its request too") {
  Router router;
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":2,"method":"tools/call"})"), {});
  auto routes = router.observe(kServer, parse(R"({"id":2,"error":{"code":-32602}})"), {});
  CHECK(routes[0].method == kToolsCall);
  CHECK(router.in_flight(kClient) == 0);
}

TEST_CASE("router: an answer to an unknown id has an empty method and changes nothing") {
  Router router;
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"), {});
  auto routes = router.observe(kServer, parse(R"({"jsonrpc":"2.0","id":99,"result":{}})"), {});
  CHECK(routes[0].method.empty());
  CHECK_FALSE(routes[0].elapsed);
  CHECK(router.in_flight(kClient) == 1);
}

TEST_CASE("router: every element of a batch is tracked and answered") {
  Router router;
  router.observe(kClient,
                 parse(R"([{"id":1,"method":"tools/list"},{"id":2,"method":"tools/call"},)"
                       R"({"method":"notifications/initialized"}])"),
                 {});
  CHECK(router.in_flight(kClient) == 2);
  auto routes =
      router.observe(kServer, parse(R"([{"id":2,"result":{}},{"id":1,"result":{}}])"), {});
  REQUIRE(routes.size() == 2);
  CHECK(routes[0].method == kToolsCall);
  CHECK(routes[1].method == kToolsList);
}

TEST_CASE("router: a cancelled request is forgotten, in the direction that sent it") {
  Router router;
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":5,"method":"tools/call"})"), {});
  router.observe(kServer, parse(R"({"jsonrpc":"2.0","id":5,"method":"sampling/createMessage"})"),
                 {});
  router.observe(
      kClient,
      parse(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}})"),
      {});
  CHECK(router.in_flight(kClient) == 0);
  CHECK(router.in_flight(kServer) == 1);
}

TEST_CASE("router: malformed cancellations are ignored") {
  Router router;
  router.observe(kClient, parse(R"({"id":5,"method":"tools/call"})"), {});
  for (const char* line : {R"({"method":"notifications/cancelled"})",
                           R"({"method":"notifications/cancelled","params":7})",
                           R"({"method":"notifications/cancelled","params":{"requestId":6}})"}) {
    router.observe(kClient, parse(line), {});
  }
  CHECK(router.in_flight(kClient) == 1);
}

TEST_CASE("router: abandoned client requests come back in arrival order with their ids") {
  Router router;
  router.observe(kClient, parse(R"({"id":"b","method":"tools/call"})"), {});
  router.observe(kClient, parse(R"({"id":1,"method":"resources/read"})"), {});
  router.observe(kServer, parse(R"({"id":1,"method":"roots/list"})"), {});
  auto abandoned = router.abandon_client_requests();
  REQUIRE(abandoned.size() == 2);
  CHECK(abandoned[0].id.as_string() == "b");
  CHECK(abandoned[1].id.as_int64() == 1);
  CHECK(router.in_flight(kClient) == 0);
  CHECK(router.in_flight(kServer) == 1);
}

TEST_CASE("router: awaits_answer knows which ids a response would answer, per direction") {
  Router router;
  const Clock::time_point t0{};
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":"a","method":"tools/call"})"), t0);
  router.observe(kServer, parse(R"({"jsonrpc":"2.0","id":0,"method":"roots/list"})"), t0);
  CHECK(router.awaits_answer(kServer, boost::json::value("a")));
  CHECK_FALSE(router.awaits_answer(kClient, boost::json::value("a")));
  CHECK(router.awaits_answer(kClient, boost::json::value(0)));
  CHECK_FALSE(router.awaits_answer(kServer, boost::json::value(0)));
  // Ids match by their JSON form: "0" is not 0.
  CHECK_FALSE(router.awaits_answer(kClient, boost::json::value("0")));
  router.observe(
      kClient,
      parse(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}})"),
      t0);
  CHECK_FALSE(router.awaits_answer(kServer, boost::json::value("a")));
}

TEST_CASE("router: the context given with a request comes back, typed, with its answer") {
  Router router;
  const auto first = std::make_shared<const RouteNote>(RouteNote{1});
  const auto second = std::make_shared<const RouteNote>(RouteNote{2});
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":1,"method":"tools/call"})"), {}, first);
  router.observe(kClient, parse(R"({"jsonrpc":"2.0","id":2,"method":"tools/call"})"), {}, second);
  auto answer = router.observe(kServer, parse(R"({"jsonrpc":"2.0","id":2,"result":{}})"), {});
  REQUIRE(answer[0].context == second);
  CHECK(answer[0].context->number == 2);
  const auto abandoned = router.abandon_client_requests();
  REQUIRE(abandoned.size() == 1);
  CHECK(abandoned[0].context == first);
}
