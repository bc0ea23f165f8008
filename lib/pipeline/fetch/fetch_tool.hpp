#pragma once
// `ctxguard_fetch`: the tool ctxguard answers itself, from the cache, never forwarding it.
//
// Input: {cursor (required), limit?, fields?, path?, startLine?, endLine?, query?}.
//   - array cursors give {"items": [...], "_ctxguard": {...}} pages within the token budget
//     (nested long arrays cut, then long strings and deep values cut, then records projected,
//     then fewer items; `fields` projects explicitly);
//   - `path` (with any cursor of a JSON result, typically _ctxguard.resultCursor) gives the value
//     there: a string as text, an array as pages, an object laid out like a page;
//   - `query` finds items of a cached array, or lines of a cached text (paginated);
//   - text cursors give the next chunk, or the next piece of the text; `startLine`/`endLine`
//     give exactly those lines (1-based, inclusive) within the budget;
// always with a trailing {"_ctxguard": {...}} item for text. Problems the caller can fix (bad
// arguments, a malformed, tampered, expired or evicted cursor) are tool results with isError and
// one line saying what happened — never protocol errors.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/fit/projection.hpp"
#include "pipeline/fit/summarize.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/result_pipeline.hpp"

namespace ctxguard::pipeline {

struct FetchAnswer {
  boost::json::object result;  // a CallToolResult
  CallRecord record;           // tool = the fetch tool; stages = {"fetch"} or {"fetch-error"}
};

class FetchTool {
 public:
  FetchTool(const cursor::CursorCodec& codec, ResultCache& cache) : codec_(codec), cache_(cache) {}

  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& name() const { return name_; }

  // Answers one call; `arguments` is the call's `arguments` (null when absent). A page of a
  // tool's result is laid out with `settings_for` that tool (its budget, page sizes, switches).
  FetchAnswer answer(const boost::json::value& arguments, const SettingsFor& settings_for,
                     std::chrono::steady_clock::time_point now,
                     std::chrono::system_clock::time_point wall_now);

 private:
  // A query page that is the last: no match beyond it to resume from.
  static constexpr std::size_t kNoResume = SIZE_MAX;

  // What every step of one call reads: the settings of the tool its entry came from, and the
  // issuer of its cursors. Per call, never kept.
  struct Call {
    const config::BudgetSettings& budget;
    const CursorIssuer& issuer;
  };

  // What one call asks for, validated.
  struct Request {
    cursor::CursorPayload payload;
    std::size_t limit = 0;
    FieldList fields;
    bool fields_given = false;
    std::optional<std::string> path;
    std::optional<std::size_t> start_line;
    std::optional<std::size_t> end_line;
    std::string query;
  };
  // What is laid out: a page of `array` (items from `begin`, or those `indices` lists) or `tree`.
  struct Subject {
    const boost::json::array* array = nullptr;
    const boost::json::value* tree = nullptr;
    std::string path;
    std::size_t begin = 0;
    std::size_t count = 0;
    const std::vector<std::size_t>* indices = nullptr;
  };
  struct Layout {
    ValueView view;
    std::vector<Projection> projections;
    std::vector<ArrayCut> cuts;
    CutMap map;
    ViewStats stats;
    std::string body;
    std::size_t tokens = 0;
  };

  const FieldList* projection_rule(const CachedResult& entry, const Call& call) const;
  Layout lay_out(const CachedResult& entry, std::size_t part, const Call& call,
                 const Subject& subject, const Request& request,
                 const std::function<std::size_t(Layout&)>& compose) const;
  void answer_page(FetchAnswer& answer, const CachedResult& entry, std::size_t part,
                   const boost::json::array& array, const std::string& path, std::size_t begin,
                   const std::vector<std::size_t>* indices, std::size_t total_matches,
                   std::size_t resume, const Request& request, const Call& call,
                   boost::json::object extra) const;
  bool answer_array_query(FetchAnswer& answer, const CachedResult& entry, std::size_t part,
                          const boost::json::array& array, const std::string& path,
                          std::size_t begin, const Request& request, const Call& call,
                          std::string& error) const;
  void answer_value(FetchAnswer& answer, const CachedResult& entry, std::size_t part,
                    const boost::json::value& value, const std::string& path,
                    const Request& request, const Call& call) const;
  void answer_chunk(FetchAnswer& answer, const CachedPart& part, std::size_t part_index,
                    std::size_t index, const Call& call) const;
  // Lines [first, last] within the budget; a range continued by its cursor resumes at byte
  // `resume_at` (which is inside a line when one line alone is over the budget).
  void answer_lines(FetchAnswer& answer, const CachedPart& part, std::size_t part_index,
                    std::size_t first, std::size_t last, const Call& call,
                    std::optional<std::size_t> resume_at = std::nullopt) const;
  bool answer_line_query(FetchAnswer& answer, const CachedPart& part, std::size_t part_index,
                         const std::string& query, std::size_t from, const Call& call,
                         std::string& error) const;
  // Fills `answer` with the piece of `text` from byte `begin` that fits the budget and a trailing
  // {"_ctxguard": ...} item (with `extra` members) whose cursor continues at the piece's end.
  void answer_text(FetchAnswer& answer, std::string_view text, std::size_t begin, std::size_t part,
                   const std::string& path, const Call& call, boost::json::object extra) const;

  const cursor::CursorCodec& codec_;
  ResultCache& cache_;
  std::string name_{"ctxguard_fetch"};
};

}  // namespace ctxguard::pipeline
