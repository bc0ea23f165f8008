#pragma once
// Summarization: how a JSON value is shown when pagination alone does not
// bring an answer within its budget. A ValueView says, on top of the arrays cut to pages:
//   - strings longer than `max_string_chars` characters are cut at a word boundary and end in
//     "…[+N chars: PATH]" (PATH: the RFC 6901 pointer of the whole string in the cached value);
//   - objects and arrays nested deeper than `max_depth` read "[object of N keys: PATH]" or
//     "[array of N items: PATH]" (an object holding arrays also names its largest one:
//     "[object of 3 keys (children: 45 items): PATH]");
//   - arrays of objects or arrays nested in `max_array_nesting` arrays or more read
//     "[array of N items: PATH]": the breadth level (fitter.hpp) shows a tree level by level;
//   - records keep only some fields: the items of an array (`item_fields`) or one object
//     (`object_fields`); fields are keys, dotted to reach into nested objects ("guest.name").
// Everything left out stays one ctxguard_fetch away: {cursor: _ctxguard.resultCursor, path}.
// The writer here and the pagination planner (paginate.cpp) show values the same way; both use
// the helpers below for the text that replaces a value.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <boost/json/value.hpp>

#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

using FieldList = std::vector<std::string>;
// Arrays shown shortened: the items each shows (arrays not named are shown whole).
using CutMap = std::unordered_map<const boost::json::array*, ItemWindow>;

struct ValueView {
  std::size_t max_string_chars = 0;   // 0: strings whole
  std::size_t max_depth = 0;          // 0: any depth (the value itself is depth 0)
  std::size_t max_array_nesting = 0;  // 0: off; else arrays inside this many arrays collapse
  bool tables = false;                // --tables: uniform flat arrays as {"columns","rows"}
  std::unordered_map<const boost::json::array*, FieldList> item_fields;
  std::unordered_map<const boost::json::object*, FieldList> object_fields;
  // Values given back after the levels (fitter.hpp): never collapsed, their strings never cut,
  // whatever the limits above say (what they hold is judged by the limits again).
  std::unordered_set<const boost::json::value*> whole;

  bool shows_whole(const boost::json::value& value) const {
    return !whole.empty() && whole.contains(&value);
  }

  bool summarizes() const {
    return max_string_chars != 0 || max_depth != 0 || max_array_nesting != 0 || tables ||
           !item_fields.empty() || !object_fields.empty();
  }
};

// Where a value stands in what is shown: how deep (the value shown is depth 0) and inside how
// many arrays.
struct Nesting {
  std::size_t depth = 0;
  std::size_t arrays = 0;

  Nesting in_array() const { return {.depth = depth + 1, .arrays = arrays + 1}; }
  Nesting in_object() const { return {.depth = depth + 1, .arrays = arrays}; }
};

// Where the items of a page stand: inside the array they are items of.
inline constexpr Nesting kPageItem{.depth = 1, .arrays = 1};

// The breadth level (max_array_nesting) collapses a nested array only when its JSON is longer
// than this, about what the `_ctxguard` of the fetch that reads it back costs: a small array in
// every record of a page (a row's one-item history) would cost a walk one fetch per record and
// gain the answer a few words each; the page shows fewer records whole instead
// (docs/protocol.md section 2.3).
inline constexpr std::size_t kMinBreadthCollapseBytes = 512;

// Whether `value` (at `nesting`) is shown collapsed under `view`: a non-empty object or array
// deeper than max_depth, or a non-empty array holding objects or arrays, longer than
// kMinBreadthCollapseBytes, inside max_array_nesting arrays or more. An empty value or a list of
// scalars says as much as its placeholder would.
bool collapses(const boost::json::value& value, const ValueView& view, Nesting nesting);

// The floor of tighten(): strings are never cut shorter than this.
inline constexpr std::size_t kMinStringChars = 40;

// One step tighter than `view`, for answers the configured limits leave over the budget: long
// strings cut to half their length (down to kMinStringChars), then, once strings are at their
// floor, values collapsed one level shallower (down to 1). A limit that is off (0) stays off.
// False when there is nothing left to tighten.
bool tighten(ValueView& view);

