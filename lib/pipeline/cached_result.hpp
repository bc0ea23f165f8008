#pragma once
// What the cache keeps of a rewritten tool result: its parts as the server sent them, in the
// form pages are served from (parsed JSON, or text), so serving a page never re-parses or
// re-serializes the whole result.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "cache/expiring_lru_cache.hpp"
#include "pipeline/json_arena.hpp"

namespace ctxguard::pipeline {

struct CachedPart {
  bool is_json = false;
  std::shared_ptr<JsonArena> arena;  // owns the memory of `json` (declared first: outlives it)
  boost::json::value json;           // is_json: the parsed value
  // Text parts: the text. JSON parts cut as text (the hard cap's last resort): the minified JSON,
  // kept so later ranges need no serialization of the whole value.
  std::string text;
};

struct CachedResult {
  std::string tool;
  std::vector<CachedPart> parts;  // cursors name a part by its index here
};

using ResultCache = cache::ExpiringLruCache<CachedResult>;

}  // namespace ctxguard::pipeline
