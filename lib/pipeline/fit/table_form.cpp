#include "pipeline/fit/table_form.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace ctxguard::pipeline {
namespace {

namespace json = boost::json;

bool is_scalar(const json::value& value) { return !value.is_object() && !value.is_array(); }

}  // namespace

bool is_uniform_flat(const json::array& array, std::size_t min_items) {
  // An empty array has no columns to name, whatever min_items says.
  if (array.empty() || array.size() < min_items) return false;
  const json::object* first = array.front().if_object();
  if (first == nullptr || first->empty()) return false;
  for (const json::key_value_pair& member : *first) {
    if (!is_scalar(member.value())) return false;
  }
  const std::size_t width = first->size();
  // Most arrays that fail do so on the second item (a different shape), so the size check comes
  // before any key comparison, and each item stops at its first mismatch.
  for (std::size_t i = 1; i < array.size(); ++i) {
    const json::object* item = array[i].if_object();
    if (item == nullptr || item->size() != width) return false;
    const json::key_value_pair* expected = first->begin();
    for (const json::key_value_pair& member : *item) {
      if (member.key() != expected->key() || !is_scalar(member.value())) return false;
      ++expected;
    }
  }
  return true;
}

void write_table(std::string& out, const json::array& array, ItemWindow window) {
  out += "{\"columns\":[";
  // Every item has the first item's keys (is_uniform_flat), so the first names the columns even
  // when the window starts later or shows nothing.
  if (const json::object* first = array.empty() ? nullptr : array.front().if_object()) {
    bool first_key = true;
    for (const json::key_value_pair& member : *first) {
      if (!first_key) out += ',';
      first_key = false;
      write_json_string(out, member.key());
    }
  }
  out += "],\"rows\":[";
  for (std::size_t i = window.begin; i < window.begin + window.count; ++i) {
    if (i != window.begin) out += ',';
    out += '[';
    bool first_value = true;
    for (const json::key_value_pair& member : array[i].get_object()) {
      if (!first_value) out += ',';
      first_value = false;
      write_json_scalar(out, member.value());
    }
    out += ']';
  }
  out += "]}";
}

}  // namespace ctxguard::pipeline
