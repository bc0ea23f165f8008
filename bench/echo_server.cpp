// A trivial JSON-RPC server for benchmarks: answers every request at once with an empty result.
// It parses each line like a real server would, so direct and proxied runs pay the same cost.

#include <cstdio>
#include <iostream>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  std::string reply;
  while (std::getline(std::cin, line)) {
    std::error_code ec;
    const boost::json::value message = boost::json::parse(line, ec);
    if (ec || !message.is_object()) continue;
    const auto* id = message.as_object().if_contains("id");
    if (id == nullptr || !message.as_object().contains("method")) continue;
    reply = R"({"jsonrpc":"2.0","id":)" + boost::json::serialize(*id) +
            R"(,"result":{}})"
            "\n";
    std::cout << reply << std::flush;
  }
}
