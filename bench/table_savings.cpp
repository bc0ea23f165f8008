// Token savings of --tables (lib/pipeline/fit/table_form.hpp) against minified JSON: finds every
// uniform array of flat objects (at least 2 items) anywhere in each JSON text and prices it
// both ways with the token estimator, per array and for the whole text.
//
//   table_savings [--emit FILE] CORPUS.jsonl   rows {category, source, tokens, text}: the
//                                              estimator corpus (tests/e2e/estimator-accuracy)
//   table_savings [--emit FILE] --generate N   N generated booking-like flat objects
//
// Texts that are not JSON are skipped, and so are JSON texts whose minified form was seen
// before: the corpus carries the same JSON pretty, minified and as structuredContent, which
// would count each array several times. --emit writes both forms as JSON Lines,
// {"kind":"array"|"sample","source","json","table","json_estimate","table_estimate"}, so
// scripts/table-savings.mjs can count them with the real tokenizer without knowing the table form.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"
#include "pipeline/fit/table_form.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using ctxguard::budget::estimate_json_tokens;
using ctxguard::budget::estimate_tokens;
using ctxguard::pipeline::is_uniform_flat;
using ctxguard::pipeline::write_table;

constexpr std::size_t kMinItems = 2;

struct Totals {
  std::size_t samples = 0;  // samples with at least one qualifying array
  std::size_t arrays = 0;
  std::size_t items = 0;
  std::size_t arrays_not_smaller = 0;  // the table costs as much or more
  std::size_t array_json_tokens = 0;
  std::size_t array_table_tokens = 0;
  std::size_t sample_json_tokens = 0;   // whole samples that have a qualifying array
  std::size_t sample_table_tokens = 0;  // the same samples with those arrays as tables
};

void collect(const json::value& value, std::vector<const json::array*>& found) {
  if (const json::array* array = value.if_array()) {
    // A qualifying array holds only scalars: nothing further down can qualify.
    if (is_uniform_flat(*array, kMinItems)) {
      found.push_back(array);
      return;
    }
    for (const json::value& item : *array) collect(item, found);
  } else if (const json::object* object = value.if_object()) {
    for (const json::key_value_pair& member : *object) collect(member.value(), found);
  }
}

// `value` minified, every qualifying array written as a table.
void write_with_tables(std::string& out, const json::value& value) {
  if (const json::array* array = value.if_array()) {
    if (is_uniform_flat(*array, kMinItems)) {
      write_table(out, *array, {0, array->size()});
      return;
    }
    out += '[';
    for (std::size_t i = 0; i < array->size(); ++i) {
      if (i != 0) out += ',';
      write_with_tables(out, (*array)[i]);
    }
    out += ']';
  } else if (const json::object* object = value.if_object()) {
    out += '{';
    bool first = true;
    for (const json::key_value_pair& member : *object) {
      if (!first) out += ',';
      first = false;
      ctxguard::write_json_string(out, member.key());
      out += ':';
      write_with_tables(out, member.value());
    }
    out += '}';
  } else {
    ctxguard::write_json_scalar(out, value);
  }
}

// Samples are grouped by the tool that produced them: "read_text_file", "memory open_nodes".
std::string source_group(std::string_view source) {
  static const std::string_view kServers[] = {"memory", "everything", "filesystem", "gnupg"};
  std::size_t end = source.find(' ');
  for (const std::string_view server : kServers) {
    if (source.substr(0, end) == server && end != std::string_view::npos) {
      end = source.find(' ', end + 1);
      break;
    }
  }
  return std::string(source.substr(0, end));
}

void emit_line(std::ostream* emit, std::string_view kind, std::string_view source,
               std::string_view json_form, std::string_view table_form, std::size_t json_tokens,
               std::size_t table_tokens) {
  if (emit == nullptr) return;
  std::string line = "{\"kind\":";
  ctxguard::write_json_string(line, kind);
  line += ",\"source\":";
  ctxguard::write_json_string(line, source);
  line += ",\"json\":";
  ctxguard::write_json_string(line, json_form);
  line += ",\"table\":";
  ctxguard::write_json_string(line, table_form);
  line += ",\"json_estimate\":" + std::to_string(json_tokens);
  line += ",\"table_estimate\":" + std::to_string(table_tokens);
  line += "}\n";
  *emit << line;
}

