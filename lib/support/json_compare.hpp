#pragma once
// Ordering JSON numbers exactly across Boost.JSON's three kinds (int64, uint64, double): what the
// digest's min/max needs, where 18446744073709551615 must not equal 1.8446744073709552e19.

#include <boost/json/value.hpp>

namespace ctxguard {

template <class T>
int json_three_way(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Integers compare exactly; with a double involved, as doubles; equal values of different
// kinds (5 and 5.0) order by kind so that min and max do not depend on the items' order.
int compare_json_numbers(const boost::json::value& a, const boost::json::value& b);

// The common cases inline: fields of int64s or of doubles.
[[gnu::always_inline]] inline int compare_json_numbers_fast(const boost::json::value& a,
                                                            const boost::json::value& b) {
  if (a.is_int64() && b.is_int64()) return json_three_way(a.get_int64(), b.get_int64());
  if (a.is_double() && b.is_double() && a.get_double() != b.get_double()) {
    return a.get_double() < b.get_double() ? -1 : 1;
  }
  return compare_json_numbers(a, b);
}

}  // namespace ctxguard