// Whether the items [window) of `array` (at `depth`, under the projection `inherited` from the
// items above it; the root by default) go out as a table under `view`: --tables is on, the array
// is uniform and flat (table_form.hpp), its items are neither projected nor collapsed, and none
// of their strings would be cut (a table shows values whole).
bool shows_as_table(const boost::json::array& array, ItemWindow window, const ValueView& view,
                    std::size_t depth = 0, const FieldList* inherited = nullptr);

// Values shown as they are (nothing summarized).
inline const ValueView kWholeView{};

// A value a written view showed shortened (collapsed, or a string cut), with where it stands, so
// that it can be written whole on its own (write_view_at) and given back when that fits.
struct Shortened {
  const boost::json::value* value = nullptr;
  const boost::json::array* parent = nullptr;  // when the value is an item of an array
  std::optional<FieldList> inherited;          // the projection it stands under, if any
  Nesting nesting;
  std::string path;
  std::string shown;  // the text that stands for it
  double weight = 1;  // how often the answer shows it (a part structuredContent repeats: 2)
};

// What a written view left out.
struct ViewStats {
  std::size_t strings_cut = 0;
  std::size_t values_collapsed = 0;
  std::vector<std::string> tables;  // where arrays went out as {"columns","rows"} (pointers)
  std::vector<Shortened> shortened;
  // The fields a projection left out of the records written, by the array (or the one object)
  // it projected, first seen first: _ctxguard.projections lists them all, those of records shown
  // after the projection was planned too.
  std::map<const void*, std::vector<std::string>> fields_left_out;
};

// The text standing for string `text` (at `path`) when it has more than `max_chars` characters
// (code points): a prefix ending at a word boundary, then "…[+N chars: PATH]". nullopt when it
// is short enough (or max_chars is 0).
std::optional<std::string> cut_string(std::string_view text, std::size_t max_chars,
                                      std::string_view path);

// The text standing for a collapsed object or array at `path`.
std::string collapsed_value(const boost::json::value& value, std::string_view path);

// A value is collapsed only when its JSON is longer than its placeholder's by more than this:
// a placeholder that saves less than a few words still costs the reader a fetch, and one for a
// value shorter than itself costs room as well (docs/protocol.md section 2.3).
inline constexpr std::size_t kPlaceholderMarginBytes = 24;

// What stands for `value` (at `path`, one collapses() collapses): its placeholder, or nullopt
// when the value's JSON is not longer than the placeholder's by more than kPlaceholderMarginBytes
// (it is then shown as it is). The writer, the planner and projection all decide here.
std::optional<std::string> collapsed_text(const boost::json::value& value, std::string_view path);

// How a projection to `fields` uses the member `key`: dropped, kept whole, or kept with only
// `sub` of it (the remainders of "key.sub" fields).
enum class FieldUse { kDrop, kWhole, kPartial };
FieldUse field_use(const FieldList& fields, std::string_view key, FieldList& sub);

// Writes `value` (at pointer `path`, the value shown: depth 0) minified as `view` shows it, the
// arrays `cuts` names shortened. `path` is used as scratch and restored.
void write_view(std::string& out, const boost::json::value& value, const ValueView& view,
                const CutMap& cuts, std::string& path, ViewStats& stats);

// Writes `at.value` where it stands (its nesting, parent and inherited projection) as `view`
// shows it: with `at.value` in view.whole, what giving it back would write in its place.
std::string write_view_at(const Shortened& at, const ValueView& view, const CutMap& cuts);

// Writes an item of `parent` at `path`, standing at kPageItem: the item-level entry point for
// pages (an item's projection comes from its array).
void write_view_item(std::string& out, const boost::json::value& item,
                     const boost::json::array& parent, const ValueView& view, const CutMap& cuts,
                     std::string& path, ViewStats& stats);

// The projection that applies to `object` (an item of `parent` when not null): its own, the
// array's, or the inherited one. Null: all fields.
const FieldList* projection_of(const ValueView& view, const boost::json::object& object,
                               const boost::json::array* parent, const FieldList* inherited);

}  // namespace ctxguard::pipeline
