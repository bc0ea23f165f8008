#pragma once
// Random JSON values shaped like MCP tool results (listings of records, nested objects, text with
// escapes and multi-byte characters) for the pipeline's property tests. Deterministic per seed.

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include <boost/json.hpp>

namespace ctxguard::pipeline::testing {

struct ValueShape {
  int nesting = 3;                   // depth from which values are leaves (strings) only
  int long_text_odds = 0;            // 1 in N strings is long (hundreds of words); 0: never
  int record_fields = 3;             // objects have 1..record_fields keys
  std::size_t max_nodes = SIZE_MAX;  // past this many values, only leaves (keeps sizes sane)
};

class ValueGenerator {
 public:
  explicit ValueGenerator(std::uint32_t seed, ValueShape shape = {})
      : random_(seed), shape_(shape) {}

  boost::json::value any(int depth) {
    ++nodes_;
    const int choice = pick(0, depth >= shape_.nesting || nodes_ > shape_.max_nodes ? 3 : 6);
    switch (choice) {
      case 0:
        return text();
      case 1:
        return boost::json::value(static_cast<std::int64_t>(random_()) - (1ll << 31));
      case 2:
        return boost::json::value(std::uniform_real_distribution<double>(-1e6, 1e6)(random_));
      case 3:
        return pick(0, 2) == 0 ? boost::json::value(nullptr) : boost::json::value(pick(0, 1) == 1);
      case 4:
      case 5:
        return object(depth + 1);
      default:
        return array(depth + 1);
    }
  }

  boost::json::object object(int depth) {
    boost::json::object object;
    const int keys = pick(1, shape_.record_fields);
    for (int i = 0; i < keys; ++i) {
      object[key()] = pick(0, 4) == 0 ? boost::json::value(array(depth + 1)) : any(depth);
    }
    return object;
  }

  boost::json::array array(int depth) {
    boost::json::array array;
    // Short arrays (never cut) and long ones (cut), mostly of objects like real listings.
    // Long ones shrink with depth so a value stays around a few thousand nodes.
    const int count = pick(0, 3) == 0 ? pick(11, depth <= 1 ? 300 : 40) : pick(0, 2);
    for (int i = 0; i < count && nodes_ <= shape_.max_nodes; ++i) {
      ++nodes_;
      array.push_back(depth >= shape_.nesting ? boost::json::value(text())
                                              : boost::json::value(object(depth)));
    }
    return array;
  }

  // A listing of similar records, like a bookings or tickets answer: scalar fields, medium-long
  // notes, a nested object, and a few fields only some records have.
  boost::json::array records(int count) {
    static const char* const kStatus[] = {"open", "closed", "cancelled", "pending"};
    boost::json::array list;
    for (int i = 0; i < count; ++i) {
      boost::json::object record;
      record["id"] = i;
      record["status"] = kStatus[pick(0, 3)];
      record["total"] = pick(1, 5000);
      record["date"] = "2026-0" + std::to_string(pick(1, 9)) + "-1" + std::to_string(pick(0, 9));
      std::string notes;
      for (int w = pick(20, 60); w > 0; --w) notes += std::string(word()) + " ";
      record["notes"] = notes;
      record["owner"] = boost::json::object{{"name", word()}, {"tags", boost::json::array{word()}}};
      if (pick(0, 2) == 0) record["a/b"] = text();
      if (pick(0, 3) == 0) record["名前"] = any(4);
      list.push_back(std::move(record));
    }
    return list;
  }

  // Rows of a query, like an SQL answer: scalar columns, and `notes` holding a short text and a
  // small nested `history` (one small object, now and then two).
  boost::json::array rows(int count) {
    static const char* const kStatus[] = {"paid", "refunded", "open", "void"};
    boost::json::array list;
    for (int i = 0; i < count; ++i) {
      boost::json::object row;
      row["id"] = 1000 + i;
      row["customer"] = std::string(word()) + " " + word();
      row["status"] = kStatus[pick(0, 3)];
      row["amount"] = pick(1, 90000) / 100.0;
      row["created_at"] = "2026-1" + std::to_string(pick(0, 2)) + "-0" + std::to_string(pick(1, 9));
      boost::json::array history;
      for (int h = pick(0, 4) == 0 ? 2 : 1; h > 0; --h) {
        history.push_back(
            boost::json::object{{"at", "2026-11-0" + std::to_string(pick(1, 9))}, {"by", word()}});
      }
      std::string text;
      for (int w = pick(3, 25); w > 0; --w) text += std::string(word()) + " ";
      row["notes"] = boost::json::object{{"text", text}, {"history", std::move(history)}};
      list.push_back(std::move(row));
    }
    return list;
  }

 private:
  const char* word() {
    static const char* const kWords[] = {"alpha", "Ωmega", "漢字", "😀", "quote\"", "x", "tab\t"};
    return kWords[pick(0, 6)];
  }

  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }

  std::string key() {
    static const char* const kKeys[] = {"id",    "name", "status", "a/b",  "ti~lde", "名前",
                                        "notes", "",     "total",  "date", "tags",   "owner"};
    return kKeys[pick(0, shape_.record_fields > 3 ? 11 : 7)];
  }

  boost::json::string text() {
    static const char* const kWords[] = {"alpha",       "Ωmega",       "漢字",  "😀", "quote\"",
                                         "back\\slash", "line\nbreak", "tab\t", "x"};
    std::string out;
    const bool long_text = shape_.long_text_odds > 0 && pick(1, shape_.long_text_odds) == 1;
    const int words = long_text ? pick(100, 400) : pick(0, 5);
    for (int i = 0; i < words; ++i) out += std::string(kWords[pick(0, 8)]) + " ";
    return boost::json::string(out);
  }

  std::mt19937 random_;
  ValueShape shape_;
  std::size_t nodes_ = 0;
};

}  // namespace ctxguard::pipeline::testing
