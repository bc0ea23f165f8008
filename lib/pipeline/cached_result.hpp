#pragma once
// What the cache keeps of a rewritten tool result: its parts as the server sent them, in the
// form pages are served from (parsed JSON, or text), so serving a page never re-parses or
// re-serializes the whole result.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "budget/answer_size.hpp"
#include "cache/expiring_lru_cache.hpp"
#include "config/settings.hpp"
#include "pipeline/fit/text_fit.hpp"
#include "pipeline/json_arena.hpp"
#include "pipeline/text/text_chunk.hpp"
#include "spill/spill_file.hpp"

namespace ctxguard::pipeline {

// A part written to --spill-dir: `file` keeps it (it is removed when the last copy goes) and
// `path` names it.
struct SpilledFile {
  std::shared_ptr<const spill::SpillFile> file;
  std::string path;
};

struct CachedPart {
  bool is_json = false;
  std::shared_ptr<JsonArena> arena;  // owns the memory of `json` (declared first: outlives it)
  boost::json::value json;           // is_json: the parsed value
  // Text parts: the text. JSON parts cut as text (the hard cap's last resort): the minified JSON,
  // kept so later ranges need no serialization of the whole value.
  std::string text;
  // Text parts: where its lines start (line ranges, chunk line numbers, line search).
  std::shared_ptr<const LineIndex> lines;
  std::vector<TextChunk> chunks;  // a text served in chunks: all of them, decided once
  // --spill-dir: the file holding this part in full (removed when the entry goes).
  std::optional<SpilledFile> spill;
};

struct CachedResult {
  std::string tool;
  std::vector<CachedPart> parts;  // cursors name a part by its index here
};

// Makes `part` a text part served in chunks within `limits`: the text, its line index and its
// chunks, decided once.
inline void set_chunked_text(CachedPart& part, std::string text,
                             std::shared_ptr<const LineIndex> lines,
                             const budget::FitBudget& limits) {
  part.text = std::move(text);
  part.chunks = chunk_text(part.text, limits, *lines);
  part.lines = std::move(lines);
}

// The memory an entry holds, as the cache charges it.
inline std::size_t memory_bytes(const CachedResult& entry) {
  std::size_t bytes = sizeof(CachedResult);
  for (const CachedPart& part : entry.parts) {
    bytes += part.text.size() + part.chunks.capacity() * sizeof(TextChunk);
    if (part.arena) bytes += part.arena->bytes();
    if (part.lines) bytes += part.lines->memory_bytes();
  }
  return bytes;
}

using ResultCache = cache::ExpiringLruCache<CachedResult>;

// What a chunk page's `_ctxguard` item may take: about 190 estimated tokens, up to 210 with an
// expensive cursor (its characters come out of a MAC), and room for longer numbers and names.
inline constexpr std::size_t kChunkMetadataTokens = 250;

// The same in characters and bytes, for clients that limit those: a cursor and a file path are
// most of it.
inline constexpr std::size_t kChunkMetadataChars = 1100;
// The tokens `"digest":` adds to the first chunk's `_ctxguard` besides the digest itself.
inline constexpr std::size_t kDigestKeyTokens = 4;

// What a chunk may take: the configured chunk size, and the room the budget and the client's
// limits leave its text beside the `_ctxguard` item (a budget set lower than the chunk size wins).
// Chunks are cut once, before any answer is written, and served by index: the room is planned,
// never corrected.
inline budget::FitBudget chunk_limits(const config::BudgetSettings& budget) {
  const budget::FitBudget whole = budget::FitBudget::of(budget);
  budget::FitBudget limits =
      text_room(whole, TextReserve::for_trailers(whole, kChunkMetadataTokens, kChunkMetadataChars));
  limits.tokens = std::min(limits.tokens, budget.summary.chunk_tokens);
  return limits;
}

// The chunk size in effect, in tokens.
inline std::size_t chunk_tokens(const config::BudgetSettings& budget) {
  return chunk_limits(budget).tokens;
}

// Whether `text` (of `tokens`) is served in chunks: more than one chunk would hold.
inline bool over_chunk_size(const config::BudgetSettings& budget, std::string_view text,
                            std::size_t tokens) {
  if (tokens > chunk_tokens(budget)) return true;
  const budget::FitBudget limits = chunk_limits(budget);
  return limits.limits_text() && budget::prefix_within(text, 0, limits) < text.size();
}

}  // namespace ctxguard::pipeline
