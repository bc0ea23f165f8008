// Properties of the best answer that fits (docs/protocol.md sections 2.2-2.3, 6): the same result
// and settings give the same answer in every process, byte for byte apart from the cursor strings;
// values the levels shortened are given back while they fit.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "pipeline_fixture.hpp"
#include "support/json_pointer.hpp"
#include "value_generator.hpp"

using namespace ctxguard::pipeline::testing;
namespace json = boost::json;

namespace {

// The answer's text with every cursor (a run of 64 or more letters a-p: support/letter_hex.hpp)
// replaced by one mark, so that answers of two processes compare equal when they show the same.
std::string without_cursors(const json::object& answer) {
  const std::string text = ctxguard::to_json(json::value(answer));
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = at;
    while (end < text.size() && text[end] >= 'a' && text[end] <= 'p') ++end;
    if (end - at >= 64) {
      out += "<cursor>";
    } else {
      out.append(text, at, std::max<std::size_t>(end - at, 1));
    }
    at = std::max(end, at + 1);
  }
  return out;
}

// A result of `seed`'s shape: records, a nested object, or one long text.
json::object generated_result(std::uint32_t seed) {
  ValueGenerator generator(
      seed, ValueShape{.nesting = 5, .long_text_odds = 8, .record_fields = 6, .max_nodes = 4000});
  switch (seed % 3) {
    case 0:
      return text_result(
          ctxguard::to_json(json::object{{"items", generator.records(60 + 7 * seed)}}));
    case 1:
      return text_result(ctxguard::to_json(generator.object(0)));
    default: {
      static const char* const kWords[] = {"served", "request", "Ωmega", "漢字", "failed", "id"};
      std::mt19937 random(seed);
      std::string text;
      for (std::uint32_t line = 0; line < 400 + 40 * seed; ++line) {
        text += "line " + std::to_string(line) + ":";
        for (auto word = random() % 12; word > 0; --word) {
          text += ' ';
          text += kWords[random() % 6];
        }
        text += '\n';
      }
      return text_result(text);
    }
  }
}

// The estimated tokens of the smallest value `shown` has collapsed ("[object of ...: PATH]",
// "[array of ...: PATH]"), read from `original`; SIZE_MAX when none is.
std::size_t smallest_collapsed(const json::value& shown, const json::value& original) {
  std::size_t smallest = SIZE_MAX;
  if (const json::string* text = shown.if_string()) {
    const std::string_view s = *text;
    const std::size_t colon = s.rfind(": /");
    if ((s.starts_with("[object of ") || s.starts_with("[array of ")) && s.ends_with(']') &&
        colon != std::string_view::npos) {
      const std::string path(s.substr(colon + 2, s.size() - colon - 3));
      if (const json::value* value = ctxguard::find_pointer(original, path)) {
        smallest = ctxguard::budget::estimate_json_tokens(*value);
      }
    }
  } else if (const json::array* array = shown.if_array()) {
    for (const json::value& item : *array) {
      smallest = std::min(smallest, smallest_collapsed(item, original));
    }
  } else if (const json::object* object = shown.if_object()) {
    for (const auto& member : *object) {
      if (member.key() != "_ctxguard") {
        smallest = std::min(smallest, smallest_collapsed(member.value(), original));
      }
    }
  }
  return smallest;
}

}  // namespace

TEST_CASE("property: the same result gives the same answer in every process, cursors aside") {
  std::mt19937_64 random(30);
  for (std::uint32_t seed = 1; seed <= 30; ++seed) {
    ctxguard::config::BudgetSettings budget = small_budget(800 + random() % 4000);
    if (seed % 4 == 0) budget.max_chars = 4000 + random() % 8000;
    INFO("seed " << seed << ", tokens " << budget.token_budget << ", chars " << budget.max_chars);
    const json::object result = generated_result(seed);
    std::string first_shown;
    for (int process = 0; process < 4; ++process) {
      // Another process: another random key and entry salt, and entries that were used before.
      std::string key(32, '\0');
      for (auto& c : key) c = static_cast<char>(random());
      Fixture fixture(budget, CodecSecrets{.key = key, .salt = random()});
      for (int earlier = 0; earlier < process; ++earlier) fixture.process(result);
      const auto rewritten = fixture.process(result);
      const std::string shown = rewritten ? without_cursors(rewritten->result) : "as it came";
      if (process == 0) {
        first_shown = shown;
      } else {
        REQUIRE(shown == first_shown);
      }
    }
  }
}

TEST_CASE("property: values the levels shortened are given back while they fit: the room is used") {
  // Nested documents larger than the budget: after the levels, the values their limits collapsed
  // or cut come back, largest first, until the next one does not fit.
  std::size_t checked = 0;
  for (std::uint32_t seed = 1; seed <= 40; seed += 3) {
    const json::object result = generated_result(seed);
    const auto whole = ctxguard::parse_json(text_at(result, 0));
    REQUIRE(whole.has_value());
    for (std::size_t tokens = 1000; tokens <= 8000; tokens += 700) {
      if (ctxguard::budget::estimate_json_tokens(*whole) <= tokens) continue;
      Fixture fixture(small_budget(tokens));
      const auto rewritten = fixture.process(result);
      REQUIRE(rewritten.has_value());
      INFO("seed " << seed << ", budget " << tokens << ": "
                   << text_at(rewritten->result, 0).substr(0, 600));
      const std::size_t used = tokens_of(rewritten->result);
      require_within(fixture, rewritten->result, tokens);
      // At least 85% of the budget, or the smallest value still collapsed does not fit in what
      // is left.
      if (used * 100 < tokens * 85) {
        const json::value shown = parse(text_at(rewritten->result, 0));
        const std::size_t smallest = smallest_collapsed(shown, *whole);
        INFO("used " << used << ", the smallest collapsed value " << smallest << " tokens");
        CHECK(smallest > tokens - used);
      }
      ++checked;
    }
  }
  REQUIRE(checked >= 50);
}
