#include "pipeline/fetch/fetch_tool.hpp"

// The answers of ctxguard_fetch over cached JSON: pages of an array (plain, projected with
// `fields`, or the matches of a `query`) and the value at a `path`, laid out within the budget by
// the same levels of fit as first answers (the text answers are in fetch_text.cpp).

#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "budget/token_estimator.hpp"
#include "pipeline/fetch/query.hpp"
#include "pipeline/fit/digest.hpp"
#include "pipeline/fit/paginate.hpp"
#include "pipeline/fit/projection.hpp"
#include "pipeline/fit/summarize.hpp"
#include "pipeline/metadata.hpp"
#include "support/glob.hpp"
#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

json::array string_array(const std::vector<std::string>& list) {
  json::array out;
  for (const std::string& item : list) out.emplace_back(item);
  return out;
}

}  // namespace

const FieldList* FetchTool::projection_rule(const CachedResult& entry, const Call& call) const {
  for (const config::ProjectionRule& rule : call.budget.summary.projections) {
    if (glob_matches(rule.tool_glob, entry.tool)) return &rule.fields;
  }
  return nullptr;
}

// Lays out a page of `array` (or the value `tree`) within the budget, level by level: nested
// arrays cut to pages, then long strings and deep values cut, then records projected, then fewer
// items. `compose` builds the answer from a layout and returns its tokens.
FetchTool::Layout FetchTool::lay_out(const CachedResult& entry, std::size_t part, const Call& call,
                                     const Subject& subject, const Request& request,
                                     const std::function<std::size_t(Layout&)>& compose) const {
  Layout layout;
  layout.view.tables = call.budget.summary.tables;
  if (subject.array != nullptr && !request.fields.empty()) {
    layout.view.item_fields[subject.array] = request.fields;
  } else if (subject.tree != nullptr && subject.tree->is_object() && !request.fields.empty()) {
    layout.view.object_fields[&subject.tree->get_object()] = request.fields;
  }
  CutMap last_map;
  double last_excess = 0;
  for (std::size_t step = 0; step < std::size(kFitLevels); ++step) {
    const FitLevel level = kFitLevels[step];
    // summarization: false: values are never altered, only split (pages, then text pieces).
    const bool summarizing =
        level == FitLevel::kSummarize || level == FitLevel::kProject || level == FitLevel::kTighten;
    if (summarizing && !call.budget.summarization) continue;
    if (level == FitLevel::kSummarize) {
      layout.view.max_string_chars = call.budget.summary.max_string_chars;
      layout.view.max_depth = call.budget.summary.max_depth;
      if (!layout.view.summarizes()) continue;
    }
    if (level == FitLevel::kTighten) {
      if (!tighten(layout.view)) break;
      --step;  // tighter again next time, until it fits or nothing is left to tighten
    }
    if (level == FitLevel::kProject) {
      if (!call.budget.summary.project || request.fields_given || !request.fields.empty()) continue;
      std::vector<RecordGroup> groups;
      if (subject.array != nullptr) {
        RecordGroup group;
        group.array = subject.array;
        group.path = subject.path;
        for (std::size_t i = 0; i < subject.count; ++i) {
          const std::size_t index = subject.indices ? (*subject.indices)[i] : subject.begin + i;
          if (const json::object* object = (*subject.array)[index].if_object()) {
            group.records.push_back(object);
          }
        }
        groups.push_back(std::move(group));
      } else {
        groups = find_record_groups(*subject.tree, subject.path, last_map, layout.view);
      }
      layout.projections =
          plan_projections(groups, last_excess * 1.1 + 16, projection_rule(entry, call),
                           kMinProjectedFields, layout.view);
      if (layout.projections.empty()) continue;
    }
    double overshoot = 0;
    const int rounds = level == FitLevel::kTighten ? kTightenRounds : kPlanningRounds;
    for (int round = 0; round < rounds; ++round) {
      CutPlanner planner(call.budget.page_size, call.budget.min_cut_items, kTokensPerCursor);
      planner.set_view(layout.view);
      const double measured = subject.array != nullptr
                                  ? planner.add_page(*subject.array, part, subject.path,
                                                     subject.begin, subject.count, subject.indices)
                                  : planner.add_tree(*subject.tree, part, subject.path);
      const double excess = measured + static_cast<double>(kMetadataTokens) -
                            static_cast<double>(call.budget.token_budget) + overshoot;
      const bool reached = plan_level(planner, level, excess);
      last_map = planner.cut_map();
      last_excess = planner.excess_left();
      if (!reached && level < FitLevel::kShrink) break;
      layout.cuts = planner.visible_cuts();
      layout.map = last_map;  // the projection level after this one reads it too
      layout.body.clear();
      layout.stats = ViewStats{};
      if (subject.array != nullptr) {
        const ArrayCut& page = layout.cuts.front();
        write_page_items(layout.body, *subject.array, subject.path,
                         ShownRange{page.begin, page.shown}, subject.indices, layout.view,
                         layout.map, layout.stats);
      } else {
        std::string scratch = subject.path;
        write_view(layout.body, *subject.tree, layout.view, layout.map, scratch, 0, nullptr,
                   layout.stats);
      }
      layout.tokens = compose(layout);
      if (layout.tokens <= call.budget.token_budget) return layout;
      overshoot += static_cast<double>(layout.tokens - call.budget.token_budget) * 1.25 + 32;
    }
  }
  return layout;
}

