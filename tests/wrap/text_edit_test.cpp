#include <catch2/catch.hpp>

#include <random>
#include <string>

#include <boost/json.hpp>

#include "wrap/config_edit.hpp"
#include "wrap/jsonc_spans.hpp"
#include "wrap/text_edit.hpp"

using namespace ctxguard::wrap;
namespace json = boost::json;

namespace {

std::string_view text_at(std::string_view text, TextSpan span) {
  return text.substr(span.begin, span.end - span.begin);
}

std::size_t count_of(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

std::string json_writer(std::string_view value, std::string_view /*like*/) {
  return "\"" + std::string(value) + "\"";
}

}  // namespace

TEST_CASE("jsonc spans: members and elements located through comments and trailing commas") {
  const std::string text = R"({
  // "not": a member
  "a": {"b": [1, "x\"]//", {"c": null},], /* } */ "d": true},
  "a\u0062": -1.5e3,
})";
  const auto spans = scan_json_spans(text);
  REQUIRE(spans.has_value());
  REQUIRE(spans->is_object);
  REQUIRE(spans->members.size() == 2);
  CHECK(spans->members[1].key == "ab");  // decoded
  CHECK(text_at(text, spans->members[1].key_span) == R"("a\u0062")");
  CHECK(text_at(text, spans->member("ab")->value.span) == "-1.5e3");
  const JsonSpans& a = spans->member("a")->value;
  CHECK(text_at(text, a.member("d")->value.span) == "true");
  const JsonSpans& b = a.member("b")->value;
  REQUIRE(b.elements.size() == 3);
  CHECK(text_at(text, b.elements[1].span) == R"("x\"]//")");
  CHECK(text_at(text, b.elements[2].span) == R"({"c": null})");
  CHECK(text_at(text, b.span) == R"([1, "x\"]//", {"c": null},])");
  CHECK(spans->member("not") == nullptr);
}

TEST_CASE("jsonc spans: what is not one JSON value is refused") {
  for (const char* broken : {"", "{", "{\"a\" 1}", "[1 2]", "{\"a\": 1} x", "\"open", "/* open",
                             "{\"a\": }", "{1: 2}"}) {
    INFO(broken);
    CHECK_FALSE(scan_json_spans(broken).has_value());
  }
  CHECK_FALSE(scan_json_spans(std::string(2000, '[') + std::string(2000, ']')).has_value());
  CHECK(scan_json_spans(std::string(1000, '[') + std::string(1000, ']')).has_value());
}

TEST_CASE("text edit: replacements apply in text order, insertions before what follows them") {
  const std::string text = "0123456789";
  CHECK(apply_replacements(text, {{{7, 9}, "b"}, {{2, 4}, "a"}, {{4, 4}, "+"}}) == "01a+456b9");
  CHECK(apply_replacements(text, {}) == text);
}

TEST_CASE("text edit: line and column positions count code points, as toml++ does") {
  const std::string text = "ab\n\xC3\xA9t\xE6\x97\xA5x\r\nlast";
  const LineIndex lines(text);
  CHECK(lines.offset(1, 1) == 0);
  CHECK(lines.offset(2, 2) == 5);  // after é (2 bytes)
  CHECK(lines.offset(2, 4) == 9);  // after 日 (3 bytes)
  CHECK(lines.offset(3, 3) == 14);
  CHECK(lines.offset(9, 1) == text.size());
  CHECK(line_start(text, 6) == 3);
  CHECK(line_end(text, 6) == 11);
  CHECK(line_break_of(text) == "\n");
  CHECK(line_break_of("a\r\nb\n") == "\r\n");
}

