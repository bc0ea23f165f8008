#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "mcp/tool_compaction.hpp"

namespace json = boost::json;
using ctxguard::mcp::compact_description;
using ctxguard::mcp::compact_input_schema;
using ctxguard::mcp::compact_tool;
using ctxguard::mcp::shared_sentences;
using ctxguard::mcp::split_sentences;

namespace {

json::object object_of(std::string_view text) { return json::parse(text).as_object(); }

std::vector<std::string> strings(const std::vector<std::string_view>& views) {
  return {views.begin(), views.end()};
}

}  // namespace

TEST_CASE("sentences: split after . ! ? before a capital, joined they give the text back") {
  const std::string_view text =
      "Reads a file. Handles e.g. text and more! Is it fast? Yes.\n\nA new paragraph";
  const auto pieces = split_sentences(text);
  CHECK(strings(pieces) == std::vector<std::string>{"Reads a file. ",
                                                    "Handles e.g. text and more! ", "Is it fast? ",
                                                    "Yes.\n\n", "A new paragraph"});
  std::string joined;
  for (const auto piece : pieces) joined += piece;
  CHECK(joined == text);
  CHECK(strings(split_sentences("Version 1.2 is out. Ok")) ==
        std::vector<std::string>{"Version 1.2 is out. ", "Ok"});
  CHECK(split_sentences("").empty());
}

TEST_CASE("schema: $schema, $comment and titles repeating a name go; everything else stays") {
  json::object schema = object_of(R"({
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object", "title": "create_issueArguments", "$comment": "generated",
    "properties": {
      "page_size": {"type": "integer", "title": "Page Size", "default": 50},
      "owner": {"type": "string", "title": "The account that owns it"},
      "title": {"type": "string", "title": "title"},
      "meta": {"type": "object", "default": {"title": "kept: data", "$comment": "kept too"}}
    },
    "required": ["owner", "title"], "additionalProperties": false})");
  const auto compaction = compact_input_schema(schema, "create_issue");
  CHECK(compaction.keywords_removed == 5);
  CHECK(schema == object_of(R"({
    "type": "object",
    "properties": {
      "page_size": {"type": "integer", "default": 50},
      "owner": {"type": "string", "title": "The account that owns it"},
      "title": {"type": "string"},
      "meta": {"type": "object", "default": {"title": "kept: data", "$comment": "kept too"}}
    },
    "required": ["owner", "title"], "additionalProperties": false})"));
}

TEST_CASE("schema: the order of properties and keywords is kept") {
  json::object schema = object_of(
      R"({"type":"object","title":"x","properties":{"b":{"title":"b","type":"string"},"a":{}}})");
  compact_input_schema(schema, "x");
  std::vector<std::string> keys;
  for (const auto& member : schema.at("properties").as_object()) keys.emplace_back(member.key());
  CHECK(keys == std::vector<std::string>{"b", "a"});
  CHECK(json::serialize(schema) ==
        R"({"type":"object","properties":{"b":{"type":"string"},"a":{}}})");
}

TEST_CASE("schema: $schema stays when the old draft means something else in 2020-12") {
  const char* cases[] = {
      R"({"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}]})",
      R"({"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/a","minimum":1}},"definitions":{"a":{}}})",
      R"({"$schema":"http://json-schema.org/draft-04/schema#","properties":{"n":{"minimum":0,"exclusiveMinimum":true}}})",
      R"({"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"]}})",
      R"({"$schema":"https://example.com/my-dialect"})",
  };
  for (const char* text : cases) {
    json::object schema = object_of(text);
    compact_input_schema(schema, "t");
    CHECK(schema.contains("$schema"));
  }
  json::object modern =
      object_of(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{}]})");
  compact_input_schema(modern, "t");
  CHECK_FALSE(modern.contains("$schema"));
  json::object annotated = object_of(
      R"({"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/a","description":"d"}},"definitions":{"a":{}}})");
  compact_input_schema(annotated, "t");
  CHECK_FALSE(annotated.contains("$schema"));
}