void FetchTool::answer_page(FetchAnswer& answer, const CachedResult& entry, std::size_t part,
                            const json::array& array, const std::string& path, std::size_t begin,
                            const std::vector<std::size_t>* indices, std::size_t total_matches,
                            std::size_t resume, const Request& request, const Call& call,
                            json::object extra) const {
  const std::size_t count =
      indices != nullptr ? indices->size() : std::min(request.limit, array.size() - begin);
  Subject subject{.array = &array,
                  .tree = nullptr,
                  .path = path,
                  .begin = begin,
                  .count = count,
                  .indices = indices};
  // The first page of an array says what the whole array holds; computed once, not per layout.
  std::optional<std::string> summary;
  if (indices == nullptr && begin == 0 && request.query.empty()) {
    if (auto digest = digest_array(array, path)) summary = std::move(digest->summary);
  }
  const auto compose = [&](Layout& layout) {
    const ArrayCut& page = layout.cuts.front();
    json::object fields_meta = extra;
    // Asked for by `path`, the value could have been the server's own object: say that `items`
    // is ctxguard's wrapper, as a first answer does for a top-level array.
    if (request.path) fields_meta["wrapped"] = true;
    if (!request.fields.empty()) fields_meta["fields"] = string_array(request.fields);
    if (summary) fields_meta["summary"] = *summary;
    json::object meta;
    if (indices != nullptr) {
      // A search page: which items matched, and where the search goes on.
      meta = std::move(fields_meta);
      meta["path"] = path;
      meta["query"] = request.query;
      meta["totalMatches"] = total_matches;
      json::array shown;
      for (std::size_t i = 0; i < page.shown; ++i) shown.emplace_back((*indices)[i]);
      meta["indices"] = std::move(shown);
      const bool more = page.shown < indices->size() || resume != kNoResume;
      meta["hasMore"] = more;
      if (more) {
        const std::size_t next = page.shown < indices->size() ? (*indices)[page.shown] : resume;
        meta["nextCursor"] =
            call.issuer.array_query(part, path, next, request.limit, request.fields, request.query);
      }
      meta["hint"] =
          total_matches == 0
              ? fmt::format("No item of the array at {} matches \"{}\".",
                            path.empty() ? "the top level" : path, request.query)
              : fmt::format(
                    "{} item{} match; shown: {} (their indices are in _ctxguard.indices). {}",
                    total_matches, total_matches == 1 ? "" : "s", page.shown,
                    more
                        ? fmt::format(
                              "For more matches call {} with {{\"cursor\": _ctxguard.nextCursor}}.",
                              name_)
                        : std::string("These are all the matches."));
      if (layout.cuts.size() > 1) {
        json::array others;
        for (std::size_t i = 1; i < layout.cuts.size(); ++i) {
          const ArrayCut& cut = layout.cuts[i];
          others.push_back(cut_fields(
              cut, cut.begin + cut.shown < cut.total
                       ? call.issuer.array_page(part, cut.path, cut.begin + cut.shown, 0, {})
                       : std::string()));
        }
        meta["otherCuts"] = std::move(others);
      }
    } else {
      meta = array_metadata(
          layout.cuts,
          [&](const ArrayCut& cut) {
            if (cut.begin + cut.shown >= cut.total) return std::string();
            return cut.is_page
                       ? call.issuer.array_page(part, cut.path, cut.begin + cut.shown,
                                                request.limit, request.fields)
                       : call.issuer.array_page(part, cut.path, cut.begin + cut.shown, 0, {});
          },
          fields_meta, name_, call.budget.max_page_size);
    }
    add_summary_fields(meta, layout.stats, layout.projections, call.issuer.value(part, ""), name_);
    std::size_t tokens = 0;
    std::string text = settle_budget_fields(
        meta, call.budget.token_budget, 0,
        [&](const json::object& so_far) {
          // A page shown as a table is still {"items": ..., "_ctxguard": ...}.
          return attach_metadata(
              layout.body.front() == '{' ? "{\"items\":" + layout.body + "}" : layout.body, so_far);
        },
        tokens);
    answer.result = text_tool_result(std::move(text), false);
    answer.record.items_total = indices != nullptr ? total_matches : page.total;
    answer.record.items_shown = page.shown;
    return tokens;
  };
  Layout layout = lay_out(entry, part, call, subject, request, compose);
  // The levels plan with estimates of each part of the page, so the written page can still end a
  // few tokens over: then fewer items, until it fits or one item is left.
  while (layout.tokens > call.budget.token_budget && !layout.cuts.empty() &&
         layout.cuts.front().shown > 1) {
    const std::size_t shown = layout.cuts.front().shown;
    subject.count = shown - std::max<std::size_t>(1, shown / 4);
    layout = lay_out(entry, part, call, subject, request, compose);
  }
  answer.record.final_tokens = layout.tokens;
  if (layout.tokens <= call.budget.token_budget || layout.cuts.empty() ||
      layout.cuts.front().shown > 1) {
    return;
  }
  // One item alone is over the budget even summarized: it is served as text, in pieces, with a
  // cursor to the items after it.
  const ArrayCut& page = layout.cuts.front();
  const std::size_t index = indices != nullptr ? (*indices)[0] : page.begin;
  std::string item_path = path;
  append_pointer_index(item_path, index);
  json::object item;
  item["item"] = json::object{{"path", path}, {"index", index}, {"totalCount", array.size()}};
  if (indices == nullptr && page.begin + 1 < page.total) {
    item["nextItemsCursor"] =
        call.issuer.array_page(part, path, page.begin + 1, request.limit, request.fields);
  }
  if (indices != nullptr) {
    // A search goes on past a match too large to show whole: its next match, and the count.
    item["query"] = request.query;
    item["totalMatches"] = total_matches;
    const std::size_t next = indices->size() > 1 ? (*indices)[1] : resume;
    if (next != kNoResume) {
      item["nextItemsCursor"] =
          call.issuer.array_query(part, path, next, request.limit, request.fields, request.query);
    }
  }
  answer_text(answer, to_json(array[index]), 0, part, item_path, call, std::move(item));
}