TEST_CASE("text edit: an array is written again in the style it had") {
  const Launch current{.command = "npx", .args = {"-y", "pkg"}};
  const Launch next{.command = "ctxguard", .args = {"--", "npx", "-y", "pkg"}};
  struct Case {
    std::string array;
    std::string written;
  };
  const std::vector<Case> cases{
      {R"(["-y", "pkg"])", R"(["--", "npx", "-y", "pkg"])"},
      {R"(["-y","pkg"])", R"(["--","npx","-y","pkg"])"},
      {R"([ "-y" , "pkg" ])", R"([ "--" , "npx" , "-y" , "pkg" ])"},
      {R"(["-y", "pkg",])", R"(["--", "npx", "-y", "pkg",])"},
      {"[\n    \"-y\",\n    \"pkg\"\n  ]",
       "[\n    \"--\",\n    \"npx\",\n    \"-y\",\n    \"pkg\"\n  ]"},
      {"[\n\t\t\"-y\",\n\t\t\"pkg\",\n\t]",
       "[\n\t\t\"--\",\n\t\t\"npx\",\n\t\t\"-y\",\n\t\t\"pkg\",\n\t]"},
  };
  for (const Case& c : cases) {
    INFO(c.array);
    const std::string text = "\"npx\" " + c.array;
    const auto spans = scan_json_spans(c.array);
    REQUIRE(spans.has_value());
    LaunchText at;
    at.command = {0, 5};
    at.args = TextSpan{6, text.size()};
    for (const JsonSpans& element : spans->elements) {
      at.arg_tokens.push_back({element.span.begin + 6, element.span.end + 6});
    }
    bool lost = false;
    const std::string edited =
        apply_replacements(text, launch_edits(text, at, current, next, true, json_writer, lost));
    CHECK(edited == "\"ctxguard\" " + c.written);
    CHECK_FALSE(lost);
  }
}

// ---- Property: whatever the layout of a JSON file, wrapping touches only the launches and
// unwrapping gives its text back.

namespace {

// A Claude Desktop file with `servers` servers in a layout drawn from `random`: blanks,
// comments, one-line or one-element-a-line arrays, key order, trailing commas, no args.
std::string random_config(std::mt19937& random, int servers) {
  const auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  const std::vector<std::string> blanks{" ", "", "  ", "\n    ", "\n\t", " /* c */ ", " // c\n  "};
  const auto blank = [&]() { return blanks[static_cast<std::size_t>(pick(7))]; };
  std::string out = "{" + blank() + "\"theme\":" + blank() + "\"dark\"," + blank() +
                    "\"mcpServers\":" + blank() + "{";
  for (int s = 0; s < servers; ++s) {
    out += blank() + "\"s" + std::to_string(s) + "\":" + blank() + "{";
    std::vector<std::string> members;
    members.push_back("\"command\":" + blank() + "\"cmd\\u00e9" + std::to_string(s) + "\"");
    const int args = pick(4) - 1;  // -1: no args
    if (args >= 0) {
      std::string array = "[";
      const bool lines = pick(2) == 0;
      for (int a = 0; a < args; ++a) {
        array += (lines ? "\n        " : (a > 0 ? " " : "")) + std::string("\"a") +
                 std::to_string(a) + "\"" + (a + 1 < args ? "," : "");
        if (lines && pick(3) == 0) array += " // c\n";
      }
      array += lines && args > 0 ? "\n      ]" : "]";
      members.push_back("\"args\":" + blank() + array);
    }
    if (pick(2) == 0) members.push_back("\"env\": {\"K\": \"v\"}");
    std::shuffle(members.begin(), members.end(), random);
    for (std::size_t m = 0; m < members.size(); ++m) {
      out += blank() + members[m] + (m + 1 < members.size() || pick(4) == 0 ? "," : "");
    }
    out += blank() + "}" + (s + 1 < servers || pick(4) == 0 ? "," : "");
  }
  return out + blank() + "}" + blank() + "}\n";
}

}  // namespace

TEST_CASE("property: any layout: wrap changes only launches, unwrap restores the exact text") {
  const ConfigLayout layout{.format = ConfigFormat::kJson, .servers_key = "mcpServers"};
  const json::parse_options jsonc{.allow_comments = true, .allow_trailing_commas = true};
  std::mt19937 random(20261202);
  for (int round = 0; round < 300; ++round) {
    const std::string text = random_config(random, 1 + static_cast<int>(random() % 4));
    INFO(text);
    const EditRequest wrap{.mode = Mode::kWrap,
                           .wrap = {.ctxguard = "/usr/bin/ctxguard", .options = std::nullopt},
                           .servers = {}};
    auto wrapped = edit_config(text, layout, wrap, std::nullopt);
    REQUIRE(wrapped.has_value());
    const EditResult& result = *wrapped;
    // What it means: every server runs through ctxguard, nothing else changed.
    json::value before = json::parse(text, {}, jsonc);
    for (auto& server : before.at("mcpServers").as_object()) {
      json::object& launch = server.value().as_object();
      json::array args{"--", launch.at("command")};
      if (const json::value* old = launch.if_contains("args")) {
        for (const json::value& arg : old->as_array()) args.push_back(arg);
      }
      launch["command"] = "/usr/bin/ctxguard";
      launch["args"] = std::move(args);
    }
    CHECK(json::parse(result.text, {}, jsonc) == before);
    // Every comment is still there.
    CHECK(count_of(result.text, "/* c */") == count_of(text, "/* c */"));
    CHECK(count_of(result.text, "// c\n") == count_of(text, "// c\n"));
    const EditRequest unwrap{.mode = Mode::kUnwrap, .wrap = {}, .servers = {}};
    auto unwrapped = edit_config(result.text, layout, unwrap, text);
    REQUIRE(unwrapped.has_value());
    CHECK(unwrapped->text == text);
  }
}

