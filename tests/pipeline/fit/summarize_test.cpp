#include <catch2/catch.hpp>

#include <string>

#include <boost/json.hpp>

#include "pipeline/fit/projection.hpp"
#include "pipeline/fit/summarize.hpp"
#include "support/glob.hpp"

#include "../pipeline_fixture.hpp"

using namespace ctxguard::pipeline;
using ctxguard::glob_matches;
namespace json = boost::json;

namespace {

using ctxguard::pipeline::testing::parse;

// A JSON string long enough that a value holding it is clearly longer than its placeholder.
const std::string kLongString = "\"" + std::string(90, 'w') + "\"";

std::string shown(const json::value& value, const ValueView& view, ViewStats* stats = nullptr) {
  std::string out;
  std::string path;
  ViewStats local;
  write_view(out, value, view, {}, path, stats != nullptr ? *stats : local);
  return out;
}

}  // namespace

TEST_CASE("summarize: a short string is left alone and a long one is cut at a word") {
  CHECK_FALSE(cut_string("short", 10, "/a").has_value());
  CHECK_FALSE(cut_string("exactly10!", 10, "/a").has_value());
  const std::string text = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
  const auto cut = cut_string(text, 20, "/notes/0");
  REQUIRE(cut.has_value());
  CHECK(*cut == "alpha beta gamma…[+40 chars: /notes/0]");
}

TEST_CASE("summarize: cutting counts characters, never splitting a UTF-8 sequence") {
  std::string text;
  for (int i = 0; i < 30; ++i) text += "日本語";  // 90 characters, 270 bytes
  const auto cut = cut_string(text, 10, "/t");
  REQUIRE(cut.has_value());
  CHECK(cut->rfind("日本語日本語日本語日…[+80 chars: /t]", 0) == 0);
  CHECK(parse(ctxguard::to_json(json::value(*cut))).as_string() == *cut);
}

TEST_CASE("summarize: deep values collapse to a placeholder naming their size and path") {
  const json::value value =
      parse(R"({"a":{"b":{"c":[)" + kLongString + "," + kLongString + "," + kLongString +
            R"(],"d":{"e":)" + kLongString + R"(},"g":{"h":1}}},"f":"x"})");
  ValueView view;
  view.max_depth = 2;
  ViewStats stats;
  CHECK(shown(value, view, &stats) ==
        R"({"a":{"b":{"c":"[array of 3 items: /a/b/c]","d":"[object of 1 key: /a/b/d]",)"
        R"("g":{"h":1}}},"f":"x"})");
  CHECK(stats.values_collapsed == 2);
}

TEST_CASE("summarize: a value not clearly longer than its placeholder is never collapsed") {
  // {"e":"..."} is collapsed only once its JSON is longer than the placeholder's JSON (with its
  // quotes) by more than kPlaceholderMarginBytes.
  const std::string placeholder = "\"[object of 1 key: /a/d]\"";
  ValueView view;
  view.max_depth = 1;
  for (std::size_t chars = 0; chars < 60; ++chars) {
    const std::string member = R"({"e":")" + std::string(chars, 'w') + R"("})";
    const json::value value = parse(R"({"a":{"d":)" + member + "}}");
    CAPTURE(chars);
    const bool collapsed = member.size() > placeholder.size() + kPlaceholderMarginBytes;
    CHECK(shown(value, view) ==
          (collapsed ? R"({"a":{"d":"[object of 1 key: /a/d]"}})" : ctxguard::to_json(value)));
    CHECK(collapsed_text(value.at("a").at("d"), "/a/d").has_value() == collapsed);
  }
}

TEST_CASE("summarize: a collapsed object names its largest array, empty values never collapse") {
  const json::value value = parse(R"({"a":{"b":{"name":"x","kids":[1,2],"files":[{"n":)" +
                                  kLongString + R"(},{},{}],"none":[]},"c":{"odd key":[)" +
                                  kLongString + R"(],"k":1},"e":{},"f":[]}})");
  ValueView view;
  view.max_depth = 1;
  ViewStats stats;
  CHECK(shown(value, view, &stats) ==
        R"({"a":{"b":"[object of 4 keys (files: 3 items): /a/b]",)"
        R"("c":"[object of 2 keys (\"odd key\": 1 item): /a/c]","e":{},"f":[]}})");
  CHECK(stats.values_collapsed == 2);
}