bool FetchTool::answer_array_query(FetchAnswer& answer, const CachedResult& entry, std::size_t part,
                                   const json::array& array, const std::string& path,
                                   std::size_t begin, const Request& request, const Call& call,
                                   std::string& error) const {
  auto parsed = Query::parse(request.query);
  if (auto* problem = std::get_if<std::string>(&parsed)) {
    error = std::move(*problem);
    return false;
  }
  const Query& query = std::get<Query>(parsed);
  // Every match is counted (the model learns how many there are); the first `limit` from
  // `begin` are shown.
  std::vector<std::size_t> shown;
  std::size_t total = 0;
  std::size_t resume = kNoResume;  // the first match beyond the page
  for (std::size_t i = 0; i < array.size(); ++i) {
    if (!query.matches(array[i])) continue;
    ++total;
    if (i < begin) continue;
    if (shown.size() < request.limit) {
      shown.push_back(i);
    } else if (resume == kNoResume) {
      resume = i;
    }
  }
  if (shown.empty()) {
    json::object meta{{"path", path},
                      {"query", request.query},
                      {"totalMatches", total},
                      {"indices", json::array{}},
                      {"hasMore", false}};
    meta["hint"] = total == 0 ? fmt::format("No item matches \"{}\".", request.query)
                              : std::string("No more matches.");
    std::size_t tokens = 0;
    std::string text = settle_budget_fields(
        meta, call.budget.token_budget, 0,
        [&](const json::object& so_far) { return attach_metadata("[]", so_far); }, tokens);
    answer.result = text_tool_result(std::move(text), false);
    answer.record.final_tokens = tokens;
    return true;
  }
  answer_page(answer, entry, part, array, path, shown.front(), &shown, total, resume, request, call,
              {});
  return true;
}

void FetchTool::answer_value(FetchAnswer& answer, const CachedResult& entry, std::size_t part,
                             const json::value& value, const std::string& path,
                             const Request& request, const Call& call) const {
  Subject subject{
      .array = nullptr, .tree = &value, .path = path, .begin = 0, .count = 0, .indices = nullptr};
  const auto compose = [&](Layout& layout) {
    json::object meta;
    if (!layout.cuts.empty()) {
      meta = array_metadata(
          layout.cuts,
          [&](const ArrayCut& cut) {
            return cut.begin + cut.shown < cut.total
                       ? call.issuer.array_page(part, cut.path, cut.begin + cut.shown, 0, {})
                       : std::string();
          },
          {}, name_, call.budget.max_page_size);
    }
    meta["valuePath"] = path;
    // A scalar has no members to put `_ctxguard` beside: it comes as {"value": ...}.
    const bool scalar = layout.body.front() != '{' && layout.body.front() != '[';
    if (scalar) meta["wrapped"] = true;
    if (!request.fields.empty()) meta["fields"] = string_array(request.fields);
    add_summary_fields(meta, layout.stats, layout.projections, call.issuer.value(part, ""), name_);
    if (!meta.contains("hint")) meta["hint"] = fmt::format("The whole value at \"{}\".", path);
    std::size_t tokens = 0;
    std::string text = settle_budget_fields(
        meta, call.budget.token_budget, 0,
        [&](const json::object& so_far) {
          return attach_metadata(scalar ? "{\"value\":" + layout.body + "}" : layout.body, so_far);
        },
        tokens);
    answer.result = text_tool_result(std::move(text), false);
    return tokens;
  };
  Layout layout = lay_out(entry, part, call, subject, request, compose);
  answer.record.final_tokens = layout.tokens;
  if (layout.tokens > call.budget.token_budget) {
    answer_text(answer, to_json(value), 0, part, path, call, value_piece_fields(path, false));
  }
}

}  // namespace ctxguard::pipeline
