#pragma once
// One ctxguard_fetch call once its cached entry is found: what it asks for, the settings of the
// tool the entry came from, and the answer being built. Internal to pipeline/fetch: FetchTool
// makes one per call. The dispatch (the part's kind against the cursor's kind) is in
// fetch_call.cpp, the JSON answers in fetch_json.cpp, the text answers in fetch_text.cpp.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "config/settings.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/fetch/fetch_request.hpp"
#include "pipeline/fetch/fetch_tool.hpp"
#include "pipeline/fit/fitter.hpp"
#include "pipeline/fit/text_fit.hpp"
#include "pipeline/metadata.hpp"

namespace ctxguard::pipeline {

class FetchCall {
 public:
  struct Context {
    const std::string& tool_name;  // the fetch tool's, for hints
    const CachedResult& entry;
    const FetchRequest& request;
    std::size_t limit = 0;  // the page size in effect (page_limit)
    const config::BudgetSettings& budget;
    const CursorIssuer& issuer;
  };

  FetchCall(const Context& context, FetchAnswer& answer)
      : context_(context),
        request_(context.request),
        part_index_(context.request.payload.part),
        part_(context.entry.parts[part_index_]),
        answer_(answer) {}

  // Fills the answer; a refusal when the cursor or the arguments do not fit the cached part.
  Refusable<> run();

 private:
  // A query page that is the last: no match beyond it to resume from.
  static constexpr std::size_t kNoResume = SIZE_MAX;

  // A page of an array: items from `begin`, or the matches `indices` lists.
  struct Page {
    const boost::json::array& array;
    std::string path;
    std::size_t begin = 0;
    const std::vector<std::size_t>* indices = nullptr;  // a search's matches
    std::size_t total_matches = 0;                      // a search: every match
    std::size_t resume = kNoResume;                     // a search: the first match not listed
  };
  class PageSubject;
  class ValueSubject;

  FitBudget budget() const { return FitBudget::of(context_.budget); }
  // What a text answer sets aside for its trailing `_ctxguard` item (`more_*` beyond a piece's).
  TextReserve trailer_reserve(std::size_t more_tokens = 0, std::size_t more_chars = 0) const;
  FitOptions fit_options() const;

  // The dispatch: text parts (by cursor kind), then JSON parts (by the value's kind).
  Refusable<> answer_text_part();
  Refusable<> answer_text_cursor();
  Refusable<> answer_json_part();
  Refusable<> answer_value_piece(const boost::json::value& value, const std::string& path);
  Refusable<> answer_array(const boost::json::array& array, const std::string& path);

  // fetch_json.cpp
  void answer_page(const Page& page);
  boost::json::object page_meta(const Page& page, const FitPlan& plan, const ViewStats& stats,
                                const std::optional<std::string>& summary) const;
  boost::json::object search_meta(const Page& page, const FitPlan& plan,
                                  boost::json::object meta) const;
  void answer_item_as_text(const Page& page, const ArrayCut& shown);
  Refusable<> answer_array_query(const boost::json::array& array, const std::string& path,
                                 std::size_t begin);
  void answer_no_match(const std::string& path, std::size_t total);
  void answer_value(const boost::json::value& value, const std::string& path);
  // Composes the answer from a body and its `_ctxguard`, within the budget; its size.
  AnswerSize compose(boost::json::object meta, const std::string& body);

  // fetch_aggregate.cpp: `aggregate` over the array at `path`, its groups a page at a time.
  Refusable<> answer_aggregate(const boost::json::array& array, const std::string& path);

  // fetch_text.cpp
  // The text part's line index: the cached one, or one built into `own` (a JSON part cut as
  // text has none cached).
  const LineIndex* line_index(std::optional<LineIndex>& own) const;
  void answer_chunk(std::size_t index);
  // Lines [first, last] within the budget; a range continued by its cursor resumes at byte
  // `resume_at` (which is inside a line when one line alone is over the budget).
  void answer_lines(std::size_t first, std::size_t last,
                    std::optional<std::size_t> resume_at = std::nullopt);
  Refusable<> answer_line_query(std::size_t from);
  // The piece of `text` from byte `begin` that fits the budget and a trailing
  // {"_ctxguard": ...} item (with `extra` members) whose cursor continues at the piece's end.
  void answer_text(std::string_view text, std::size_t begin, const std::string& path,
                   const boost::json::object& extra);
  // The answer: `piece` and a trailing {"_ctxguard": meta} item, its budget fields settled; the
  // answer's size.
  AnswerSize set_text_answer(std::string_view piece, boost::json::object meta);

  const Context& context_;
  const FetchRequest& request_;
  std::size_t part_index_;
  const CachedPart& part_;
  FetchAnswer& answer_;
};

}  // namespace ctxguard::pipeline
