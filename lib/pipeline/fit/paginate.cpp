#include "pipeline/fit/paginate.hpp"

#include "pipeline/fit/table_form.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "budget/token_estimator.hpp"
#include "cursor/cursor_codec.hpp"
#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

Cost Cost::tokens_only(double tokens) {
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  return Cost{.tokens = tokens, .chars = kNone, .bytes = kNone};
}

Cost& Cost::operator+=(const Cost& other) {
  tokens += other.tokens;
  chars += other.chars;
  bytes += other.bytes;
  return *this;
}

Cost& Cost::operator-=(const Cost& other) {
  tokens -= other.tokens;
  chars -= other.chars;
  bytes -= other.bytes;
  return *this;
}

Cost CutPlanner::counted() const {
  return Cost{.tokens = counter_.fractional_tokens(),
              .chars = static_cast<double>(counter_.chars()),
              .bytes = static_cast<double>(counter_.bytes())};
}

Cost CutPlanner::weighted(const Candidate& candidate, const Cost& cost) const {
  return Cost{.tokens = cost.tokens * candidate.weight,
              .chars = cost.chars * candidate.text_weight,
              .bytes = cost.bytes * candidate.text_weight};
}

std::string CutPlanner::path_of(const std::vector<Segment>& segments) {
  std::string path = base_path_;
  for (const Segment& segment : segments) {
    if (segment.is_index) {
      append_pointer_index(path, segment.index);
    } else {
      append_pointer_key(path, segment.key);
    }
  }
  return path;
}

// Mirrors write_view (summarize.cpp) byte for byte, feeding the counter instead of a string.
void CutPlanner::walk(const json::value& value, std::vector<Segment>& path, const Place& place) {
  const json::array* array = value.if_array();
  const json::object* object = value.if_object();
  if (array != nullptr || object != nullptr) {
    deepest_container_ = std::max(deepest_container_, place.nesting.depth);
  }
  if ((array != nullptr || object != nullptr) && collapses(value, *view_, place.nesting)) {
    if (const std::optional<std::string> placeholder = collapsed_text(value, path_of(path))) {
      counter_.add_json_string(*placeholder);
      return;
    }
  }
  if (array != nullptr) {
    walk_array(*array, path, place);
  } else if (object != nullptr) {
    walk_object(*object, path, place);
  } else if (const json::string* string = value.if_string()) {
    longest_string_ = std::max(longest_string_, string->size());
    std::optional<std::string> cut;
    if (view_->max_string_chars != 0 && string->size() > view_->max_string_chars &&
        !view_->shows_whole(value)) {
      cut = cut_string(*string, view_->max_string_chars, path_of(path));
    }
    if (cut) {
      counter_.add_json_string(*cut);
    } else {
      counter_.add_json(value);
    }
  } else {
    counter_.add_json(value);
  }
}

int CutPlanner::add_candidate(const json::array& array, std::string path, const Place& place) {
  Candidate candidate;
  candidate.array = &array;
  candidate.part = place.part;
  candidate.path = std::move(path);
  candidate.count = array.size();
  candidate.keep = array.size();
  candidate.parent = place.parent;
  candidate.parent_item = place.parent_item;
  candidate.item_cost.reserve(array.size());
  candidates_.push_back(std::move(candidate));
  return static_cast<int>(candidates_.size() - 1);
}

void CutPlanner::walk_array(const json::array& array, std::vector<Segment>& path,
                            const Place& place) {
  const Cost before = counted();
  // Paths are spelled out only for arrays that may be cut: most nodes never need theirs.
  std::string pointer;
  if (array.size() > min_cut_items_) pointer = path_of(path);
  // A path too long for a cursor could never be continued: such an array is left whole.
  const bool cuttable = array.size() > min_cut_items_ && pointer.size() <= cursor::kMaxPathBytes;
  Place inner = place;
  inner.nesting = place.nesting.in_array();
  inner.array = &array;
  if (cuttable) inner.parent = add_candidate(array, std::move(pointer), place);
  // --tables: as write_table writes it (keys once, then a row of scalars per item).
  const bool table =
      shows_as_table(array, {0, array.size()}, *view_, place.nesting.depth, place.inherited);
  if (table) {
    count_table_head(array);
  } else {
    counter_.add("[");
  }
  path.push_back(Segment{});
  for (std::size_t i = 0; i < array.size(); ++i) {
    const Cost item_before = counted();
    if (i != 0) counter_.add(",");
    path.back() = Segment{.key = {}, .index = i, .is_index = true};
    if (cuttable) inner.parent_item = i;
    if (table) {
      count_table_row(array[i].get_object());
    } else {
      walk(array[i], path, inner);
    }
    if (array[i].is_object() || array[i].is_array()) {
      deepest_array_nesting_ = std::max(deepest_array_nesting_, place.nesting.arrays);
    }
    // candidates_ may have grown: index, do not hold a reference across walk().
    if (cuttable) {
      candidates_[inner.parent].item_cost.push_back(counted() - item_before);
    }
  }
  path.pop_back();
  counter_.add(table ? "]}" : "]");
  if (cuttable) {
    Candidate& candidate = candidates_[inner.parent];
    candidate.original_cost = (counted() - before).tokens;
    candidate.shown_cost =
        std::accumulate(candidate.item_cost.begin(), candidate.item_cost.end(), Cost{});
  }
}