TEST_CASE("schema: a definition no $ref reaches does not keep $schema; twice removes nothing") {
  json::object schema = object_of(R"({
    "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
    "definitions": {"old": {"items": [{"type": "string"}]}}})");
  const auto first = compact_input_schema(schema, "t");
  CHECK(first.definitions_removed == 1);
  CHECK_FALSE(schema.contains("$schema"));
  const auto second = compact_input_schema(schema, "t");
  CHECK(second.keywords_removed == 0);
  CHECK(second.definitions_removed == 0);
}

TEST_CASE("schema: definitions no $ref reaches go, the ones reached (also through others) stay") {
  json::object schema = object_of(R"({
    "type": "object",
    "properties": {"who": {"$ref": "#/definitions/member"}},
    "definitions": {
      "member": {"type": "object", "properties": {"role": {"$ref": "#/definitions/role"}}},
      "role": {"enum": ["a", "b"]},
      "unused": {"type": "string"},
      "a~1b": {"type": "string"}
    },
    "$defs": {"alone": {}}})");
  const auto compaction = compact_input_schema(schema, "t");
  CHECK(compaction.definitions_removed == 3);
  CHECK(schema.at("definitions").as_object().size() == 2);
  CHECK(schema.at("definitions").as_object().contains("role"));
  CHECK_FALSE(schema.contains("$defs"));

  json::object escaped = object_of(
      R"({"properties":{"p":{"$ref":"#/definitions/a~1b"}},"definitions":{"a/b":{},"c":{}}})");
  CHECK(compact_input_schema(escaped, "t").definitions_removed == 1);
  CHECK(escaped.at("definitions").as_object().contains("a/b"));
}

TEST_CASE("schema: with an $id, an anchor or a non-local $ref every definition stays") {
  const char* cases[] = {
      R"({"$id":"https://x/s","definitions":{"u":{}}})",
      R"({"properties":{"p":{"$ref":"other.json#/x"}},"definitions":{"u":{}}})",
      R"({"properties":{"p":{"$ref":"#"}},"definitions":{"u":{}}})",
      R"({"definitions":{"u":{"$anchor":"here"}}})",
  };
  for (const char* text : cases) {
    json::object schema = object_of(text);
    CHECK(compact_input_schema(schema, "t").definitions_removed == 0);
    CHECK(schema.at("definitions").as_object().contains("u"));
  }
}

TEST_CASE("description: shared sentences go, the rest is cut after about 200 characters") {
  const std::vector<std::string> shared{"All times are UTC and every value is in ISO 8601 form."};
  const auto short_one = compact_description(
      "Reads a file. All times are UTC and every value is in ISO 8601 form.", shared);
  CHECK(short_one.text == "Reads a file.");
  CHECK(short_one.shared_removed == 1);
  CHECK_FALSE(short_one.shortened);

  const std::string sentence = "X" + std::string(119, 'x');
  const std::string long_text = sentence + ". " + sentence + ". " + sentence + ".";
  const auto cut = compact_description(long_text, {});
  CHECK(cut.shortened);
  CHECK(cut.text == sentence + ". " + sentence + "." + std::string(ctxguard::mcp::kShortenedMark));

  const std::string run_on = std::string(300, 'a') + " " + std::string(300, 'b');
  const auto one = compact_description(run_on, {});
  CHECK(one.shortened);
  CHECK(one.text == std::string(200, 'a') + std::string(ctxguard::mcp::kShortenedMark));
  const auto spaced = compact_description(std::string(150, 'a') + " " + std::string(300, 'b'), {});
  CHECK(spaced.text == std::string(150, 'a') + std::string(ctxguard::mcp::kShortenedMark));

  CHECK(compact_description("Short.", {}).text == "Short.");
}

