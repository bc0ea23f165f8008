#pragma once
// Pagination: which arrays of a JSON answer to shorten, and writing the answer
// with them shortened.
//
// The planner walks the parsed value once, bottom-up, and records every array longer than
// `min_cut_items` with the token cost of each item. It then cuts, largest array first, each
// array longer than the page size to one page, until the answer fits; if that is not enough it
// shortens the largest arrays still shown further (never below one item). Cutting an array
// inside an item is accounted to the items around it, so nested cuts add up correctly. Nothing
// is copied: the writer reads the original value and skips the items that are cut. The order of
// items is always the server's.
//
// Costs come from the token estimator fed the minified bytes in writing order, so the cost of the
// whole value is its estimate and each item's cost is exactly its share. Only the `_ctxguard`
// object is an allowance: the caller verifies the written answer and re-plans if it is too large.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/json/value.hpp>

#include "budget/token_estimator.hpp"
#include "pipeline/fit/summarize.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

// What values cost in an answer, in the units the planner prices them in, read from one
// budget::TokenCounter walk: estimated tokens, and the characters (UTF-16 code units) and bytes
// they add to the text a client reads. As an excess (what a plan must remove), a unit that is
// not limited is minus infinity, so no saving is ever needed in it.
struct Cost {
  double tokens = 0;
  double chars = 0;
  double bytes = 0;

  // An excess in tokens alone.
  static Cost tokens_only(double tokens);
  // Whether some unit is still over (above 0).
  bool over() const { return tokens > 0 || chars > 0 || bytes > 0; }
  Cost& operator+=(const Cost& other);
  Cost& operator-=(const Cost& other);
  friend Cost operator+(Cost a, const Cost& b) { return a += b; }
  friend Cost operator-(Cost a, const Cost& b) { return a -= b; }
};

// One shortened array as the answer shows it.
struct ArrayCut {
  std::size_t part = 0;        // the cached part the array is in
  std::string path;            // RFC 6901 pointer of the array inside that part
  std::size_t begin = 0;       // index of the first item shown (0 in a first answer)
  std::size_t shown = 0;       // items shown
  std::size_t total = 0;       // items in the array
  double original_cost = 0;    // cost of the whole array: cuts are listed largest first
  bool is_page = false;        // the page a ctxguard_fetch answer consists of
  bool holds_records = false;  // its first item is an object: counts and sums apply
};

using ShownRange = ItemWindow;

class CutPlanner {
 public:
  // `cut_cost`: what listing one more shortened array costs (its path and cursor in _ctxguard).
  CutPlanner(std::size_t page_size, std::size_t min_cut_items, Cost cut_cost = {})
      : page_size_(page_size), min_cut_items_(min_cut_items), cut_cost_(cut_cost) {}

  // Prices values as `view` shows them (strings cut, deep values collapsed, records projected);
  // set before adding trees. `view` must outlive the planner.
  void set_view(const ValueView& view) { view_ = &view; }
  // Prices characters exactly (a client limits them); otherwise Cost::chars is the bytes.
  // Set before adding trees.
  void count_chars(bool count) { count_chars_ = count; }

  // Registers the cuttable arrays of `root`, the value of cached part `part` at `path`. Returns
  // its cost: the token estimate, characters and bytes of its minified form.
  Cost add_tree(const boost::json::value& root, std::size_t part, const std::string& path);

  // Each token of `part` counts `weight` times (a part structuredContent mirrors counts twice);
  // its characters and bytes count once when the part is read as text, not at all otherwise.
  void set_weight(std::size_t part, double weight, bool in_text = true);

  // Registers a page: items [begin, begin + count) of `array` (at `path` in `part`), or with
  // `indices` the items it lists (count = its size; a query's matches), each as the view shows
  // it. The page itself may shrink to one item.
  Cost add_page(const boost::json::array& array, std::size_t part, const std::string& path,
                std::size_t begin, std::size_t count,
                const std::vector<std::size_t>* indices = nullptr);

  // Cuts until `excess` is gone in every unit. Returns true when it is.
  bool cut(Cost excess);
  // Only the first step of cut(): arrays longer than a page cut to one page, largest first.
  bool cut_to_pages(Cost excess);
  // Only the second step: the largest arrays shown shortened further, never below `min_keep`
  // items (nor below one).
  bool shrink_shown(Cost excess, std::size_t min_keep = 1);
  // Shows each array as `cuts` says (the map of an earlier plan on the same values).
  void apply(const CutMap& cuts);
  // Shows at most `most` items of each array shown shortened (a page included).
  void cap_shown(std::size_t most);
  // Shows more of the arrays shown shortened, the page first, then the largest: each one item
  // at a time from its end while the next item's cost fits `room` (which is reduced by what is
  // added), up to `max_keep` items, its page (a page: its own length) or its whole length.
  // Returns the items added.
  std::size_t grow_shown(Cost& room, std::size_t max_keep);
  // What the last cut could not remove (nothing over when it reached its target).
  const Cost& excess_left() const { return excess_left_; }

