// Properties of the best answer that fits (docs/protocol.md sections 2.2-2.3, 6): the same result
// and settings give the same answer in every process, byte for byte apart from the cursor strings.
#include <random>
#include <string>

#include "pipeline_fixture.hpp"
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