TEST_CASE("shared sentences: in three tools or more and half of them, and long enough") {
  const std::string guidance = "Use the workspace id from the connected account always.";
  json::array tools;
  for (int i = 0; i < 4; ++i) {
    tools.push_back(json::object{{"name", "t" + std::to_string(i)},
                                 {"description", "Tool " + std::to_string(i) + " does things. " +
                                                     guidance + (i < 3 ? " Read-only." : "")}});
  }
  tools.push_back(json::object{{"name", "odd"}});
  CHECK(shared_sentences(tools) == std::vector<std::string>{guidance});

  json::array many = tools;
  for (int i = 0; i < 6; ++i)
    many.push_back(json::object{{"name", "x"}, {"description", "Other."}});
  CHECK(shared_sentences(many).empty());  // 4 of 11 tools: about those tools, not the server
}

namespace {

// A tool with top-level input properties described as given.
json::object described_tool(const std::string& name,
                            const std::vector<std::pair<std::string, std::string>>& properties) {
  json::object schema_properties;
  for (const auto& [property, description] : properties) {
    schema_properties[property] = json::object{{"type", "string"}, {"description", description}};
  }
  return json::object{{"name", name},
                      {"inputSchema", json::object{{"type", "object"},
                                                   {"properties", schema_properties},
                                                   {"required", json::array{"owner"}}}}};
}

}  // namespace

TEST_CASE("shared parameters: described alike in three tools or more, and only so") {
  using ctxguard::mcp::SharedParameter;
  json::array tools;
  for (int i = 0; i < 10; ++i) {
    std::vector<std::pair<std::string, std::string>> properties{
        {"owner", "Repository owner (a user or an organization)."},
        {"note", "A note about tool " + std::to_string(i) + "."},
        {"perPage", "Results per page."}};
    // `repo` on three tools of ten: a property's description is about the property anywhere.
    if (i < 3) properties.emplace_back("repo", "Repository name.");
    // `status` described two ways: whose is which is said only where it stands.
    properties.emplace_back("status", i % 2 == 0 ? "Only open issues." : "Only open pulls.");
    // Too short to be worth a line of its own.
    properties.emplace_back("id", "The id.");
    tools.push_back(described_tool("tool" + std::to_string(i), properties));
  }
  tools.push_back(json::object{{"name", "no_schema"}});
  const std::vector<SharedParameter> shared = ctxguard::mcp::shared_parameters(tools);
  CHECK(shared ==
        std::vector<SharedParameter>{{"owner", "Repository owner (a user or an organization)."},
                                     {"perPage", "Results per page."},
                                     {"repo", "Repository name."}});
  // Left out of each schema where it stands alike; everything else as it was.
  json::object tool = tools[0].as_object();
  const auto compaction = compact_tool(tool, {}, shared);
  CHECK(compaction.parameters_removed == 3);
  const json::object& properties = tool.at("inputSchema").at("properties").as_object();
  CHECK(properties.at("owner") == json::object{{"type", "string"}});
  CHECK(properties.at("repo") == json::object{{"type", "string"}});
  CHECK(properties.at("note").at("description") == "A note about tool 0.");
  CHECK(properties.at("status").at("description") == "Only open issues.");
  CHECK(tool.at("inputSchema").at("required") == json::array{"owner"});
  // A property described otherwise than the shared description keeps its own.
  json::object other = described_tool("other", {{"owner", "Who owns the gist."}});
  CHECK(compact_tool(other, {}, shared).parameters_removed == 0);
}

TEST_CASE("tool: compacted in place, name, annotations, properties and required kept") {
  json::object tool = object_of(R"({
    "name": "get_thing", "title": "Get a thing", "annotations": {"readOnlyHint": true},
    "description": "Gets a thing. Said everywhere on this server, at some length.",
    "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
      "properties": {"id": {"type": "string", "title": "Id"}}, "required": ["id"]}})");
  const std::vector<std::string> shared{"Said everywhere on this server, at some length."};
  const auto compaction = compact_tool(tool, shared);
  CHECK(compaction.keywords_removed == 2);
  CHECK(compaction.shared_removed == 1);
  CHECK(tool == object_of(R"({
    "name": "get_thing", "title": "Get a thing", "annotations": {"readOnlyHint": true},
    "description": "Gets a thing.",
    "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}},
      "required": ["id"]}})"));
}
