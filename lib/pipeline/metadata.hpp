#pragma once
// The `_ctxguard` object: what a shortened answer says about itself (the wire contract is in
// docs/protocol.md). Shared by first answers and ctxguard_fetch pages so both read the same.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "cursor/cursor_codec.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/fit/fitter.hpp"
#include "pipeline/fit/paginate.hpp"
#include "pipeline/fit/projection.hpp"

namespace ctxguard::pipeline {

// Issues the cursors of one answer: all point into the same cache entry.
class CursorIssuer {
 public:
  CursorIssuer(const cursor::CursorCodec& codec, std::uint64_t entry,
               std::chrono::system_clock::time_point now)
      : codec_(codec), entry_(entry), now_(now) {}

  std::string array_page(std::size_t part, const std::string& path, std::size_t offset,
                         std::size_t limit, const std::vector<std::string>& fields) const;
  // The page after what `cut` (in `part`) shows, with a page's `limit` and `fields` (0 and none:
  // the tool's page size, all fields); empty when `cut` shows the array's last item.
  std::string next_page(std::size_t part, const ArrayCut& cut, std::size_t limit = 0,
                        const std::vector<std::string>& fields = {}) const;
  std::string text_range(std::size_t part, const std::string& path, std::size_t offset) const;
  std::string text_chunk(std::size_t part, std::size_t index) const;
  // A line range going on: from byte `resume_at` of a text part to the end of line `last`.
  std::string line_range(std::size_t part, std::size_t resume_at, std::size_t last) const;
  // A line search going on: the lines matching `query` from line `first` on.
  std::string line_query(std::size_t part, std::size_t first, const std::string& query) const;
  // The value at `path` (any value: a whole part with "").
  std::string value(std::size_t part, const std::string& path) const;
  // A search continued: items of the array at `path` from `offset` on matching `query`, shown
  // with `fields` when the search asked for them.
  std::string array_query(std::size_t part, const std::string& path, std::size_t offset,
                          std::size_t limit, const std::vector<std::string>& fields,
                          const std::string& query) const;
  // An aggregate continued: its groups from `offset`, `limit` a page; `spec` is the aggregate as
  // AggregateSpec::to_cursor_fields writes it, `query` its filter.
  std::string aggregate(std::size_t part, const std::string& path, std::size_t offset,
                        std::size_t limit, const std::vector<std::string>& spec,
                        const std::string& query) const;

 private:
  // A cursor with a page size, a list (fields, or an aggregate) and a query.
  std::string with_list_and_query(cursor::CursorKind kind, std::size_t part,
                                  const std::string& path, std::size_t offset, std::size_t limit,
                                  const std::vector<std::string>& list,
                                  const std::string& query) const;

