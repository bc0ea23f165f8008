// Property: for many generated JSON results, following nextCursor from the first answer to the
// end reaches every item, JSON-equal to the original, and every answer is within the budget.
#include "pipeline_fixture.hpp"
#include "value_generator.hpp"

using namespace ctxguard::pipeline::testing;
namespace json = boost::json;

TEST_CASE("property: following every cursor rebuilds any result exactly, within the budget") {
  int paginated = 0;
  int cut_as_text = 0;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    // Pagination alone: every value comes back byte for byte by following nextCursors.
    // (Summarized values are reached by path; chunk_and_summary_test.cpp covers those.)
    ctxguard::config::BudgetSettings budget = small_budget(seed % 2 == 0 ? 1500 : 3000);
    budget.summarization = false;
    Fixture fixture(budget);
    ValueGenerator generator(seed);
    const json::value value =
        seed % 3 == 0 ? json::value(generator.array(0)) : json::value(generator.object(0));
    json::object result = text_result(ctxguard::to_json(value));
    if (seed % 4 == 0 && value.is_object()) result["structuredContent"] = value;
    auto rewritten = fixture.process(result);
    const json::object* first = check_first_answer(fixture, result, rewritten, value, cut_as_text);
    if (first == nullptr) continue;
    const json::object& answer = *first;
    ++paginated;
    REQUIRE(tokens_of(answer) <= fixture.budget.token_budget);
    if (const json::value* structured = answer.if_contains("structuredContent")) {
      REQUIRE(*structured == parse(text_at(answer, 0)));
    }
    REQUIRE(rebuild_json(fixture, answer, fixture.budget.token_budget) == value);
  }
  // The generator must exercise both paths, or the property proves little.
  REQUIRE(paginated >= 8);
  WARN("paginated " << paginated << ", cut as text " << cut_as_text);
}
