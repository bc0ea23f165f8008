#pragma once
// Minified JSON output that reads back JSON-equal to what was parsed (see json_reader.hpp).
//
// Boost.JSON's serializer prints 1.5 as `1.5E0` and infinity as `Infinity` (not JSON). Here
// doubles use the shortest text that reads back the same value (format_double; `5.0` keeps its
// `.0` so typed clients still read a double), and +-infinity,
// which only a number like 2e720 can produce, is written as `1e999`/`-1e999`, which every JSON
// parser reads back as infinity again. Strings get the minimal escapes (`\"`, `\\`, `\b`, `\f`,
// `\n`, `\r`, `\t`, other control bytes as `\u00XX`); everything else, UTF-8 included, is copied.
// The token estimator (budget::TokenCounter::add_json) counts exactly this form.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace ctxguard {

// 0 for a byte that JSON strings carry as is, else the character after the backslash ('u' for
// \u00XX). The token estimator counts escapes with the same table.
inline constexpr std::array<char, 256> kJsonEscapes = [] {
  std::array<char, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = 'u';
  table['\b'] = 'b';
  table['\f'] = 'f';
  table['\n'] = 'n';
  table['\r'] = 'r';
  table['\t'] = 't';
  table['"'] = '"';
  table['\\'] = '\\';
  return table;
}();

void write_json_string(std::string& out, std::string_view text);
void write_json_scalar(std::string& out, const boost::json::value& scalar);  // not array/object
void write_json(std::string& out, const boost::json::value& value);
std::string to_json(const boost::json::value& value);

// The bytes write_json_string writes for `text`, its quotes included.
std::size_t json_string_size(std::string_view text);
// The bytes write_json writes for `value`, counted without writing it.
std::size_t json_size(const boost::json::value& value);

// Whether write_json would write more than `limit` bytes for `value`. Stops counting once past
// the limit, so a large value costs no more than a small one.
bool json_longer_than(const boost::json::value& value, std::size_t limit);

// `value` as a person edits it: members and items one per line, indented by `indent` spaces a
// level, `"key": value`, empty objects and arrays as {} and [], scalars as write_json writes
// them, and a final line break. For files people keep (client configurations).
std::string to_pretty_json(const boost::json::value& value, int indent = 2);

// Which items of an array to write.
struct ItemWindow {
  std::size_t begin = 0;
  std::size_t count = 0;
};

template <class Window>
void write_json_windowed(std::string& out, const boost::json::value& value, const Window& window);

// Writes `object` with only the members whose key `keep(key)` accepts (a projection), their
// values as write_json_windowed does.
template <class Keep, class Window>
void write_json_members(std::string& out, const boost::json::object& object, const Keep& keep,
                        const Window& window) {
  out += '{';
  bool first = true;
  for (const boost::json::key_value_pair& member : object) {
    if (!keep(member.key())) continue;
    if (!first) out += ',';
    first = false;
    write_json_string(out, member.key());
    out += ':';
    write_json_windowed(out, member.value(), window);
  }
  out += '}';
}

// Writes `value` minified, each array showing only the items `window(array)` returns: the seam
// pagination uses to leave items out without copying anything.
template <class Window>
void write_json_windowed(std::string& out, const boost::json::value& value, const Window& window) {
  if (const boost::json::array* array = value.if_array()) {
    const ItemWindow shown = window(*array);
    out += '[';
    for (std::size_t i = shown.begin; i < shown.begin + shown.count; ++i) {
      if (i != shown.begin) out += ',';
      write_json_windowed(out, (*array)[i], window);
    }
    out += ']';
  } else if (const boost::json::object* object = value.if_object()) {
    write_json_members(
        out, *object, [](std::string_view) { return true; }, window);
  } else {
    write_json_scalar(out, value);
  }
}

}  // namespace ctxguard
