#pragma once
// Pagination (FR-001..006): which arrays of a JSON answer to shorten, and writing the answer
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
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

// One shortened array as the answer shows it.
struct ArrayCut {
  std::size_t part = 0;      // the cached part the array is in
  std::string path;          // RFC 6901 pointer of the array inside that part
  std::size_t begin = 0;     // index of the first item shown (0 in a first answer)
  std::size_t shown = 0;     // items shown
  std::size_t total = 0;     // items in the array
  double original_cost = 0;  // cost of the whole array: cuts are listed largest first
  bool is_page = false;      // the page a ctxguard_fetch answer consists of
};

using ShownRange = ItemWindow;
using CutMap = std::unordered_map<const boost::json::array*, ShownRange>;

class CutPlanner {
 public:
  // `cut_cost`: what listing one more shortened array costs (its path and cursor in _ctxguard).
  CutPlanner(std::size_t page_size, std::size_t min_cut_items, double cut_cost = 0)
      : page_size_(page_size), min_cut_items_(min_cut_items), cut_cost_(cut_cost) {}

  // Registers the cuttable arrays of `root`, the value of cached part `part` at `path`. Returns
  // its cost: the token estimate of its minified form.
  double add_tree(const boost::json::value& root, std::size_t part, const std::string& path);

  // Each token of `part` counts `weight` times (a part structuredContent mirrors counts twice).
  void set_weight(std::size_t part, double weight);

  // Registers a page: items [begin, begin + count) of `array` (at `path` in `part`), each object
  // item projected to `fields` when that is not empty. The page itself may shrink to one item.
  double add_page(const boost::json::array& array, std::size_t part, const std::string& path,
                  std::size_t begin, std::size_t count, const std::vector<std::string>& fields);

  // Cuts until `excess` cost is gone. Returns true when it is.
  bool cut(double excess);

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
    std::vector<double> item_cost;
    std::vector<int> item_cuts;  // shortened arrays listed from inside each item
    double shown_cost = 0;       // sum of item_cost[0, keep)
    double original_cost = 0;
    double weight = 1;
    int parent = -1;  // the nearest enclosing candidate
    std::size_t parent_item = 0;
    bool is_page = false;
  };

  // One step of the path to the value being walked: a member's key or an array index.
  struct Segment {
    std::string_view key;
    std::size_t index = 0;
    bool is_index = false;
  };

  std::string path_of(const std::vector<Segment>& segments);
  double walk(const boost::json::value& value, std::vector<Segment>& path, int parent,
              std::size_t parent_item, std::size_t part);
  double walk_item(const boost::json::value& item, const std::vector<std::string>& fields,
                   std::vector<Segment>& path, int parent, std::size_t parent_item,
                   std::size_t part);
  double walk_member(const boost::json::key_value_pair& member, std::vector<Segment>& path,
                     int parent, std::size_t parent_item, std::size_t part);
  bool visible(int index) const;
  // Shows only the first `keep` items of candidate `index`; returns the weighted saving.
  double shrink(int index, std::size_t keep);

  std::size_t page_size_;
  std::size_t min_cut_items_;
  double cut_cost_;
  budget::TokenCounter counter_;  // fed the bytes of everything walked, in writing order
  std::string base_path_;         // the pointer of the value being walked
  std::vector<Candidate> candidates_;
};

// Writes `value` minified, showing only the ranges `cuts` gives for the arrays it names.
void write_with_cuts(std::string& out, const boost::json::value& value, const CutMap& cuts);

// Writes `[...]` with items [range.begin, range.begin + range.count) of `array`, each object item
// projected to `fields` when that is not empty, nested arrays shortened as `cuts` says.
void write_page_items(std::string& out, const boost::json::array& array, ShownRange range,
                      const std::vector<std::string>& fields, const CutMap& cuts);

// Object members whose key is in `fields`, in the object's order.
bool keeps_field(const std::vector<std::string>& fields, std::string_view key);

}  // namespace ctxguard::pipeline
