#include <catch2/catch.hpp>

#include "support/json_pointer.hpp"
#include "support/json_reader.hpp"

using ctxguard::find_pointer;

TEST_CASE("json pointer: keys with ~ and / are escaped and found again") {
  std::string pointer;
  ctxguard::append_pointer_key(pointer, "a/b~c");
  ctxguard::append_pointer_index(pointer, 1);
  REQUIRE(pointer == "/a~1b~0c/1");
  const auto root = ctxguard::parse_json(R"({"a/b~c":[0,{"x":2}]})");
  REQUIRE(root.has_value());
  const auto* found = find_pointer(*root, pointer);
  REQUIRE(found != nullptr);
  REQUIRE(found->as_object().at("x").as_int64() == 2);
}

TEST_CASE("json pointer: the empty pointer is the root and bad pointers find nothing") {
  const auto root = ctxguard::parse_json(R"({"a":[10,11],"":{"":1}})");
  REQUIRE(root.has_value());
  REQUIRE(find_pointer(*root, "") == &*root);
  REQUIRE(find_pointer(*root, "//")->as_int64() == 1);
  REQUIRE(find_pointer(*root, "/a/1")->as_int64() == 11);
  for (const char* bad : {"a", "/a/2", "/a/01", "/a/-", "/a/x", "/b", "/a~2", "/a/1/c", "/a/"}) {
    INFO(bad);
    REQUIRE(find_pointer(*root, bad) == nullptr);
  }
}
