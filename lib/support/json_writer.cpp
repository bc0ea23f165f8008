#include "support/json_writer.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include "support/double_chars.hpp"

namespace ctxguard {
namespace {

namespace json = boost::json;

void write_double(std::string& out, double number) {
  if (std::isinf(number)) {
    out += number > 0 ? "1e999" : "-1e999";
    return;
  }
  if (std::isnan(number)) {  // no parser produces NaN; a value built in code might
    out += "null";
    return;
  }
  std::array<char, kMaxDoubleChars> buffer;
  const std::string_view text = format_double(number, buffer);
  out += text;
  // 5.0 reads back as a double only if it looks like one ("5" would become an integer for
  // Python, Boost.JSON and other typed clients).
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

template <class Integer>
void write_integer(std::string& out, Integer number) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
  out.append(buffer, result.ptr);
}

}  // namespace

void write_json_string(std::string& out, std::string_view text) {
  out += '"';
  const char* run = text.data();
  const char* const end = text.data() + text.size();
  for (const char* p = run; p != end; ++p) {
    const char escape = kJsonEscapes[static_cast<unsigned char>(*p)];
    if (escape == 0) continue;
    out.append(run, p);
    out += '\\';
    out += escape;
    if (escape == 'u') {
      constexpr std::string_view kHex = "0123456789abcdef";
      const auto byte = static_cast<unsigned char>(*p);
      out += "00";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
    run = p + 1;
  }
  out.append(run, end);
  out += '"';
}

void write_json_scalar(std::string& out, const json::value& scalar) {
  switch (scalar.kind()) {
    case json::kind::null:
      out += "null";
      break;
    case json::kind::bool_:
      out += scalar.get_bool() ? "true" : "false";
      break;
    case json::kind::int64:
      write_integer(out, scalar.get_int64());
      break;
    case json::kind::uint64:
      write_integer(out, scalar.get_uint64());
      break;
    case json::kind::double_:
      write_double(out, scalar.get_double());
      break;
    case json::kind::string:
      write_json_string(out, scalar.get_string());
      break;
    case json::kind::array:
    case json::kind::object:
      write_json(out, scalar);
      break;
  }
}

void write_json(std::string& out, const json::value& value) {
  write_json_windowed(out, value, [](const json::array& array) {
    return ItemWindow{0, array.size()};
  });
}

std::string to_json(const json::value& value) {
  std::string out;
  write_json(out, value);
  return out;
}

namespace {

// The bytes write_json writes for `value`, counted until they pass `limit` (then limit + 1).
std::size_t json_size_up_to(const json::value& value, std::size_t limit, std::string& scratch) {
  std::size_t size = 0;
  if (const json::array* array = value.if_array()) {
    size = 2 + (array->empty() ? 0 : array->size() - 1);
    for (const json::value& item : *array) {
      if (size > limit) break;
      size += json_size_up_to(item, limit - std::min(size, limit), scratch);
    }
  } else if (const json::object* object = value.if_object()) {
    size = 2 + (object->empty() ? 0 : object->size() * 2 - 1);  // the colons and commas
    for (const json::key_value_pair& member : *object) {
      if (size > limit) break;
      size += json_string_size(member.key());
      size += json_size_up_to(member.value(), limit - std::min(size, limit), scratch);
    }
  } else if (const json::string* string = value.if_string()) {
    size = json_string_size(*string);
  } else {
    scratch.clear();
    write_json_scalar(scratch, value);
    size = scratch.size();
  }
  return std::min(size, limit + 1);
}

void write_pretty(std::string& out, const json::value& value, int indent, int depth) {
  const auto new_line = [&](int level) {
    out += '\n';
    out.append(static_cast<std::size_t>(indent * level), ' ');
  };
  if (const json::array* array = value.if_array(); array != nullptr && !array->empty()) {
    out += '[';
    for (std::size_t i = 0; i < array->size(); ++i) {
      if (i != 0) out += ',';
      new_line(depth + 1);
      write_pretty(out, (*array)[i], indent, depth + 1);
    }
    new_line(depth);
    out += ']';
  } else if (const json::object* object = value.if_object();
             object != nullptr && !object->empty()) {
    out += '{';
    bool first = true;
    for (const json::key_value_pair& member : *object) {
      if (!first) out += ',';
      first = false;
      new_line(depth + 1);
      write_json_string(out, member.key());
      out += ": ";
      write_pretty(out, member.value(), indent, depth + 1);
    }
    new_line(depth);
    out += '}';
  } else {
    write_json(out, value);
  }
}

}  // namespace

std::string to_pretty_json(const json::value& value, int indent) {
  std::string out;
  write_pretty(out, value, indent, 0);
  out += '\n';
  return out;
}

std::size_t json_string_size(std::string_view text) {
  std::size_t size = 2 + text.size();
  for (const char c : text) {
    const char escape = kJsonEscapes[static_cast<unsigned char>(c)];
    if (escape != 0) size += escape == 'u' ? 5 : 1;
  }
  return size;
}

std::size_t json_size(const json::value& value) {
  std::string scratch;
  return json_size_up_to(value, std::numeric_limits<std::size_t>::max() - 1, scratch);
}

bool json_longer_than(const json::value& value, std::size_t limit) {
  std::string scratch;
  return json_size_up_to(value, limit, scratch) > limit;
}

}  // namespace ctxguard
