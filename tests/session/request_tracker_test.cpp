#include "session/request_tracker.hpp"

#include <memory>

#include <catch2/catch.hpp>

using namespace ctxguard::session;

namespace {

// What a test keeps with each request.
struct RequestNote {
  int number = 0;
};
using Tracker = RequestTracker<RequestNote>;

}  // namespace

TEST_CASE("request tracker: a response id resolves the request and removes it") {
  Tracker tracker;
  const auto t0 = Clock::time_point{};
  tracker.track(1, "tools/call", t0);
  auto request = tracker.resolve(1);
  REQUIRE(request);
  CHECK(request->method == "tools/call");
  CHECK(tracker.size() == 0);
  CHECK_FALSE(tracker.resolve(1));
}

TEST_CASE("request tracker: numeric and string ids with the same digits are different requests") {
  Tracker tracker;
  tracker.track(1, "a", {});
  tracker.track("1", "b", {});
  CHECK(tracker.size() == 2);
  CHECK(tracker.resolve("1")->method == "b");
  CHECK(tracker.resolve(1)->method == "a");
}

TEST_CASE("request tracker: an unknown id resolves to nothing") {
  Tracker tracker;
  tracker.track(5, "x", {});
  CHECK_FALSE(tracker.resolve(6));
  CHECK_FALSE(tracker.resolve(nullptr));
  CHECK(tracker.size() == 1);
}

TEST_CASE("request tracker: a reused id replaces the older request") {
  Tracker tracker;
  tracker.track(3, "old", {});
  tracker.track(3, "new", {});
  CHECK(tracker.size() == 1);
  CHECK(tracker.resolve(3)->method == "new");
}

TEST_CASE("request tracker: take_all returns what is outstanding in arrival order") {
  Tracker tracker;
  for (int i = 0; i < 100; ++i) tracker.track(i * 7 % 100, "m" + std::to_string(i), {});
  tracker.resolve(7);  // i == 1
  auto all = tracker.take_all();
  REQUIRE(all.size() == 99);
  CHECK(all.front().method == "m0");
  CHECK(all[1].method == "m2");
  CHECK(all.back().method == "m99");
  CHECK(tracker.size() == 0);
}

TEST_CASE("request tracker: the context kept with a request comes back with it") {
  Tracker tracker;
  const auto note = std::make_shared<const RequestNote>(RequestNote{7});
  tracker.track("a", "tools/call", {}, "search", note);
  tracker.track("b", "ping", {});
  auto request = tracker.resolve("a");
  REQUIRE(request);
  CHECK(request->context == note);
  CHECK(request->context->number == 7);
  CHECK(tracker.resolve("b")->context == nullptr);
}