class Measurement {
 public:
  explicit Measurement(std::ostream* emit) : emit_(emit) {}

  void add_text(std::string_view source, std::string_view text) {
    ++texts_;
    auto parsed = ctxguard::parse_json(text);
    if (!parsed || !(parsed->is_array() || parsed->is_object())) return;
    ++json_texts_;
    const std::string minified = ctxguard::to_json(*parsed);
    if (!seen_.insert(minified).second) return;
    ++distinct_json_texts_;
    all_json_tokens_ += estimate_tokens(minified);
    all_table_tokens_ += add_value(source, *parsed, minified);
  }

  // Returns the tokens of the whole text with its qualifying arrays as tables.
  std::size_t add_value(std::string_view source, const json::value& value,
                        const std::string& minified) {
    std::vector<const json::array*> found;
    collect(value, found);
    if (found.empty()) return estimate_tokens(minified);
    Totals sample;
    sample.samples = 1;
    for (const json::array* array : found) {
      std::string table;
      write_table(table, *array, {0, array->size()});
      const std::size_t json_tokens = estimate_json_tokens(*array);
      const std::size_t table_tokens = estimate_tokens(table);
      ++sample.arrays;
      sample.items += array->size();
      sample.array_json_tokens += json_tokens;
      sample.array_table_tokens += table_tokens;
      // Two items with one short key are cheaper as JSON than with "columns" and "rows".
      if (table_tokens >= json_tokens) ++sample.arrays_not_smaller;
      emit_line(emit_, "array", source, ctxguard::to_json(*array), table, json_tokens,
                table_tokens);
    }
    std::string with_tables;
    write_with_tables(with_tables, value);
    sample.sample_json_tokens = estimate_tokens(minified);
    sample.sample_table_tokens = estimate_tokens(with_tables);
    emit_line(emit_, "sample", source, minified, with_tables, sample.sample_json_tokens,
              sample.sample_table_tokens);
    add(total_, sample);
    add(by_source_[source_group(source)], sample);
    return sample.sample_table_tokens;
  }

  void report() const {
    std::printf(
        "texts %zu, JSON %zu, distinct JSON %zu, with a uniform flat array (>= %zu items) %zu\n",
        texts_, json_texts_, distinct_json_texts_, kMinItems, total_.samples);
    std::printf("all distinct JSON texts: %zu tokens minified, %zu with tables (%.1f%% saved)\n",
                all_json_tokens_, all_table_tokens_, saving(all_json_tokens_, all_table_tokens_));
    std::printf("\n%-28s %7s %6s %7s | %10s %10s %7s | %10s %10s %7s\n", "source", "samples",
                "arrays", "items", "array json", "table", "saving", "sample", "w/ tables",
                "saving");
    for (const auto& [source, totals] : by_source_) print_row(source, totals);
    print_row("TOTAL", total_);
    std::printf("arrays whose table costs as much as the JSON or more: %zu of %zu\n",
                total_.arrays_not_smaller, total_.arrays);
    std::printf(
        "\n(estimated tokens; 'array' columns count only the qualifying arrays, 'sample'\n"
        " columns the whole minified texts that contain them)\n");
  }

 private:
  static void add(Totals& into, const Totals& from) {
    into.samples += from.samples;
    into.arrays += from.arrays;
    into.items += from.items;
    into.arrays_not_smaller += from.arrays_not_smaller;
    into.array_json_tokens += from.array_json_tokens;
    into.array_table_tokens += from.array_table_tokens;
    into.sample_json_tokens += from.sample_json_tokens;
    into.sample_table_tokens += from.sample_table_tokens;
  }

  static double saving(std::size_t before, std::size_t after) {
    return before == 0 ? 0.0
                       : 100.0 * (static_cast<double>(before) - static_cast<double>(after)) /
                             static_cast<double>(before);
  }

  static void print_row(const std::string& name, const Totals& t) {
    std::printf("%-28s %7zu %6zu %7zu | %10zu %10zu %6.1f%% | %10zu %10zu %6.1f%%\n", name.c_str(),
                t.samples, t.arrays, t.items, t.array_json_tokens, t.array_table_tokens,
                saving(t.array_json_tokens, t.array_table_tokens), t.sample_json_tokens,
                t.sample_table_tokens, saving(t.sample_json_tokens, t.sample_table_tokens));
  }

