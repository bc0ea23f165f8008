#pragma once
// Parsing JSON so that nothing the server sent changes value on its way through ctxguard.
//
// Boost.JSON 1.81 parses doubles with a fast algorithm that is off by one ulp for about one
// number in five with 16-17 significant digits (measured: 1238.8249400479617 comes back as
// ...615). A proxy that rewrites results must not alter data, so doubles are re-read here with
// std::from_chars, which rounds correctly. Together with the writer (json_writer.hpp), which
// prints the shortest text that reads back the same double, every number survives a rewrite
// JSON-equal: what a client's JSON.parse makes of it is unchanged.

#include <cstddef>
#include <string_view>

#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include "support/error.hpp"

namespace ctxguard {

// Deep enough for any real MCP payload; Boost.JSON's default of 32 rejects legitimate results.
inline constexpr std::size_t kMaxJsonDepth = 4096;

// Parses exactly one JSON text (surrounding whitespace allowed) into storage `sp`. Invalid
// UTF-8 in strings is accepted and kept: judging it is the peers' business. Numbers too large
// for a double become +-infinity, as in JavaScript.
Result<boost::json::value> parse_json(std::string_view text, boost::json::storage_ptr sp = {});

}  // namespace ctxguard
