// Property: with every stage on (pages, cut strings, collapsed values, projection), any generated
// result's first answer fits the budget (or the hard cap, cut as text), every ctxguard_fetch
// answer fits the budget, and the server's value is rebuilt exactly from the answers alone.
#include "pipeline_fixture.hpp"
#include "value_generator.hpp"
#include "value_resolver.hpp"

using namespace ctxguard::pipeline::testing;
namespace json = boost::json;

TEST_CASE("property: summarized answers fit the budget and every value stays reachable") {
  int summarized = 0;
  int projected = 0;
  int cut_as_text = 0;
  int tabled = 0;
  std::size_t placeholders = 0;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    ctxguard::config::BudgetSettings budget = small_budget(seed % 4 == 1   ? 1000
                                                           : seed % 2 == 0 ? 1500
                                                                           : 3000);
    budget.summary.max_string_chars = seed % 3 == 0 ? 60 : 200;
    budget.summary.max_depth = 2 + seed % 3;
    if (seed % 5 == 0) budget.summary.projections.push_back({"to*", {"id", "status"}});
    budget.summary.tables = seed % 3 == 1 || seed % 6 == 3;
    Fixture fixture(budget);
    ValueGenerator generator(
        seed,
        ValueShape{.nesting = 6, .long_text_odds = 12, .record_fields = 6, .max_nodes = 3000});
    json::value value;
    if (seed % 6 == 3) {
      // Flat uniform rows (what --tables writes as {"columns","rows"}) beside other values.
      json::array rows;
      for (const json::value& record : generator.records(30 + 11 * static_cast<int>(seed))) {
        const json::object& full = record.as_object();
        rows.push_back(json::object{{"id", full.at("id")},
                                    {"status", full.at("status")},
                                    {"total", full.at("total")},
                                    {"date", full.at("date")},
                                    {"owner", full.at("owner").at("name")}});
      }
      value = json::object{{"rows", std::move(rows)}, {"extra", generator.object(1)}};
    } else if (seed % 4 == 1) {
      value = json::object{{"total", 1}, {"items", generator.records(20 + 7 * seed)}};
    } else {
      value = seed % 3 == 0 ? json::value(generator.array(0)) : json::value(generator.object(0));
    }
    json::object result = text_result(ctxguard::to_json(value));
    if (seed % 4 == 0 && value.is_object()) result["structuredContent"] = value;
    auto rewritten = fixture.process(result);
    const json::object* first = check_first_answer(fixture, result, rewritten, value, cut_as_text);
    if (first == nullptr) continue;
    const json::object& answer = *first;
    const json::value shown = parse(text_at(answer, 0));
    const json::object& meta = shown.at("_ctxguard").as_object();
    if (meta.contains("resultCursor")) ++summarized;
    if (meta.contains("projections")) ++projected;
    if (meta.contains("tables")) ++tabled;
    ValueResolver resolver(fixture, fixture.budget.token_budget);
    REQUIRE(resolver.rebuild(answer) == value);
    placeholders += resolver.placeholders();
  }
  // The generator must exercise summarization, or the property proves little.
  REQUIRE(summarized >= 10);
  REQUIRE(placeholders >= 50);
  REQUIRE(projected >= 3);
  REQUIRE(tabled >= 3);
  WARN("summarized " << summarized << ", projected " << projected << ", cut as text " << cut_as_text
                     << ", with tables " << tabled << ", placeholders resolved " << placeholders);
}