  std::ostream* emit_;
  std::size_t texts_ = 0;
  std::size_t json_texts_ = 0;
  std::size_t distinct_json_texts_ = 0;
  std::size_t all_json_tokens_ = 0;
  std::size_t all_table_tokens_ = 0;
  std::unordered_set<std::string> seen_;
  Totals total_;
  std::map<std::string, Totals> by_source_;
};

// Booking-like records as a reservations API returns them: short keys, mostly short values.
std::string generate_bookings(std::size_t count) {
  static const char* const kGuests[] = {"Ana Souza", "Björn Larsson",   "Chen Wei", "Dana Cohen",
                                        "Emeka Obi", "François Dupont", "Gita Rao", "Hiro Sato"};
  static const char* const kRooms[] = {"standard-double", "deluxe-king", "suite", "twin", "family"};
  static const char* const kStatuses[] = {"confirmed", "pending", "cancelled", "checked_in"};
  std::mt19937 random(42);
  auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  json::array bookings;
  for (std::size_t i = 0; i < count; ++i) {
    const int day = pick(1, 25);
    const int nights = pick(1, 6);
    char check_in[16];
    char check_out[16];
    std::snprintf(check_in, sizeof check_in, "2025-07-%02d", day);
    std::snprintf(check_out, sizeof check_out, "2025-07-%02d", day + nights);
    bookings.push_back(json::object{
        {"id", 100000 + static_cast<std::int64_t>(i)},
        {"reference", "BK-" + std::to_string(pick(100000, 999999))},
        {"guest", kGuests[pick(0, 7)]},
        {"room", kRooms[pick(0, 4)]},
        {"checkIn", check_in},
        {"checkOut", check_out},
        {"nights", nights},
        {"adults", pick(1, 3)},
        {"total", static_cast<double>(pick(8000, 250000)) / 100.0},
        {"currency", "EUR"},
        {"status", kStatuses[pick(0, 3)]},
        {"paid", pick(0, 1) == 1},
        {"notes", pick(0, 3) == 0 ? json::value("late arrival") : json::value(nullptr)}});
  }
  return ctxguard::to_json(json::object{{"bookings", std::move(bookings)}});
}

int usage() {
  std::fprintf(stderr,
               "usage: table_savings [--emit FILE] CORPUS.jsonl\n"
               "       table_savings [--emit FILE] --generate N\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string corpus;
  std::string emit_path;
  long generate = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--emit" && i + 1 < argc) {
      emit_path = argv[++i];
    } else if (arg == "--generate" && i + 1 < argc) {
      generate = std::strtol(argv[++i], nullptr, 10);
      if (generate <= 0) return usage();
    } else if (!arg.starts_with("--") && corpus.empty()) {
      corpus = arg;
    } else {
      return usage();
    }
  }
  if (corpus.empty() == (generate == 0)) return usage();

  std::ofstream emit_file;
  if (!emit_path.empty()) {
    emit_file.open(emit_path, std::ios::binary | std::ios::trunc);
    if (!emit_file) {
      std::fprintf(stderr, "table_savings: cannot write %s\n", emit_path.c_str());
      return 1;
    }
  }
  Measurement measurement(emit_path.empty() ? nullptr : &emit_file);

  if (generate > 0) {
    measurement.add_text("generated-bookings",
                         generate_bookings(static_cast<std::size_t>(generate)));
  } else {
    std::ifstream in(corpus, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "table_savings: cannot read %s\n", corpus.c_str());
      return 1;
    }
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty()) continue;
      auto row = ctxguard::parse_json(line);
      const json::object* object = row ? row->if_object() : nullptr;
      const json::value* text_value = object ? object->if_contains("text") : nullptr;
      const json::string* text = text_value ? text_value->if_string() : nullptr;
      if (text == nullptr) {
        std::fprintf(stderr, "table_savings: %s:%zu is not a corpus row\n", corpus.c_str(), number);
        return 1;
      }
      const json::value* source = object->if_contains("source");
      measurement.add_text(source && source->is_string() ? std::string_view(source->get_string())
                                                         : std::string_view("?"),
                           *text);
    }
  }
  measurement.report();
  if (emit_file.is_open() && !emit_file.flush()) {
    std::fprintf(stderr, "table_savings: writing %s failed\n", emit_path.c_str());
    return 1;
  }
  return 0;
}
