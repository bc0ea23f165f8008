#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"
#include "mcp/tool_list.hpp"
#include "mcp/tool_list_size.hpp"

namespace json = boost::json;
using ctxguard::mcp::FetchToolForm;
using ctxguard::mcp::ToolListSize;

TEST_CASE("tool list size: each tool as minified JSON, the costliest kept") {
  ToolListSize size;
  const json::object small{{"name", "a"}, {"inputSchema", json::object{{"type", "object"}}}};
  const json::object large{{"name", "b"},
                           {"description", std::string(400, 'x') + " words and more words"},
                           {"inputSchema", json::object{{"type", "object"}}}};
  size.add_page(json::object{{"tools", json::array{small, large}}});
  REQUIRE(size.tools() == 2);
  REQUIRE(size.bytes() == json::serialize(small).size() + json::serialize(large).size());
  REQUIRE(size.tokens() == ctxguard::budget::estimate_tokens(json::serialize(small)) +
                               ctxguard::budget::estimate_tokens(json::serialize(large)));
  REQUIRE(size.largest().front().name == "b");
}

TEST_CASE("tool list size: ctxguard_fetch costs at most 150 estimated tokens in every form") {
  // The longest name a prefix can give it, and the largest page a configuration allows.
  for (const std::string& name :
       {std::string("ctxguard_fetch"), std::string("proxy_ctxguard_fetch")}) {
    for (const FetchToolForm form : {FetchToolForm{}, FetchToolForm{.gives_tools = true}}) {
      ToolListSize size;
      size.add_page(json::object{
          {"tools", json::array{ctxguard::mcp::fetch_tool_definition(name, 10'000, form)}}});
      INFO(name << (form.gives_tools ? " (compact)" : ""));
      REQUIRE(size.tokens() <= 150);
    }
  }
}