  // What the walks met: the longest string value (in bytes) and the deepest array or object
  // (the value added is depth 0). A view whose limits neither reaches prices the values the same.
  std::size_t longest_string() const { return longest_string_; }
  std::size_t deepest_container() const { return deepest_container_; }
  // The most arrays an array of objects or arrays met stands inside (0: none inside an array):
  // what the breadth level may collapse.
  std::size_t deepest_array_nesting() const { return deepest_array_nesting_; }

  // Arrays shown shortened, largest first; a page (if any) comes first.
  std::vector<ArrayCut> visible_cuts() const;
  // What the writer needs: every array shown shortened, and the page.
  CutMap cut_map() const;

 private:
  struct Candidate {
    const boost::json::array* array = nullptr;
    std::size_t part = 0;
    std::string path;
    std::size_t begin = 0;
    std::size_t count = 0;  // items in view (a page: its items; otherwise the whole array)
    std::size_t keep = 0;   // items shown
    std::vector<Cost> item_cost;
    std::vector<int> item_cuts;  // shortened arrays listed from inside each item
    Cost shown_cost;             // sum of item_cost[0, keep)
    double original_cost = 0;    // in tokens: arrays are cut largest first
    double weight = 1;           // of its tokens
    double text_weight = 1;      // of its characters and bytes
    int parent = -1;             // the nearest enclosing candidate
    std::size_t parent_item = 0;
    bool is_page = false;
  };

  // One step of the path to the value being walked: a member's key or an array index.
  struct Segment {
    std::string_view key;
    std::size_t index = 0;
    bool is_index = false;
  };

  // Where the walk is: what it needs besides the value and its path.
  struct Place {
    int parent = -1;  // the nearest enclosing candidate
    std::size_t parent_item = 0;
    std::size_t part = 0;
    Nesting nesting = {};
    const boost::json::array* array = nullptr;  // the array the value is an item of
    const FieldList* inherited = nullptr;       // a dotted projection passed down
  };

  std::string path_of(const std::vector<Segment>& segments);
  void walk(const boost::json::value& value, std::vector<Segment>& path, const Place& place);
  void walk_array(const boost::json::array& array, std::vector<Segment>& path, const Place& place);
  void walk_object(const boost::json::object& object, std::vector<Segment>& path,
                   const Place& place);
  // Registers `array` (at `path`) as one that may be cut; its index in candidates_.
  int add_candidate(const boost::json::array& array, std::string path, const Place& place);
  // An array shown as a table (--tables): its head up to the first row, and one row.
  void count_table_head(const boost::json::array& array);
  void count_table_row(const boost::json::object& item);
  bool visible(int index) const;
  // Shows only the first `keep` items of candidate `index`; returns the weighted saving.
  Cost shrink(int index, std::size_t keep);
  // Shows the first `keep` items of candidate `index` again; returns the weighted addition.
  Cost grow(int index, std::size_t keep);
  // Accounts a change of `change` in what candidate `index` shows, and `listings` more arrays
  // listed as cut, to the items around it; returns the weighted change with the listings.
  Cost resized(int index, const Cost& change, int listings);
  // Candidates in the order cuts are listed: a page first, then the largest.
  std::vector<int> largest_first() const;
  // The counter's reading so far.
  Cost counted() const;
  // `cost` of candidate `index` as its part counts.
  Cost weighted(const Candidate& candidate, const Cost& cost) const;

  std::size_t page_size_;
  std::size_t min_cut_items_;
  Cost cut_cost_;
  budget::TokenCounter counter_;  // fed the bytes of everything walked, in writing order
  std::string base_path_;         // the pointer of the value being walked
  std::vector<Candidate> candidates_;
  const ValueView* view_ = &kWholeView;
  Cost excess_left_;  // what the last cut left over
  bool count_chars_ = false;
  std::size_t longest_string_ = 0;
  std::size_t deepest_container_ = 0;
  std::size_t deepest_array_nesting_ = 0;
};

// Writes `value` minified, showing only the ranges `cuts` gives for the arrays it names.
void write_with_cuts(std::string& out, const boost::json::value& value, const CutMap& cuts);

// Writes `[...]` with items [range.begin, range.begin + range.count) of `array` (at `path`), or
// with `indices` the items it lists, as `view` shows them, nested arrays shortened as `cuts`
// says; or, when the view shows those items as a table, {"columns":[...],"rows":[...]} (and
// `path` is added to stats.tables).
void write_page_items(std::string& out, const boost::json::array& array, const std::string& path,
                      ShownRange range, const std::vector<std::size_t>* indices,
                      const ValueView& view, const CutMap& cuts, ViewStats& stats);

}  // namespace ctxguard::pipeline
