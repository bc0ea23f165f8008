#include "support/json_reader.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

#include "support/double_chars.hpp"

namespace ctxguard {
namespace {

namespace json = boost::json;

// Boost.JSON's own value-building handler (detail/handler.hpp), except for on_double.
struct PreciseHandler {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  json::value_stack stack;
  std::string number;  // the text of the number being parsed, when it arrives in parts

  // The stack's own scratch memory comes from `scratch` (the heap, bounded); `reset` names the
  // storage of the values it builds. (Scratch in a monotonic arena would never be given back.)
  explicit PreciseHandler(json::storage_ptr scratch) : stack(std::move(scratch)) {}

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return true; }
  bool on_object_end(std::size_t n, json::error_code&) {
    stack.push_object(n);
    return true;
  }
  bool on_array_begin(json::error_code&) { return true; }
  bool on_array_end(std::size_t n, json::error_code&) {
    stack.push_array(n);
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    stack.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    stack.push_key(s);
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    stack.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    stack.push_string(s);
    return true;
  }
  bool on_number_part(json::string_view s, json::error_code&) {
    number.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
    number.clear();
    stack.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
    number.clear();
    stack.push_uint64(u);
    return true;
  }
  bool on_double(double fast, json::string_view s, json::error_code&) {
    std::string_view text(s.data(), s.size());
    if (!number.empty()) {
      number.append(text);
      text = number;
    }
    // Out of range: Boost's +-inf or 0 is JavaScript's too.
    const double precise = parse_double(text).value_or(fast);
    number.clear();
    stack.push_double(precise);
    return true;
  }
  bool on_bool(bool b, json::error_code&) {
    stack.push_bool(b);
    return true;
  }
  bool on_null(json::error_code&) {
    stack.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};

}  // namespace

Result<boost::json::value> parse_json(std::string_view text, boost::json::storage_ptr sp,
                                      std::size_t max_scratch_bytes) {
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  options.allow_invalid_utf8 = true;
  BoundedHeapResource scratch(max_scratch_bytes);
  try {
    // The handler (and the values it holds) is destroyed before `scratch`.
    json::basic_parser<PreciseHandler> parser(options, json::storage_ptr(&scratch));
    parser.handler().stack.reset(std::move(sp));
    json::error_code ec;
    const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
    if (!ec && used < text.size()) ec = json::error::extra_data;
    if (ec) return std::error_code(ec);
    return parser.handler().stack.release();
  } catch (const JsonMemoryLimit&) {
    return make_error_code(Error::kJsonTooLarge);
  }
}

}  // namespace ctxguard
