#include <catch2/catch.hpp>

#include <string>

#include "proxy/task_tools.hpp"

using ctxguard::proxy::TaskTools;

TEST_CASE("task tools: a task's tool is remembered; an unseen one is named by its id") {
  TaskTools tasks;
  tasks.remember("t-1", "search_bookings");
  tasks.remember("", "ignored");
  CHECK(tasks.tool_of("t-1") == "search_bookings");
  CHECK(tasks.tool_of("t-2") == "task:t-2");
  CHECK(tasks.tool_of("") == "task:");
  tasks.remember("t-1", "list_rows");  // the id reused by a later call
  CHECK(tasks.tool_of("t-1") == "list_rows");
}

TEST_CASE("task tools: memory is bounded for a client that never fetches results") {
  TaskTools tasks;
  for (int i = 0; i < 5000; ++i) tasks.remember("t-" + std::to_string(i), "tool");
  // Cleared when 4,096 were held: the latest ones are known, the first ones are not.
  CHECK(tasks.tool_of("t-4999") == "tool");
  CHECK(tasks.tool_of("t-0") == "task:t-0");
}