namespace {

// A Codex file with `servers` servers in a layout drawn from `random`: tables of lines, inline
// tables, dotted keys, comments, basic and literal strings, arrays on one line or several, no
// args, other scripts.
std::string random_codex_config(std::mt19937& random, int servers) {
  const auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  const auto quoted = [&](const std::string& value) {
    return pick(2) == 0 ? "'" + value + "'" : "\"" + value + "\"";
  };
  const auto array = [&](int count, bool lines) {
    std::string out = "[";
    for (int a = 0; a < count; ++a) {
      out += (lines ? "\n  " : (a > 0 ? " " : "")) + quoted("a" + std::to_string(a) + "日") +
             (a + 1 < count || (lines && pick(2) == 0) ? "," : "");
      if (lines && pick(3) == 0 && a + 1 < count) out += " # on a" + std::to_string(a);
    }
    return out + (lines && count > 0 ? "\n]" : "]");
  };
  std::string out = pick(2) == 0 ? "# Codex\nmodel = \"gpt-5\"\n" : "";
  std::string inline_servers;
  for (int s = 0; s < servers; ++s) {
    const std::string name = "s" + std::to_string(s);
    const std::string command = quoted("cmd-é" + std::to_string(s));
    const int args = pick(4) - 1;
    switch (pick(3)) {
      case 0: {  // a table of lines
        out += "\n[mcp_servers." + name + "]" + (pick(2) == 0 ? " # " + name : "") + "\n";
        std::vector<std::string> lines{"command = " + command +
                                       (pick(2) == 0 ? "  # the command" : "")};
        if (args >= 0) lines.push_back("args = " + array(args, pick(2) == 0));
        if (pick(2) == 0) lines.push_back("env = { K = \"v\" }");
        std::shuffle(lines.begin(), lines.end(), random);
        for (const std::string& line : lines) out += (pick(3) == 0 ? "  " : "") + line + "\n";
        break;
      }
      case 1: {  // inline
        std::vector<std::string> entries{"command = " + command};
        if (args >= 0) entries.push_back("args = " + array(args, false));
        if (pick(2) == 0) entries.push_back("cwd = '/tmp'");
        std::shuffle(entries.begin(), entries.end(), random);
        inline_servers += name + " = {";
        for (std::size_t e = 0; e < entries.size(); ++e) {
          inline_servers += (e > 0 ? ", " : " ") + entries[e];
        }
        inline_servers += " }\n";
        break;
      }
      default:  // dotted keys
        inline_servers += name + ".command = " + command + "\n";
        if (args >= 0) inline_servers += name + ".args = " + array(args, pick(2) == 0) + "\n";
        break;
    }
  }
  if (!inline_servers.empty()) out += "\n[mcp_servers]\n" + inline_servers;
  if (pick(3) == 0 && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

TEST_CASE("property: any Codex layout: wrap changes only launches, unwrap restores the text") {
  const ConfigLayout layout{.format = ConfigFormat::kToml, .servers_key = "mcp_servers"};
  std::mt19937 random(1202);
  for (int round = 0; round < 300; ++round) {
    const std::string text = random_codex_config(random, 1 + static_cast<int>(random() % 4));
    INFO(text);
    const EditRequest wrap{.mode = Mode::kWrap,
                           .wrap = {.ctxguard = "/usr/bin/ctxguard", .options = std::nullopt},
                           .servers = {}};
    auto wrapped = edit_config(text, layout, wrap, std::nullopt);
    if (!wrapped) FAIL(wrapped.error().message);
    const EditResult& result = *wrapped;
    CHECK(count_of(result.text, "#") == count_of(text, "#"));  // comments in arrays too
    CHECK_FALSE(result.comments_lost);
    const EditRequest unwrap{.mode = Mode::kUnwrap, .wrap = {}, .servers = {}};
    auto unwrapped = edit_config(result.text, layout, unwrap, text);
    if (!unwrapped) FAIL(unwrapped.error().message);
    CHECK(unwrapped->text == text);
  }
}
