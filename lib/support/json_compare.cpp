#include "support/json_compare.hpp"

namespace ctxguard {

namespace json = boost::json;

namespace {

double as_double(const json::value& number) {
  if (number.is_int64()) return static_cast<double>(number.get_int64());
  if (number.is_uint64()) return static_cast<double>(number.get_uint64());
  return number.get_double();
}

}  // namespace

int compare_json_numbers(const json::value& a, const json::value& b) {
  if (a.is_int64() && b.is_int64()) return json_three_way(a.get_int64(), b.get_int64());
  if (a.is_uint64() && b.is_uint64()) return json_three_way(a.get_uint64(), b.get_uint64());
  // Parsed integers are int64 unless above INT64_MAX, so int64 vs uint64 is decided by sign.
  if (a.is_int64() && b.is_uint64()) {
    return a.get_int64() < 0
               ? -1
               : json_three_way(static_cast<std::uint64_t>(a.get_int64()), b.get_uint64());
  }
  if (a.is_uint64() && b.is_int64()) return -compare_json_numbers(b, a);
  if (const int by_value = json_three_way(as_double(a), as_double(b))) return by_value;
  return json_three_way(static_cast<int>(a.kind()), static_cast<int>(b.kind()));
}

}  // namespace ctxguard
