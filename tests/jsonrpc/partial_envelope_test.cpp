#include "jsonrpc/partial_envelope.hpp"

#include <random>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

using ctxguard::jsonrpc::PartialEnvelope;
using ctxguard::jsonrpc::read_partial_envelope;
namespace json = boost::json;

namespace {

constexpr std::size_t kEdge = 256;

// What the proxy has of an oversized line: its first and last kEdge bytes.
PartialEnvelope read_edges(const std::string& line) {
  return read_partial_envelope(
      std::string_view(line).substr(0, kEdge),
      std::string_view(line).substr(line.size() - std::min(line.size(), kEdge)));
}

std::string filler(std::size_t bytes) { return std::string(bytes, 'x'); }

}  // namespace

TEST_CASE("partial envelope: Python SDK layout, id and method first") {
  const std::string line =
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"q":")" +
      filler(100000) + R"("}}})";
  const PartialEnvelope envelope = read_edges(line);
  REQUIRE(envelope.id.has_value());
  CHECK(*envelope.id == json::value(7));
  CHECK(envelope.method == "tools/call");
}

TEST_CASE("partial envelope: TypeScript SDK layout, method first and id last") {
  const std::string line = R"({"method":"tools/call","params":{"name":"q","arguments":{"q":")" +
                           filler(100000) + R"("}},"jsonrpc":"2.0","id":"call-1"})";
  const PartialEnvelope envelope = read_edges(line);
  REQUIRE(envelope.id.has_value());
  CHECK(*envelope.id == json::value("call-1"));
  CHECK(envelope.method == "tools/call");
}

TEST_CASE("partial envelope: a TypeScript SDK response has its id in the tail and no method") {
  const std::string line = R"({"result":{"content":[{"type":"text","text":")" + filler(100000) +
                           R"("}]},"jsonrpc":"2.0","id":3})";
  const PartialEnvelope envelope = read_edges(line);
  REQUIRE(envelope.id.has_value());
  CHECK(*envelope.id == json::value(3));
  CHECK_FALSE(envelope.method.has_value());
}

TEST_CASE("partial envelope: ids and methods of nested objects are not the message's") {
  const std::string line = R"({"result":{"id":5,"method":"x","items":[)" + filler(0) +
                           R"({"id":1},{"id":2}],"pad":")" + filler(100000) +
                           R"(","last":{"id":9,"method":"y"}}})";
  CHECK(read_edges(line) == PartialEnvelope{});
}

TEST_CASE("partial envelope: members cut by an edge are not reported") {
  // The head ends inside the id's number: 12 might be 123.
  CHECK(read_partial_envelope(R"({"jsonrpc":"2.0","id":12)", "") == PartialEnvelope{});
  CHECK(read_partial_envelope(R"({"jsonrpc":"2.0","method":"tools/ca)", "") == PartialEnvelope{});
  // The tail starts inside the id's value.
  CHECK(read_partial_envelope("", R"(23,"jsonrpc":"2.0"})") == PartialEnvelope{});
}

TEST_CASE("partial envelope: quoted look-alikes inside strings are not members") {
  const std::string line =
      R"({"result":{"text":")" + filler(100000) + R"(\",\"id\":1}\",{\"id\":4}"},"id":2})";
  const PartialEnvelope envelope = read_edges(line);
  REQUIRE(envelope.id.has_value());
  CHECK(*envelope.id == json::value(2));
}

TEST_CASE("partial envelope: garbage, batches and non-objects give nothing") {
  for (const std::string& line :
       {filler(1000),
        std::string(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},)") + filler(1000) + "]",
        "\"" + filler(1000) + "\"", std::string("\x01\xff\xfe{\"id\":") + filler(500)}) {
    CHECK(read_edges(line) == PartialEnvelope{});
  }
}

TEST_CASE("partial envelope: null, string and large ids keep their JSON type") {
  for (const char* id : {"null", R"("7")", "18446744073709551615", "-3", "1.5"}) {
    const std::string line = R"({"result":{"t":")" + filler(5000) + R"("},"id":)" + id + "}";
    const PartialEnvelope envelope = read_edges(line);
    REQUIRE(envelope.id.has_value());
    CHECK(*envelope.id == json::parse(id));
  }
}

TEST_CASE("partial envelope: any member order and padding, id found wherever an edge holds it") {
  // Seeded so a failure reproduces.
  std::mt19937 random(7);
  for (int round = 0; round < 500; ++round) {
    const bool request = round % 2 == 0;
    const bool id_first = std::uniform_int_distribution<int>(0, 1)(random) == 1;
    const std::int64_t id = std::uniform_int_distribution<std::int64_t>(-1000, 1000000)(random);
    json::object message;
    if (id_first) message["id"] = id;
    message["jsonrpc"] = "2.0";
    if (request) message["method"] = "tools/call";
    message[request ? "params" : "result"] = json::object{
        {"blob", filler(std::uniform_int_distribution<std::size_t>(300, 3000)(random))}};
    if (!id_first) message["id"] = id;
    const std::string line = json::serialize(message);
    INFO(line.substr(0, 80) << " ... " << line.substr(line.size() - 60));
    const PartialEnvelope envelope = read_edges(line);
    REQUIRE(envelope.id.has_value());
    CHECK(*envelope.id == json::value(id));
    CHECK(envelope.method.has_value() == request);
  }
}