TEST_CASE("summarize: array nesting collapses arrays of containers inside that many arrays") {
  // A tree: folders hold `children`; a list of tags (scalars) is never collapsed by nesting. Its
  // leaves are long enough for their arrays to be worth a fetch.
  const std::string kLeaf = "\"" + std::string(kMinBreadthCollapseBytes, 'w') + "\"";
  const json::value value =
      parse(R"([{"name":"a","tags":["x","y"],"children":[{"name":"a1","children":[{"name":)" +
            kLeaf + R"(}]}]},{"name":"b","children":[]},[[)" + kLeaf + "],[" + kLeaf + "]]]");
  ValueView view;
  view.max_array_nesting = 2;
  ViewStats stats;
  CHECK(shown(value, view, &stats) ==
        R"([{"name":"a","tags":["x","y"],"children":[{"name":"a1","children":)"
        R"("[array of 1 item: /0/children/0/children]"}]},{"name":"b","children":[]},[[)" +
            kLeaf + "],[" + kLeaf + "]]]");
  CHECK(stats.values_collapsed == 1);
  view.max_array_nesting = 1;
  CHECK(shown(value, view) ==
        R"([{"name":"a","tags":["x","y"],"children":"[array of 1 item: /0/children]"},)"
        R"({"name":"b","children":[]},"[array of 2 items: /2]"])");
  CHECK(collapses(value.at(0).at("children"), view, Nesting{.depth = 2, .arrays = 1}));
  CHECK_FALSE(collapses(value.at(0).at("tags"), view, Nesting{.depth = 2, .arrays = 1}));
  CHECK_FALSE(collapses(value, view, Nesting{}));
  // A small array of objects stays: collapsed, it would gain a few words and cost a fetch.
  const json::value row = parse(R"({"id":1,"history":[{"at":"2026-01-01","what":"booked"}]})");
  CHECK_FALSE(collapses(row.at("history"), view, Nesting{.depth = 2, .arrays = 1}));
}

TEST_CASE("summarize: projections keep fields, dotted ones reach into nested objects") {
  const json::value value =
      parse(R"([{"id":1,"guest":{"name":"Ann","email":"a@x"},"notes":"long"},)"
            R"({"id":2,"guest":{"name":"Bo","email":"b@x"},"notes":"long"}])");
  ValueView view;
  view.item_fields[&value.as_array()] = {"id", "guest.name"};
  CHECK(shown(value, view) ==
        R"([{"id":1,"guest":{"name":"Ann"}},{"id":2,"guest":{"name":"Bo"}}])");
}

TEST_CASE("summarize: an empty view writes the value minified, as write_json does") {
  const json::value value = parse(R"({ "a" : [1, 2.50, "x\n"], "b": null })");
  CHECK(shown(value, ValueView{}) == ctxguard::to_json(value));
}

TEST_CASE("projection: tool globs") {
  CHECK(glob_matches("list_*", "list_bookings"));
  CHECK(glob_matches("*", "anything"));
  CHECK(glob_matches("get_?", "get_x"));
  CHECK_FALSE(glob_matches("get_?", "get_xy"));
  CHECK(glob_matches("*_bookings", "list_bookings"));
  CHECK_FALSE(glob_matches("list_*", "get_bookings"));
  CHECK(glob_matches("a*b*c", "aXXbYYc"));
}

TEST_CASE("projection: records of the shown arrays are found, else the dominant object") {
  const json::value listing = parse(R"({"total":3,"bookings":[{"id":1},{"id":2},{"id":3}]})");
  const auto groups = find_record_groups(listing, "", {}, ValueView{});
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].path == "/bookings");
  CHECK(groups[0].records.size() == 3);

  const json::value single = parse(R"({"booking":{"id":1,"status":"ok","notes":")" +
                                   std::string(2000, 'n') + R"("},"ok":true})");
  const auto one = find_record_groups(single, "", {}, ValueView{});
  REQUIRE(one.size() == 1);
  CHECK(one[0].path == "/booking");
  CHECK(one[0].array == nullptr);
}

