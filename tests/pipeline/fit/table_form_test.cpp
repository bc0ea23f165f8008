#include <catch2/catch.hpp>

#include "pipeline/fit/table_form.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/json_reader.hpp"

using ctxguard::ItemWindow;
using ctxguard::parse_json;
using ctxguard::pipeline::is_uniform_flat;
using ctxguard::pipeline::write_table;
namespace json = boost::json;

namespace {

json::array rows_of(std::string_view text) {
  auto value = parse_json(text);
  REQUIRE(value.has_value());
  REQUIRE(value->is_array());
  return value->as_array();
}

std::string table_of(const json::array& array, ItemWindow window) {
  std::string out;
  write_table(out, array, window);
  return out;
}

// The reader's side of the contract: objects rebuilt from columns and rows.
json::array rebuild(std::string_view table_text) {
  auto parsed = parse_json(table_text);
  REQUIRE(parsed.has_value());
  const json::object& table = parsed->as_object();
  REQUIRE(table.size() == 2);
  const json::array& columns = table.at("columns").as_array();
  json::array items;
  for (const json::value& row_value : table.at("rows").as_array()) {
    const json::array& row = row_value.as_array();
    REQUIRE(row.size() == columns.size());
    json::object item;
    for (std::size_t i = 0; i < row.size(); ++i) item[columns[i].as_string()] = row[i];
    items.push_back(std::move(item));
  }
  return items;
}

class UniformGenerator {
 public:
  explicit UniformGenerator(std::uint32_t seed) : random_(seed) {}

  json::array array(std::size_t items) {
    // Distinct keys in a random order, the same order in every item.
    std::vector<std::string> keys(std::begin(kKeys), std::end(kKeys));
    std::shuffle(keys.begin(), keys.end(), random_);
    keys.resize(static_cast<std::size_t>(pick(1, 6)));
    json::array array;
    for (std::size_t i = 0; i < items; ++i) {
      json::object item;
      for (const std::string& key : keys) item[key] = scalar();
      array.push_back(std::move(item));
    }
    return array;
  }

  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }

 private:
  static constexpr const char* kKeys[] = {"id", "name", "名前", "quo\"te", "new\nline",
                                          "",   "a b",  "😀",    "back\\",  "ctl\x01"};

  json::value scalar() {
    switch (pick(0, 9)) {
      case 0:
        return nullptr;
      case 1:
        return pick(0, 1) == 1;
      case 2:
        return static_cast<std::int64_t>(random_()) - (std::int64_t{1} << 31);
      case 3: {  // the extremes of both integer kinds
        static const json::value kBig[] = {json::value(std::numeric_limits<std::int64_t>::min()),
                                           json::value(std::numeric_limits<std::int64_t>::max()),
                                           json::value(std::numeric_limits<std::uint64_t>::max()),
                                           json::value(std::uint64_t{9223372036854775808ull}),
                                           json::value(0)};
        return kBig[pick(0, 4)];
      }
      case 4: {  // any finite double, bit pattern first: 17-digit values and subnormals
        std::uint64_t bits = (std::uint64_t{random_()} << 32) | random_();
        double number = 0;
        std::memcpy(&number, &bits, sizeof number);
        return std::isfinite(number) ? number : 0.5;
      }
      case 5:
        return std::uniform_real_distribution<double>(-1e6, 1e6)(random_);
      case 6: {
        static const double kDoubles[] = {5.0,      -0.0, 1e300,
                                          2.5e-308, 0.1,  std::numeric_limits<double>::infinity()};
        return kDoubles[pick(0, 5)];
      }
      default:
        return text();
    }
  }

  json::string text() {
    static const std::string kPieces[] = {
        "alpha", "Ωmega", "漢字", "😀",    "\"",     "\\", "\n",
        "\t",    "\x01",  "\x1f", "\x7f", "\u2028", "é",  std::string("\0", 1),
        "/",     "\xff"};
    std::string out;
    const int pieces = pick(0, 6);
    for (int i = 0; i < pieces; ++i) out += kPieces[pick(0, 15)];
    return json::string(out);
  }

  std::mt19937 random_;
};

}  // namespace

TEST_CASE("table form: a uniform array of flat objects qualifies") {
  CHECK(is_uniform_flat(rows_of(R"([{"id":1,"name":"a"},{"id":2,"name":"b"}])")));
  CHECK(is_uniform_flat(rows_of(R"([{"id":1}])"), 1));
}

TEST_CASE("table form: mixed value types in a column are fine") {
  CHECK(is_uniform_flat(
      rows_of(R"([{"v":1,"w":null},{"v":"x","w":true},{"v":2.5,"w":18446744073709551615}])")));
}

TEST_CASE("table form: keys in a different order do not qualify") {
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"id":1,"name":"a"},{"name":"b","id":2}])")));
}

