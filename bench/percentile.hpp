#pragma once
// The p-quantile (0..1) of timing samples, by rank: the benchmarks' p50 and p99.

#include <algorithm>
#include <cstddef>
#include <vector>

inline double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1,
                         static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}