void CutPlanner::walk_object(const json::object& object, std::vector<Segment>& path,
                             const Place& place) {
  const FieldList* fields = projection_of(*view_, object, place.array, place.inherited);
  FieldList sub;
  Place inner = place;
  inner.nesting = place.nesting.in_object();
  inner.array = nullptr;
  counter_.add("{");
  bool first = true;
  for (const json::key_value_pair& member : object) {
    const FieldUse use =
        fields != nullptr ? field_use(*fields, member.key(), sub) : FieldUse::kWhole;
    if (use == FieldUse::kDrop) continue;
    if (!first) counter_.add(",");
    first = false;
    counter_.add_json_string(member.key());
    counter_.add(":");
    path.push_back(Segment{.key = member.key(), .index = 0, .is_index = false});
    inner.inherited = use == FieldUse::kPartial ? &sub : nullptr;
    walk(member.value(), path, inner);
    path.pop_back();
  }
  counter_.add("}");
}

void CutPlanner::count_table_head(const json::array& array) {
  counter_.add("{\"columns\":[");
  bool first_key = true;
  for (const json::key_value_pair& member : array.front().get_object()) {
    if (!first_key) counter_.add(",");
    first_key = false;
    counter_.add_json_string(member.key());
  }
  counter_.add("],\"rows\":[");
}

void CutPlanner::count_table_row(const json::object& item) {
  counter_.add("[");
  bool first_value = true;
  for (const json::key_value_pair& member : item) {
    if (!first_value) counter_.add(",");
    first_value = false;
    counter_.add_json(member.value());
  }
  counter_.add("]");
}

Cost CutPlanner::add_tree(const json::value& root, std::size_t part, const std::string& path) {
  base_path_ = path;
  std::vector<Segment> segments;
  counter_ = budget::TokenCounter{count_chars_};
  walk(root, segments, Place{.part = part});
  return counted();
}

void CutPlanner::set_weight(std::size_t part, double weight, bool in_text) {
  for (Candidate& candidate : candidates_) {
    if (candidate.part != part) continue;
    candidate.weight = weight;
    candidate.text_weight = in_text ? 1 : 0;
  }
}

Cost CutPlanner::add_page(const json::array& array, std::size_t part, const std::string& path,
                          std::size_t begin, std::size_t count,
                          const std::vector<std::size_t>* indices) {
  Candidate page;
  page.array = &array;
  page.part = part;
  page.path = path;
  page.begin = begin;
  page.count = count;
  page.keep = count;
  page.is_page = true;
  candidates_.push_back(std::move(page));
  const int self = static_cast<int>(candidates_.size() - 1);
  base_path_ = path;
  std::vector<Segment> segments(1);
  counter_ = budget::TokenCounter{count_chars_};
  // As write_page_items writes the page: a table, or the items one by one.
  const bool table = indices == nullptr && shows_as_table(array, {begin, count}, *view_);
  if (table) {
    count_table_head(array);
  } else {
    counter_.add("[");
  }
  Place place{
      .parent = self, .parent_item = 0, .part = part, .nesting = kPageItem, .array = &array};
  for (std::size_t i = 0; i < count; ++i) {
    const Cost item_before = counted();
    if (i != 0) counter_.add(",");
    const std::size_t index = indices != nullptr ? (*indices)[i] : begin + i;
    segments.front() = Segment{.key = {}, .index = index, .is_index = true};
    place.parent_item = i;
    if (table) {
      count_table_row(array[index].get_object());
    } else {
      walk(array[index], segments, place);
    }
    candidates_[self].item_cost.push_back(counted() - item_before);
  }
  counter_.add(table ? "]}" : "]");
  Candidate& candidate = candidates_[self];
  const Cost cost = counted();
  candidate.original_cost = cost.tokens;
  candidate.shown_cost =
      std::accumulate(candidate.item_cost.begin(), candidate.item_cost.end(), Cost{});
  return cost;
}

bool CutPlanner::visible(int index) const {
  while (index >= 0) {
    const Candidate& candidate = candidates_[index];
    if (candidate.parent < 0) return true;
    if (candidate.parent_item >= candidates_[candidate.parent].keep) return false;
    index = candidate.parent;
  }
  return true;
}

