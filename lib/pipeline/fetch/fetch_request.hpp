#pragma once
// A ctxguard_fetch call's arguments, checked: what it asks for, or why it is refused. Refusals
// are what the caller can fix (docs/protocol.md section 5): each is one line of text in
// an isError tool result, never a protocol error.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "pipeline/fetch/aggregate.hpp"
#include "pipeline/fit/summarize.hpp"

namespace ctxguard::pipeline {

// Why a call is refused; each has one message (fetch_refusal_message).
enum class FetchError {
  kCursorMissing,    // no `cursor` string
  kCursorMalformed,  // not a cursor ctxguard could have issued
  kCursorForged,     // altered, or from another session
  kCursorExpired,    // older than the cursors' lifetime (`number`: seconds)
  kNotWholeNumber,   // `detail` is not a whole number
  kBelowOne,         // `detail` is `number`, below 1
  kLimitOverMax,     // `limit` over the tool's maxPageSize (`number`)
  kFieldsNotList,    // `fields` is not a list of key names
  kPathNotPointer,   // `path` is not a JSON Pointer
  kQueryNotString,
  kQueryEmpty,
  kQueryInvalid,  // the query's own problem, in `detail`
  kEvicted,       // the cursor's result is no longer cached
  kMismatch,      // the cursor points outside its result
  kSearchOff,     // search: false for `detail`'s results
  kLinesOnJson,   // startLine/endLine with a cursor into JSON
  kEndBeforeStart,
  kPathOnText,         // `path` with a cursor into text
  kNoValueAtPath,      // nothing at `detail`
  kQueryOnPiece,       // `query` with a cursor to a piece of one value
  kQueryOnString,      // `query` on the string at `detail`
  kQueryOnScalar,      // `query` on a value that is neither array nor text
  kAggregateInvalid,   // the aggregate's own problem, in `detail`
  kAggregateNotArray,  // `aggregate` on text or a value that is not an array
};

struct FetchRefusal {
  FetchError error = FetchError::kMismatch;
  std::string detail = {};  // the argument, path, tool or query problem the message names
  std::int64_t number = 0;  // the number the message names
};

// A value (`Refusable<>`: the answer is written), or why the call is refused.
template <class T = void>
using Refusable = boost::system::result<T, FetchRefusal>;

// A refusal the error says everything about.
inline FetchRefusal refusal(FetchError error) { return FetchRefusal{.error = error}; }

// The line the caller reads.
std::string fetch_refusal_message(const FetchRefusal& refusal);
// Its name in telemetry (ctxguard_cursor_errors_total's reason, a call record's `error`).
std::string_view fetch_refusal_reason(FetchError error);

// `Refusable::value()` on a refusal: a caller that did not look first. Never on the message path.
[[noreturn]] inline void throw_exception_from_error(const FetchRefusal& refusal,
                                                    const boost::source_location& /*where*/) {
  throw std::runtime_error(fetch_refusal_message(refusal));
}

// What a call asks for, its arguments checked one by one.
struct FetchRequest {
  cursor::CursorPayload payload;     // the decoded cursor (offset reset for a new query)
  std::optional<std::size_t> limit;  // as given; checked against the tool's maxPageSize later
  FieldList fields;                  // given, or the cursor's
  bool fields_given = false;         // `fields` was passed (even empty)
  std::optional<std::string> path;   // `path`, a JSON Pointer
  std::optional<std::size_t> start_line;
  std::optional<std::size_t> end_line;
  std::string query;                       // given, or the cursor's
  std::optional<AggregateSpec> aggregate;  // given, or the cursor's
};

// Checks `arguments` (a call's `arguments`; null when absent) in the order a caller reads the
// problems: the cursor first, decoded with `codec` at `wall_now`.
Refusable<FetchRequest> parse_fetch_request(const boost::json::value& arguments,
                                            const cursor::CursorCodec& codec,
                                            std::chrono::system_clock::time_point wall_now);

// The page size of a call for a result of a tool with `settings`: the given limit, else the one
// the cursor carries (a reload may have lowered the maximum since), else the tool's page size.
// A refusal when the given limit is over the tool's maximum.
Refusable<std::size_t> page_limit(const FetchRequest& request,
                                  const config::BudgetSettings& settings);

}  // namespace ctxguard::pipeline
