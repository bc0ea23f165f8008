// Property: with random client limits in every unit (tokens, characters, bytes, lines, JSON
// bytes), every answer of any generated result is within every limit set — first answers within
// the hard cap, every ctxguard_fetch page, chunk and piece within the budget — and following the
// cursors still rebuilds the server's value exactly (docs/protocol.md section 1.1).
#include <random>

#include "pipeline_fixture.hpp"
#include "value_generator.hpp"
#include "value_resolver.hpp"

using namespace ctxguard::pipeline::testing;
namespace json = boost::json;

namespace {

// A limit drawn for one unit: none a third of the time, else between `least` and `most`.
std::size_t random_limit(std::mt19937& random, std::size_t least, std::size_t most) {
  if (random() % 3 == 0) return 0;
  return least + random() % (most - least + 1);
}

ctxguard::config::BudgetSettings random_limits(std::mt19937& random) {
  ctxguard::config::BudgetSettings budget = small_budget(1000 + random() % 5000);
  budget.max_chars = random_limit(random, ctxguard::config::kMinLimitChars, 12000);
  budget.max_bytes = random_limit(random, ctxguard::config::kMinLimitChars, 12000);
  budget.max_lines = random_limit(random, ctxguard::config::kMinLimitLines, 120);
  budget.max_json_bytes = random_limit(random, ctxguard::config::kMinLimitChars, 12000);
  return budget;
}

// A log of `lines` lines, with non-ASCII text and long lines now and then.
std::string log_text(std::mt19937& random, std::size_t lines) {
  std::string text;
  for (std::size_t i = 0; i < lines; ++i) {
    text += "2026-11-27T02:" + std::to_string(10 + i % 50) + ":00Z ";
    text += i % 9 == 0 ? "ERROR payment failed for Zoë 🎁 order " : "INFO request served for ";
    text += std::to_string(random() % 100000);
    if (i % 37 == 0) text += " " + std::string(300 + random() % 900, 'x');
    text += '\n';
  }
  return text;
}

}  // namespace

TEST_CASE("property: answers fit random limits in every unit, and every value stays reachable") {
  std::mt19937 random(2026);
  int bound_by_text = 0;  // first answers that a limit other than tokens made smaller
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    ctxguard::config::BudgetSettings budget = random_limits(random);
    budget.summary.max_string_chars = seed % 2 == 0 ? 0 : 200;
    budget.summary.max_depth = seed % 2 == 0 ? 0 : 3;
    INFO("tokens " << budget.token_budget << ", chars " << budget.max_chars << ", bytes "
                   << budget.max_bytes << ", lines " << budget.max_lines << ", JSON bytes "
                   << budget.max_json_bytes);
    Fixture fixture(budget);
    ValueGenerator generator(
        seed,
        ValueShape{.nesting = 5, .long_text_odds = 10, .record_fields = 6, .max_nodes = 3000});
    json::value value = seed % 3 == 0
                            ? json::value(json::object{{"items", generator.records(40 + 9 * seed)}})
                            : json::value(generator.object(0));
    json::object result = text_result(ctxguard::to_json(value));
    if (seed % 4 == 0 && value.is_object()) result["structuredContent"] = value;
    auto rewritten = fixture.process(result);
    int cut_as_text = 0;
    const json::object* first = check_first_answer(fixture, result, rewritten, value, cut_as_text);
    if (rewritten && rewritten->record.limit &&
        *rewritten->record.limit != ctxguard::budget::SizeUnit::kTokens) {
      ++bound_by_text;
    }
    if (rewritten) {  // its fill: the share of the limit it comes closest to; past the budget
      REQUIRE(rewritten->record.fill);  // only as far as the hard cap lets the least answer go
      REQUIRE(*rewritten->record.fill > 0.0);
      REQUIRE(*rewritten->record.fill <=
              static_cast<double>(budget.hard_cap) / static_cast<double>(budget.token_budget));
    }
    if (first == nullptr) continue;
    ValueResolver resolver(fixture, fixture.budget.token_budget);
    REQUIRE(resolver.rebuild(*first) == value);
  }
  REQUIRE(bound_by_text >= 8);  // or the property proves little about the new limits
}

TEST_CASE("property: chunked text fits random limits in every unit, and rebuilds exactly") {
  std::mt19937 random(27);
  for (std::uint32_t seed = 1; seed <= 25; ++seed) {
    INFO("seed " << seed);
    ctxguard::config::BudgetSettings budget = random_limits(random);
    INFO("tokens " << budget.token_budget << ", chars " << budget.max_chars << ", bytes "
                   << budget.max_bytes << ", lines " << budget.max_lines << ", JSON bytes "
                   << budget.max_json_bytes);
    Fixture fixture(budget);
    const std::string text = log_text(random, 200 + random() % 2000);
    json::object result = text_result(text);
    auto rewritten = fixture.process(result);
    REQUIRE(rewritten);
    const json::object& answer = rewritten->result;
    require_within(fixture, answer, budget.token_budget);
    REQUIRE(rebuild_text(fixture, answer, 0) == text);
    // Line ranges and line searches from the first cursor fit too.
    const json::value cursor = parse(text_at(answer, 1)).at("_ctxguard").at("nextCursor");
    const json::object lines = fixture.fetch_page({{"cursor", cursor}, {"startLine", 1}});
    REQUIRE_FALSE(is_error(lines));
    require_within(fixture, lines, budget.token_budget);
    const json::object matches = fixture.fetch_page({{"cursor", cursor}, {"query", "ERROR"}});
    REQUIRE_FALSE(is_error(matches));
    require_within(fixture, matches, budget.token_budget);
  }
}