  const cursor::CursorCodec& codec_;
  std::uint64_t entry_;
  std::chrono::system_clock::time_point now_;
};

// path, offset, totalCount, pageSize, hasMore and nextCursor (absent on the last page).
boost::json::object cut_fields(const ArrayCut& cut, const std::string& next_cursor);

// estimatedTokens, tokenBudget, budgetUsed (estimated / budget) and budgetRemaining.
void set_budget_fields(boost::json::object& meta, std::size_t estimated_tokens,
                       std::size_t token_budget);

// What a first chunk's hint adds when its `_ctxguard` carries the text's digest.
inline constexpr std::string_view kTextDigestHint = " _ctxguard.digest describes the whole text.";
// What the first page of a search of a log adds when it carries the digest of the matches.
inline constexpr std::string_view kMatchesDigestHint =
    " _ctxguard.digest describes every matching entry.";

// One line telling the model how to continue from this answer alone; for a cut array of records
// shown from its first item, also how to count and sum them all.
std::string array_hint(const ArrayCut& primary, std::size_t other_cuts, std::string_view fetch_tool,
                       std::size_t max_page_size);
std::string text_hint(std::size_t shown_end, std::size_t total_bytes, bool has_more,
                      std::string_view fetch_tool);

// `body` (a JSON object or array as text) with `"_ctxguard": meta` added as its first member, or
// for an array as {"_ctxguard": meta, "items": body}: a client that cuts the answer's tail
// still shows it (docs/protocol.md 3.1).
std::string attach_metadata(const std::string& body, const boost::json::object& meta);

// The cursors a hint names as the way on, in the order they are looked for: the first one an
// answer's `_ctxguard` has is the one its way on names.
inline constexpr std::array<std::string_view, 3> kWayOnCursors{"nextCursor", "resultCursor",
                                                               "nextItemsCursor"};

// `meta` with what a model needs to go on first: the hint, then the cursors, then the rest in
// their order. A client that shows only the head of an answer shows these.
boost::json::object in_reading_order(const boost::json::object& meta);

// The first item of an answer whose `_ctxguard` is `meta`, when it offers a cursor: "ctxguard: "
// and its hint up to the sentence that names the cursor, the cursor written out in it — the
// way on, whole on its own, for a client that cuts or hides the rest (docs/protocol.md 3.1).
// Empty when there is no cursor to go on with.
std::string way_on_text(const boost::json::object& meta);

// The `_ctxguard` of an answer showing `cuts` (the first one is the primary: the page of a fetch,
// or the largest cut): its fields, then `extra`'s members, `otherCuts` and the hint.
// `cursor_for` gives each cut's nextCursor (empty on its last page).
boost::json::object array_metadata(const std::vector<ArrayCut>& cuts,
                                   const std::function<std::string(const ArrayCut&)>& cursor_for,
                                   const boost::json::object& extra, std::string_view fetch_tool,
                                   std::size_t max_page_size);

// The trailing text item of a text answer: {"_ctxguard": fields}.
std::string trailer_text(const boost::json::object& fields);

// The estimate an answer states of itself (estimatedTokens) is part of what it measures:
// `compose(stated)` writes the answer stating `stated`, `measure()` estimates what was written.
// Composed once with 0 to measure, then with the measure (and a little slack, for the figure's own
// digits) until the measure is within the stated figure, three rounds at most. Returns the
// figure: never below the measure of the answer last composed, when the rounds converge.
std::size_t settle_stated_tokens(const std::function<void(std::size_t stated)>& compose,
                                 const std::function<std::size_t()>& measure);

// Fills in the budget fields of `meta` with the tokens of the answer `render(meta)` writes plus
// `other_tokens` (what the answer holds besides that text). The figure is part of the text it
// measures, so it is settled to be never below the measure. Returns the text; `tokens` gets the
// figure.
std::string settle_budget_fields(
    boost::json::object& meta, std::size_t token_budget, std::size_t other_tokens,
    const std::function<std::string(const boost::json::object&)>& render, std::size_t& tokens);

// The `_ctxguard` of chunk `index` of text part `part`: chunkIndex, totalChunks,
// startLine, endLine, totalLines, bytesInChunk, totalBytes, hasMore, nextCursor and the hint.
boost::json::object chunk_metadata(const CachedPart& part, std::size_t part_index,
                                   std::size_t index, const CursorIssuer& issuer,
                                   std::string_view fetch_tool);

// The `_ctxguard` fields of a piece of a JSON value fetched by path, which comes as text when it
// is a string (its characters, unquoted) or too large for the budget (its JSON text): where the
// value is, and which of the two the pieces hold.
enum class PieceOf { kString, kJsonText };
boost::json::object value_piece_fields(std::string_view path, PieceOf pieces);

// Adds what summarization did to `meta` (stringsCut, valuesCollapsed, projections, resultCursor)
// and extends its hint; nothing when it did nothing.
void add_summary_fields(boost::json::object& meta, const ViewStats& stats,
                        const std::vector<Projection>& projections,
                        const std::string& result_cursor, std::string_view fetch_tool);

// A ctxguard_fetch answer: its way on (way_on_text, when not empty), then `texts`, an item each.
boost::json::object answer_result(std::string way_on, std::vector<std::string> texts);

}  // namespace ctxguard::pipeline
