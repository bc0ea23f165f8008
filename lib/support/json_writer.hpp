#pragma once
// Minified JSON output that reads back JSON-equal to what was parsed (see json_reader.hpp).
//
// Boost.JSON's serializer prints 1.5 as `1.5E0` and infinity as `Infinity` (not JSON). Here
// doubles use the shortest text that reads back the same value (std::to_chars; `5.0` keeps its
// `.0` so typed clients still read a double), and +-infinity,
// which only a number like 2e720 can produce, is written as `1e999`/`-1e999`, which every JSON
// parser reads back as infinity again. Strings get the minimal escapes (`\"`, `\\`, `\b`, `\f`,
// `\n`, `\r`, `\t`, other control bytes as `\u00XX`); everything else, UTF-8 included, is copied.
// The token estimator (budget::TokenCounter::add_json) counts exactly this form.

#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace ctxguard {

void write_json_string(std::string& out, std::string_view text);
void write_json_scalar(std::string& out, const boost::json::value& scalar);  // not array/object
void write_json(std::string& out, const boost::json::value& value);
std::string to_json(const boost::json::value& value);

}  // namespace ctxguard
