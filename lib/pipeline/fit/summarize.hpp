#pragma once
// Summarization: how a JSON value is shown when pagination alone does not
// bring an answer within its budget. A ValueView says, on top of the arrays cut to pages:
//   - strings longer than `max_string_chars` characters are cut at a word boundary and end in
//     "…[+N chars: PATH]" (PATH: the RFC 6901 pointer of the whole string in the cached value);
//   - objects and arrays nested deeper than `max_depth` read "[object of N keys: PATH]" or
//     "[array of N items: PATH]";
//   - records keep only some fields: the items of an array (`item_fields`) or one object
//     (`object_fields`); fields are keys, dotted to reach into nested objects ("guest.name").
// Everything left out stays one ctxguard_fetch away: {cursor: _ctxguard.resultCursor, path}.
// The writer here and the pagination planner (paginate.cpp) show values the same way; both use
// the helpers below for the text that replaces a value.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/json/value.hpp>

#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

using FieldList = std::vector<std::string>;
// Arrays shown shortened: the items each shows (arrays not named are shown whole).
using CutMap = std::unordered_map<const boost::json::array*, ItemWindow>;

struct ValueView {
  std::size_t max_string_chars = 0;  // 0: strings whole
  std::size_t max_depth = 0;         // 0: any depth (the value itself is depth 0)
  bool tables = false;               // --tables: uniform flat arrays as {"columns","rows"}
  std::unordered_map<const boost::json::array*, FieldList> item_fields;
  std::unordered_map<const boost::json::object*, FieldList> object_fields;

  bool summarizes() const {
    return max_string_chars != 0 || max_depth != 0 || tables || !item_fields.empty() ||
           !object_fields.empty();
  }
};

// The floor of tighten(): strings are never cut shorter than this.
inline constexpr std::size_t kMinStringChars = 40;

// One step tighter than `view`, for answers the configured limits leave over the budget: long
// strings cut to half their length (down to kMinStringChars), then, once strings are at their
// floor, values collapsed one level shallower (down to 1). A limit that is off (0) stays off.
// False when there is nothing left to tighten.
bool tighten(ValueView& view);

// Whether the items [window) of `array` (at `depth`) go out as a table under `view`: --tables is
// on, the array is uniform and flat (table_form.hpp), its items are neither projected nor
// collapsed, and none of their strings would be cut (a table shows values whole).
bool shows_as_table(const boost::json::array& array, ItemWindow window, const ValueView& view,
                    std::size_t depth, const FieldList* inherited);

// Values shown as they are (nothing summarized).
inline const ValueView kWholeView{};

// What a written view left out.
struct ViewStats {
  std::size_t strings_cut = 0;
  std::size_t values_collapsed = 0;
  std::vector<std::string> tables;  // where arrays went out as {"columns","rows"} (pointers)
};

// The text standing for string `text` (at `path`) when it has more than `max_chars` characters
// (code points): a prefix ending at a word boundary, then "…[+N chars: PATH]". nullopt when it
// is short enough (or max_chars is 0).
std::optional<std::string> cut_string(std::string_view text, std::size_t max_chars,
                                      std::string_view path);

// The text standing for a collapsed object or array at `path`.
std::string collapsed_value(const boost::json::value& value, std::string_view path);

// How a projection to `fields` uses the member `key`: dropped, kept whole, or kept with only
// `sub` of it (the remainders of "key.sub" fields).
enum class FieldUse { kDrop, kWhole, kPartial };
FieldUse field_use(const FieldList& fields, std::string_view key, FieldList& sub);

// Writes `value` (at pointer `path`, shown at depth `depth`) minified as `view` shows it, the
// arrays `cuts` names shortened. `path` is used as scratch and restored. `inherited`: the
// projection a dotted field passes down to this value (null: none).
void write_view(std::string& out, const boost::json::value& value, const ValueView& view,
                const CutMap& cuts, std::string& path, std::size_t depth,
                const FieldList* inherited, ViewStats& stats);

// Writes an object item of `parent` (or any value) at `path`, depth `depth`: the item-level entry
// point for pages (an item's projection comes from its array).
void write_view_item(std::string& out, const boost::json::value& item,
                     const boost::json::array& parent, const ValueView& view, const CutMap& cuts,
                     std::string& path, std::size_t depth, ViewStats& stats);

// The projection that applies to `object` (an item of `parent` when not null): its own, the
// array's, or the inherited one. Null: all fields.
const FieldList* projection_of(const ValueView& view, const boost::json::object& object,
                               const boost::json::array* parent, const FieldList* inherited);

}  // namespace ctxguard::pipeline