TEST_CASE("table form: different key sets do not qualify") {
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"id":1,"name":"a"},{"id":2}])")));
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"id":1},{"id":2,"name":"b"}])")));
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"id":1,"name":"a"},{"id":2,"nam":"b"}])")));
}

TEST_CASE("table form: a nested value does not qualify") {
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"id":1,"tags":[]},{"id":2,"tags":[]}])")));
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"id":1,"o":1},{"id":2,"o":{}}])")));
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"o":{"x":1}},{"o":2}])")));
}

TEST_CASE("table form: empty objects and non-objects do not qualify") {
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{},{}])")));
  CHECK_FALSE(is_uniform_flat(rows_of(R"([1,2,3])")));
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"id":1},2])")));
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"id":1},[1]])")));
}

TEST_CASE("table form: fewer than min_items do not qualify") {
  const json::array two = rows_of(R"([{"id":1},{"id":2}])");
  CHECK(is_uniform_flat(two, 2));
  CHECK_FALSE(is_uniform_flat(two, 3));
  CHECK_FALSE(is_uniform_flat(rows_of(R"([{"id":1}])")));
  CHECK_FALSE(is_uniform_flat(json::array{}, 0));  // no columns to name
}

TEST_CASE("table form: the whole array as a table") {
  const json::array array = rows_of(R"([{"id":1,"name":"a"},{"id":2,"name":"b"}])");
  CHECK(table_of(array, {0, 2}) == R"({"columns":["id","name"],"rows":[[1,"a"],[2,"b"]]})");
}

TEST_CASE("table form: windows show only their items, under all the columns") {
  const json::array array =
      rows_of(R"([{"k":0,"v":"a"},{"k":1,"v":"b"},{"k":2,"v":"c"},{"k":3,"v":"d"}])");
  CHECK(table_of(array, {1, 2}) == R"({"columns":["k","v"],"rows":[[1,"b"],[2,"c"]]})");
  CHECK(table_of(array, {3, 1}) == R"({"columns":["k","v"],"rows":[[3,"d"]]})");
  CHECK(table_of(array, {2, 0}) == R"({"columns":["k","v"],"rows":[]})");
}

TEST_CASE("table form: keys and values are written as the JSON writer writes them") {
  const json::array array =
      rows_of(R"([{"a\"b":5.0,"\n":"x\u0001y","名前":1e999},{"a\"b":-1,"\n":null,"名前":false}])");
  REQUIRE(is_uniform_flat(array));
  CHECK(table_of(array, {0, 2}) ==
        R"({"columns":["a\"b","\n","名前"],"rows":[[5.0,"x\u0001y",1e999],[-1,null,false]]})");
}

TEST_CASE("table form: property: rows and columns rebuild every item of the window exactly") {
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    INFO("seed " << seed);
    UniformGenerator generator(seed);
    const auto size = static_cast<std::size_t>(generator.pick(2, 40));
    const json::array array = generator.array(size);
    REQUIRE(is_uniform_flat(array));

    const auto begin = static_cast<std::size_t>(generator.pick(0, static_cast<int>(size)));
    const auto count = static_cast<std::size_t>(generator.pick(0, static_cast<int>(size - begin)));
    const std::string table = table_of(array, {begin, count});
    INFO(table);
    const json::array rebuilt = rebuild(table);
    REQUIRE(rebuilt.size() == count);
    for (std::size_t i = 0; i < count; ++i) {
      INFO("item " << begin + i);
      CHECK(rebuilt[i] == array[begin + i]);
      // Same keys in the same order too (object equality ignores order).
      const json::object& original = array[begin + i].as_object();
      const json::object& back = rebuilt[i].as_object();
      CHECK(std::equal(original.begin(), original.end(), back.begin(), back.end(),
                       [](const json::key_value_pair& a, const json::key_value_pair& b) {
                         return a.key() == b.key();
                       }));
    }
  }
}

TEST_CASE("table form: property: any one item out of shape disqualifies the array") {
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed);
    UniformGenerator generator(seed);
    json::array array = generator.array(static_cast<std::size_t>(generator.pick(2, 20)));
    json::object& victim =
        array[static_cast<std::size_t>(generator.pick(0, static_cast<int>(array.size()) - 1))]
            .as_object();
    switch (generator.pick(0, 3)) {
      case 0:  // a nested value
        victim.begin()->value() = json::array{1};
        break;
      case 1:  // an extra key
        victim["extra key"] = 1;
        break;
      case 2: {  // a key renamed
        json::object renamed;
        for (const json::key_value_pair& member : victim)
          renamed[std::string(member.key()) + "'"] = member.value();
        victim = std::move(renamed);
        break;
      }
      default:  // not an object at all
        array[0] = "text";
        break;
    }
    CHECK_FALSE(is_uniform_flat(array));
  }
}