Cost CutPlanner::shrink(int index, std::size_t keep) {
  Candidate& candidate = candidates_[index];
  if (keep >= candidate.keep) return {};
  if (candidate.item_cuts.empty()) candidate.item_cuts.assign(candidate.count, 0);
  const auto from = static_cast<std::ptrdiff_t>(keep);
  const auto to = static_cast<std::ptrdiff_t>(candidate.keep);
  const Cost saving =
      std::accumulate(candidate.item_cost.begin() + from, candidate.item_cost.begin() + to, Cost{});
  // Listing: the first cut of an array adds its entry to _ctxguard (a page is listed anyway);
  // the arrays cut inside the items dropped now are no longer listed.
  const int listed = candidate.keep == candidate.count && !candidate.is_page ? 1 : 0;
  const int unlisted =
      std::accumulate(candidate.item_cuts.begin() + from, candidate.item_cuts.begin() + to, 0);
  candidate.keep = keep;
  candidate.shown_cost -= saving;
  return Cost{} - resized(index, Cost{} - saving, listed - unlisted);
}

Cost CutPlanner::grow(int index, std::size_t keep) {
  Candidate& candidate = candidates_[index];
  keep = std::min(keep, candidate.count);
  if (keep <= candidate.keep) return {};
  if (candidate.item_cuts.empty()) candidate.item_cuts.assign(candidate.count, 0);
  const auto from = static_cast<std::ptrdiff_t>(candidate.keep);
  const auto to = static_cast<std::ptrdiff_t>(keep);
  const Cost added =
      std::accumulate(candidate.item_cost.begin() + from, candidate.item_cost.begin() + to, Cost{});
  // The mirror of shrink(): an array shown whole again is no longer listed; the arrays cut
  // inside the items shown again are.
  const int unlisted = keep == candidate.count && !candidate.is_page ? 1 : 0;
  const int listed =
      std::accumulate(candidate.item_cuts.begin() + from, candidate.item_cuts.begin() + to, 0);
  candidate.keep = keep;
  candidate.shown_cost += added;
  return resized(index, added, listed - unlisted);
}

Cost CutPlanner::resized(int index, const Cost& change, int listings) {
  // The items around this array changed by as much.
  int child = index;
  while (candidates_[child].parent >= 0) {
    Candidate& parent = candidates_[candidates_[child].parent];
    const std::size_t item = candidates_[child].parent_item;
    parent.item_cost[item] += change;
    if (parent.item_cuts.empty()) parent.item_cuts.assign(parent.count, 0);
    parent.item_cuts[item] += listings;
    if (item < parent.keep) parent.shown_cost += change;
    child = candidates_[child].parent;
  }
  const double listed = static_cast<double>(listings);
  const Cost listed_cost{.tokens = listed * cut_cost_.tokens,
                         .chars = listed * cut_cost_.chars,
                         .bytes = listed * cut_cost_.bytes};
  return weighted(candidates_[index], change + listed_cost);
}

void CutPlanner::apply(const CutMap& cuts) {
  for (int i = 0; i < static_cast<int>(candidates_.size()); ++i) {
    const auto cut = cuts.find(candidates_[i].array);
    if (cut != cuts.end()) shrink(i, cut->second.count);
  }
}

void CutPlanner::cap_shown(std::size_t most) {
  for (const int index : largest_first()) {
    const Candidate& candidate = candidates_[index];
    const bool cut = candidate.is_page || candidate.keep < candidate.count;
    if (cut && candidate.keep > most && visible(index)) shrink(index, most);
  }
}

std::size_t CutPlanner::grow_shown(Cost& room, std::size_t max_keep) {
  std::size_t added = 0;
  for (const int index : largest_first()) {
    const Candidate& candidate = candidates_[index];
    // A page grows to its own length; any other array to a page at most.
    const std::size_t page = candidate.is_page || page_size_ == 0 ? candidate.count : page_size_;
    const std::size_t most = std::min({candidate.count, page, max_keep});
    while (candidate.keep < most && visible(index)) {
      const std::size_t next = candidate.keep;
      const int listings = candidate.item_cuts.empty() ? 0 : candidate.item_cuts[next];
      const int unlisted = next + 1 == candidate.count && !candidate.is_page ? 1 : 0;
      const double net = static_cast<double>(listings - unlisted);
      const Cost cost =
          weighted(candidate, candidate.item_cost[next] + Cost{.tokens = net * cut_cost_.tokens,
                                                               .chars = net * cut_cost_.chars,
                                                               .bytes = net * cut_cost_.bytes});
      if (cost.tokens > room.tokens || cost.chars > room.chars || cost.bytes > room.bytes) break;
      room -= grow(index, next + 1);
      ++added;
    }
  }
  return added;
}

