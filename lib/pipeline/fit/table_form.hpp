#pragma once
// Lossless compact tables (optional, off by default: --tables). A uniform array of flat objects
// (every item an object with the same keys in the same order, every value a scalar) repeats its
// keys in every item; as a table it names them once:
//   [{"id":1,"name":"a"},{"id":2,"name":"b"}]  ->
//   {"columns":["id","name"],"rows":[[1,"a"],[2,"b"]]}
// Every value is kept exactly, so the array can be rebuilt item for item (a model reads it as
// easily). bench/table_savings.cpp measures the token savings against minified JSON.

#include <cstddef>
#include <string>

#include <boost/json/array.hpp>

#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

// True when `array` has at least `min_items` items, all objects with the same keys in the same
// order (at least one key), and every value is a scalar (not an object or array).
bool is_uniform_flat(const boost::json::array& array, std::size_t min_items = 2);

// Writes items [window.begin, window.begin + window.count) of a uniform flat `array` as
// {"columns":[...],"rows":[[...],...]} (minified, values as write_json_scalar writes them).
void write_table(std::string& out, const boost::json::array& array, ItemWindow window);

}  // namespace ctxguard::pipeline
