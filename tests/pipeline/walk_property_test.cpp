// Property: for many generated JSON results, following nextCursor from the first answer to the
// end reaches every item, JSON-equal to the original, and every answer is within the budget.
#include "pipeline_fixture.hpp"

#include <random>

using namespace ctxguard::pipeline::testing;
namespace json = boost::json;

namespace {

class ValueGenerator {
 public:
  explicit ValueGenerator(std::uint32_t seed) : random_(seed) {}

  json::value any(int depth) {
    const int choice = pick(0, depth >= 3 ? 3 : 6);
    switch (choice) {
      case 0:
        return text();
      case 1:
        return json::value(static_cast<std::int64_t>(random_()) - (1ll << 31));
      case 2:
        return json::value(std::uniform_real_distribution<double>(-1e6, 1e6)(random_));
      case 3:
        return pick(0, 2) == 0 ? json::value(nullptr) : json::value(pick(0, 1) == 1);
      case 4:
      case 5:
        return object(depth + 1);
      default:
        return array(depth + 1);
    }
  }

  json::object object(int depth) {
    json::object object;
    const int keys = pick(1, 3);
    for (int i = 0; i < keys; ++i)
      object[key()] = pick(0, 4) == 0 ? json::value(array(depth + 1)) : any(depth);
    return object;
  }

  json::array array(int depth) {
    json::array array;
    // Short arrays (never cut) and long ones (cut), mostly of objects like real listings.
    // Long ones shrink with depth so a value stays around a few thousand nodes.
    const int count = pick(0, 3) == 0 ? pick(11, depth <= 1 ? 300 : 40) : pick(0, 2);
    for (int i = 0; i < count; ++i)
      array.push_back(depth >= 3 ? text() : json::value(object(depth)));
    return array;
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }

  std::string key() {
    static const char* const kKeys[] = {"id",     "name", "status", "a/b",
                                        "ti~lde", "名前", "notes",  ""};
    return kKeys[pick(0, 7)];
  }

  json::string text() {
    static const char* const kWords[] = {"alpha",       "Ωmega",       "漢字",  "😀", "quote\"",
                                         "back\\slash", "line\nbreak", "tab\t", "x"};
    std::string out;
    const int words = pick(0, 5);
    for (int i = 0; i < words; ++i) out += std::string(kWords[pick(0, 8)]) + " ";
    return json::string(out);
  }

  std::mt19937 random_;
};

}  // namespace

TEST_CASE("property: following every cursor rebuilds any result exactly, within the budget") {
  int paginated = 0;
  int cut_as_text = 0;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    // Pagination alone: every value comes back byte for byte by following nextCursors.
    // (Summarized values are reached by path; chunk_and_summary_test.cpp covers those.)
    ctxguard::config::BudgetSettings budget = small_budget(seed % 2 == 0 ? 1500 : 3000);
    budget.summary.max_string_chars = 0;
    budget.summary.max_depth = 0;
    budget.summary.project = false;
    Fixture fixture(budget);
    ValueGenerator generator(seed);
    const json::value value =
        seed % 3 == 0 ? json::value(generator.array(0)) : json::value(generator.object(0));
    json::object result = text_result(ctxguard::to_json(value));
    if (seed % 4 == 0 && value.is_object()) result["structuredContent"] = value;
    auto rewritten = fixture.process(result);
    if (!rewritten) {
      REQUIRE(tokens_of(result) <= fixture.budget.token_budget);
      continue;
    }
    const json::object& answer = rewritten->result;
    REQUIRE(tokens_of(answer) <= fixture.budget.hard_cap);
    if (content_of(answer).size() > 1) {  // cut as text: the pieces rebuild the JSON text
      ++cut_as_text;
      REQUIRE(parse(rebuild_text(fixture, answer, 0)) == value);
      continue;
    }
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