TEST_CASE("projection: automatic projection drops long text first and says what it kept") {
  json::array items;
  for (int i = 0; i < 5; ++i) {
    items.push_back(json::object{{"id", i},
                                 {"status", "confirmed"},
                                 {"name", "guest " + std::to_string(i)},
                                 {"notes", std::string(3000, 'n')},
                                 {"history", json::array{1, 2, 3, 4, 5, 6, 7, 8}}});
  }
  const json::value value(std::move(items));
  ValueView view;
  const auto groups = find_record_groups(value, "", {}, view);
  const auto done = plan_projections(groups, 2000, nullptr, 3, view);
  REQUIRE(done.size() == 1);
  CHECK(done[0].total_fields == 5);
  CHECK(std::find(done[0].omitted.begin(), done[0].omitted.end(), "notes") !=
        done[0].omitted.end());
  CHECK(std::find(done[0].kept.begin(), done[0].kept.end(), "id") != done[0].kept.end());
  CHECK(view.item_fields.count(&value.as_array()) == 1);
}

TEST_CASE("projection: a per-tool map applies only to records that have its fields") {
  const json::value value = parse(
      R"({"bookings":[{"id":1,"status":"a","notes":"x"},{"id":2,"status":"b","notes":"y"}]})");
  ValueView view;
  const FieldList rule{"id", "status"};
  const auto done = plan_projections(find_record_groups(value, "", {}, view), 1, &rule, 3, view);
  REQUIRE(done.size() == 1);
  CHECK(done[0].kept == rule);
  CHECK(done[0].omitted == FieldList{"notes"});

  const FieldList unrelated{"missing"};
  ValueView untouched;
  CHECK(plan_projections(find_record_groups(value, "", {}, untouched), 1, &unrelated, 1, untouched)
            .size() == 1);  // falls back to the automatic choice
}

TEST_CASE("tighten: strings halve to their floor first, then depth drops to 1; off stays off") {
  ValueView view;
  view.max_string_chars = 500;
  view.max_depth = 3;
  std::vector<std::pair<std::size_t, std::size_t>> steps;
  while (tighten(view)) steps.emplace_back(view.max_string_chars, view.max_depth);
  const std::vector<std::pair<std::size_t, std::size_t>> expected{{250, 3}, {125, 3}, {62, 3},
                                                                  {40, 3},  {40, 2},  {40, 1}};
  CHECK(steps == expected);

  ValueView off;
  CHECK_FALSE(tighten(off));
  CHECK(off.max_string_chars == 0);
  CHECK(off.max_depth == 0);
}

TEST_CASE("summarize: every field projection leaves out is listed, of any record written") {
  // Projected on the first two records (id, name), then shown with a third that holds a field
  // the first two do not: the writer reports it, and _ctxguard.projections lists it.
  const json::value rows =
      parse(R"([{"id":1,"name":"a","note":"x"},{"id":2,"name":"b","note":"y"},)"
            R"({"id":3,"name":"c","note":"z","extra":{"deep":true}}])");
  ValueView view;
  view.item_fields[&rows.as_array()] = FieldList{"id"};
  ViewStats stats;
  CHECK(shown(rows, view, &stats) == R"([{"id":1},{"id":2},{"id":3}])");
  const std::vector<std::string> left_out{"name", "note", "extra"};
  CHECK(stats.fields_left_out.at(&rows.as_array()) == left_out);

  Projection projection;
  projection.path = "";
  projection.kept = {"id"};
  projection.omitted = {"name", "note"};  // what the two planned records hold
  projection.total_fields = 3;
  projection.array = &rows.as_array();
  json::object meta;
  add_summary_fields(meta, stats, {projection}, "cursor", "ctxguard_fetch");
  const json::object& listed = meta.at("projections").as_array().at(0).as_object();
  CHECK(listed.at("omittedFields") == json::array{"name", "note", "extra"});
  CHECK(listed.at("totalFields") == 4);
}
