#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "mcp/instructions.hpp"

namespace json = boost::json;

TEST_CASE("instructions: the first 512 characters stand alone and name the fetch tool") {
  const std::string paragraph = ctxguard::mcp::instructions_paragraph("ctxguard_fetch");
  REQUIRE(paragraph.size() <= 512);
  for (const char* needle : {"ctxguard_fetch", "_ctxguard.nextCursor", "limit", "fields",
                             "call the original tool again"}) {
    INFO(needle);
    REQUIRE(paragraph.find(needle) != std::string::npos);
  }
}

TEST_CASE("instructions: the server's own text is kept after ctxguard's") {
  json::object result{{"instructions", "Use search first."}};
  REQUIRE(ctxguard::mcp::add_instructions(result, "ctxguard_fetch"));
  const std::string text(result.at("instructions").as_string());
  REQUIRE(text.rfind(ctxguard::mcp::instructions_paragraph("ctxguard_fetch"), 0) == 0);
  REQUIRE(text.substr(text.size() - 19) == "\n\nUse search first.");
}

TEST_CASE("instructions: added when the server has none, left alone when not a string") {
  json::object none;
  REQUIRE(ctxguard::mcp::add_instructions(none, "proxy_ctxguard_fetch"));
  REQUIRE(none.at("instructions").as_string().find("proxy_ctxguard_fetch") != json::string::npos);
  json::object odd{{"instructions", 5}};
  REQUIRE_FALSE(ctxguard::mcp::add_instructions(odd, "ctxguard_fetch"));
  REQUIRE(odd.at("instructions").as_int64() == 5);
}

TEST_CASE("instructions: shared sentences, then shared parameter descriptions, said once") {
  const std::vector<std::string> sentences{"All timestamps are UTC."};
  const std::vector<ctxguard::mcp::SharedParameter> parameters{{"owner", "Repository owner."},
                                                               {"perPage", "Results per page."}};
  const std::string paragraph = ctxguard::mcp::instructions_paragraph(
      "ctxguard_fetch", {.mode = ctxguard::config::ToolListMode::kCompact,
                         .search_tool = {},
                         .call_tool = {},
                         .shared_guidance = sentences,
                         .shared_parameters = parameters});
  const std::size_t sentence = paragraph.find("All timestamps are UTC.");
  const std::size_t said = paragraph.find(
      "\n\nParameters described once here instead of in each tool's input schema: `owner`: "
      "Repository owner. `perPage`: Results per page.");
  REQUIRE(sentence != std::string::npos);
  REQUIRE(said != std::string::npos);
  REQUIRE(sentence < said);
  // None: no such paragraph.
  REQUIRE(ctxguard::mcp::instructions_paragraph("ctxguard_fetch").find("Parameters described") ==
          std::string::npos);
}