std::vector<int> CutPlanner::largest_first() const {
  std::vector<int> order(candidates_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [this](int a, int b) {
    const Candidate& first = candidates_[a];
    const Candidate& second = candidates_[b];
    if (first.is_page != second.is_page) return first.is_page;
    return first.original_cost > second.original_cost;
  });
  return order;
}

bool CutPlanner::cut(Cost excess) {
  if (cut_to_pages(excess)) return true;
  return shrink_shown(excess_left_);
}

bool CutPlanner::cut_to_pages(Cost excess) {
  excess_left_ = excess;
  if (!excess.over()) return true;
  // Largest first: every array longer than a page is cut to one page until the answer fits.
  std::vector<int> order(candidates_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [this](int a, int b) {
    return candidates_[a].original_cost > candidates_[b].original_cost;
  });
  for (const int index : order) {
    if (!excess.over()) break;
    const Candidate& candidate = candidates_[index];
    if (candidate.is_page || candidate.keep <= page_size_ || !visible(index)) continue;
    excess -= shrink(index, page_size_);
  }
  excess_left_ = excess;
  return !excess.over();
}

bool CutPlanner::shrink_shown(Cost excess, std::size_t min_keep) {
  min_keep = std::max<std::size_t>(min_keep, 1);
  // Shorten the largest array shown, item by item from its end, and repeat.
  while (excess.over()) {
    int largest = -1;
    for (int i = 0; i < static_cast<int>(candidates_.size()); ++i) {
      const Candidate& candidate = candidates_[i];
      if (candidate.keep <= min_keep || !visible(i)) continue;
      if (largest < 0 || candidate.shown_cost.tokens * candidate.weight >
                             candidates_[largest].shown_cost.tokens * candidates_[largest].weight) {
        largest = i;
      }
    }
    if (largest < 0) break;
    const Candidate& candidate = candidates_[largest];
    std::size_t keep = candidate.keep;
    Cost saving;
    while (keep > min_keep && (excess - saving).over()) {
      --keep;
      saving += weighted(candidate, candidate.item_cost[keep]);
    }
    excess -= shrink(largest, keep);
  }
  excess_left_ = excess;
  return !excess.over();
}

std::vector<ArrayCut> CutPlanner::visible_cuts() const {
  std::vector<ArrayCut> cuts;
  for (int i = 0; i < static_cast<int>(candidates_.size()); ++i) {
    const Candidate& candidate = candidates_[i];
    if (!candidate.is_page && candidate.keep == candidate.count) continue;
    if (!visible(i)) continue;
    cuts.push_back(ArrayCut{
        .part = candidate.part,
        .path = candidate.path,
        .begin = candidate.begin,
        .shown = candidate.keep,
        .total = candidate.array->size(),
        .original_cost = candidate.original_cost,
        .is_page = candidate.is_page,
        .holds_records = !candidate.array->empty() && candidate.array->front().is_object()});
  }
  std::stable_sort(cuts.begin(), cuts.end(), [](const ArrayCut& a, const ArrayCut& b) {
    if (a.is_page != b.is_page) return a.is_page;
    return a.original_cost > b.original_cost;
  });
  return cuts;
}

CutMap CutPlanner::cut_map() const {
  CutMap map;
  for (const Candidate& candidate : candidates_) {
    if (candidate.is_page || candidate.keep < candidate.count) {
      map[candidate.array] = ShownRange{candidate.begin, candidate.keep};
    }
  }
  return map;
}

void write_with_cuts(std::string& out, const json::value& value, const CutMap& cuts) {
  write_json_windowed(out, value, [&cuts](const json::array& array) {
    const auto cut = cuts.find(&array);
    return cut != cuts.end() ? cut->second : ItemWindow{0, array.size()};
  });
}

void write_page_items(std::string& out, const json::array& array, const std::string& path,
                      ShownRange range, const std::vector<std::size_t>* indices,
                      const ValueView& view, const CutMap& cuts, ViewStats& stats) {
  if (indices == nullptr && shows_as_table(array, {range.begin, range.count}, view)) {
    write_table(out, array, {range.begin, range.count});
    stats.tables.push_back(path);
    return;
  }
  std::string scratch = path;
  out += '[';
  for (std::size_t i = 0; i < range.count; ++i) {
    if (i != 0) out += ',';
    const std::size_t index = indices != nullptr ? (*indices)[i] : range.begin + i;
    scratch.resize(path.size());
    append_pointer_index(scratch, index);
    write_view_item(out, array[index], array, view, cuts, scratch, stats);
  }
  out += ']';
}

}  // namespace ctxguard::pipeline
