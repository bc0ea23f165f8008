#include "pipeline/fetch/fetch_call.hpp"

// The answers of ctxguard_fetch over cached JSON: pages of an array (plain, projected with
// `fields`, or the matches of a `query`) and the value at a `path`, laid out within the budget by
// the fit engine, like first answers.

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/fetch/query.hpp"
#include "pipeline/fit/digest.hpp"
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

// A page of one array as the fit engine sees it: `count` items from the page's start (the
// engine shows fewer when they do not fit).
class FetchCall::PageSubject final : public FitSubject {
 public:
  PageSubject(FetchCall& call, const Page& page, const std::optional<std::string>& summary,
              std::size_t count)
      : call_(call), page_(page), summary_(summary), count_(count) {}

  void add_values(CutPlanner& planner) override {
    cost_ = planner.add_page(page_.array, call_.part_index_, page_.path, page_.begin, count_,
                             page_.indices);
  }
  Cost cost(CutPlanner& /*planner*/) override { return cost_; }

  std::vector<RecordGroup> record_groups(const CutMap& /*cuts*/,
                                         const ValueView& /*view*/) override {
    RecordGroup group;
    group.array = &page_.array;
    group.path = page_.path;
    for (std::size_t i = 0; i < count_; ++i) {
      const std::size_t index = page_.indices ? (*page_.indices)[i] : page_.begin + i;
      if (const json::object* object = page_.array[index].if_object()) {
        group.records.push_back(object);
      }
    }
    return {std::move(group)};
  }

  std::optional<AnswerSize> render(const FitPlan& plan) override {
    const ArrayCut& page = plan.cuts.front();
    std::string body;
    ViewStats stats;
    write_page_items(body, page_.array, page_.path, ShownRange{page.begin, page.shown},
                     page_.indices, plan.view, plan.map, stats);
    // A page shown as a table is still {"items": ..., "_ctxguard": ...}.
    if (body.front() == '{') body = "{\"items\":" + body + "}";
    const AnswerSize size = call_.compose(call_.page_meta(page_, plan, stats, summary_), body);
    call_.answer_.record.items_total = page_.indices ? page_.total_matches : page.total;
    call_.answer_.record.items_shown = page.shown;
    shortened_ = std::move(stats.shortened);
    return size;
  }

  std::vector<Shortened> shortened() override { return shortened_; }

 private:
  FetchCall& call_;
  const Page& page_;
  const std::optional<std::string>& summary_;
  const std::size_t count_;
  Cost cost_;
  std::vector<Shortened> shortened_;  // by the last page written
};

// The value at a path as the fit engine sees it.
class FetchCall::ValueSubject final : public FitSubject {
 public:
  ValueSubject(FetchCall& call, const json::value& value, const std::string& path)
      : call_(call), value_(value), path_(path) {}

  void add_values(CutPlanner& planner) override {
    cost_ = planner.add_tree(value_, call_.part_index_, path_);
  }
  Cost cost(CutPlanner& /*planner*/) override { return cost_; }

  std::vector<RecordGroup> record_groups(const CutMap& cuts, const ValueView& view) override {
    return find_record_groups(value_, path_, cuts, view);
  }

  std::optional<AnswerSize> render(const FitPlan& plan) override {
    std::string body;
    ViewStats stats;
    std::string scratch = path_;
    write_view(body, value_, plan.view, plan.map, scratch, stats);
    json::object meta = value_meta(plan, stats, body);
    shortened_ = std::move(stats.shortened);
    return call_.compose(std::move(meta), body);
  }

  std::vector<Shortened> shortened() override { return shortened_; }

 private:
  // The value's `_ctxguard`; a scalar `body` is wrapped as {"value": ...}.
  json::object value_meta(const FitPlan& plan, const ViewStats& stats, std::string& body) const {
    const Context& context = call_.context_;
    json::object meta;
    if (!plan.cuts.empty()) {
      meta = array_metadata(
          plan.cuts,
          [&](const ArrayCut& cut) { return context.issuer.next_page(call_.part_index_, cut); }, {},
          context.tool_name, context.budget.max_page_size);
    }
    meta["valuePath"] = path_;
    // A scalar has no members to put `_ctxguard` beside: it comes as {"value": ...}.
    if (body.front() != '{' && body.front() != '[') {
      meta["wrapped"] = true;
      body = "{\"value\":" + body + "}";
    }
    const FieldList& fields = call_.request_.fields;
    if (!fields.empty()) meta["fields"] = string_array(fields);
    add_summary_fields(meta, stats, plan.projections, context.issuer.value(call_.part_index_, ""),
                       context.tool_name);
    if (!meta.contains("hint")) meta["hint"] = fmt::format("The whole value at \"{}\".", path_);
    return meta;
  }

  FetchCall& call_;
  const json::value& value_;
  const std::string& path_;
  Cost cost_;
  std::vector<Shortened> shortened_;  // by the last value written
};

FitOptions FetchCall::fit_options() const {
  FitOptions options = FitOptions::of(context_.budget, context_.entry.tool);
  // Fields the caller chose are not projected again.
  options.project = options.project && !request_.fields_given && request_.fields.empty();
  return options;
}

AnswerSize FetchCall::compose(json::object meta, const std::string& body) {
  std::string way_on = way_on_text(meta);
  std::size_t tokens = 0;
  std::string text = settle_budget_fields(
      meta, context_.budget.token_budget, way_on.empty() ? 0 : budget::estimate_tokens(way_on),
      [&](const json::object& so_far) { return attach_metadata(body, so_far); }, tokens);
  answer_.result = answer_result(std::move(way_on), {std::move(text)});
  return result_size(answer_.result, tokens);
}

void FetchCall::answer_page(const Page& page) {
  // The first page of an array says what the whole array holds; computed once, not per layout.
  std::optional<std::string> summary;
  if (page.indices == nullptr && page.begin == 0 && request_.query.empty()) {
    if (auto digest = digest_array(page.array, page.path)) summary = std::move(digest->summary);
  }
  PageSubject subject(*this, page, summary,
                      page.indices != nullptr
                          ? page.indices->size()
                          : std::min(context_.limit, page.array.size() - page.begin));
  ValueView view;
  view.tables = context_.budget.summary.tables;
  if (!request_.fields.empty()) view.item_fields[&page.array] = request_.fields;
  const FitResult result = fit(subject, fit_options(), std::move(view));
  const std::size_t shown = result.plan.cuts.empty() ? 0 : result.plan.cuts.front().shown;
  answer_.record.final_tokens = result.size.tokens;
  // One item alone is over the budget even summarized: it is served as text, in pieces, with a
  // cursor to the items after it.
  if (!result.fitted && shown == 1) answer_item_as_text(page, result.plan.cuts.front());
}

json::object FetchCall::page_meta(const Page& page, const FitPlan& plan, const ViewStats& stats,
                                  const std::optional<std::string>& summary) const {
  json::object fields_meta;
  // Asked for by `path`, the value could have been the server's own object: say that `items`
  // is ctxguard's wrapper, as a first answer does for a top-level array.
  if (request_.path) fields_meta["wrapped"] = true;
  if (!request_.fields.empty()) fields_meta["fields"] = string_array(request_.fields);
  if (summary) fields_meta["summary"] = *summary;
  json::object meta =
      page.indices != nullptr
          ? search_meta(page, plan, std::move(fields_meta))
          : array_metadata(
                plan.cuts,
                [&](const ArrayCut& cut) {
                  return cut.is_page ? context_.issuer.next_page(part_index_, cut, context_.limit,
                                                                 request_.fields)
                                     : context_.issuer.next_page(part_index_, cut);
                },
                fields_meta, context_.tool_name, context_.budget.max_page_size);
  add_summary_fields(meta, stats, plan.projections, context_.issuer.value(part_index_, ""),
                     context_.tool_name);
  return meta;
}

// A search page: which items matched, and where the search goes on.
json::object FetchCall::search_meta(const Page& page, const FitPlan& plan,
                                    json::object meta) const {
  const ArrayCut& shown = plan.cuts.front();
  const std::vector<std::size_t>& indices = *page.indices;
  meta["path"] = page.path;
  meta["query"] = request_.query;
  meta["totalMatches"] = page.total_matches;
  json::array listed;
  for (std::size_t i = 0; i < shown.shown; ++i) listed.emplace_back(indices[i]);
  meta["indices"] = std::move(listed);
  const bool more = shown.shown < indices.size() || page.resume != kNoResume;
  meta["hasMore"] = more;
  if (more) {
    const std::size_t next = shown.shown < indices.size() ? indices[shown.shown] : page.resume;
    meta["nextCursor"] = context_.issuer.array_query(part_index_, page.path, next, context_.limit,
                                                     request_.fields, request_.query);
  }
  meta["hint"] =
      page.total_matches == 0
          ? fmt::format("No item of the array at {} matches \"{}\".",
                        page.path.empty() ? "the top level" : page.path, request_.query)
          : fmt::format("{} item{} match; shown: {} (their indices are in _ctxguard.indices). {}",
                        page.total_matches, page.total_matches == 1 ? "" : "s", shown.shown,
                        more ? fmt::format("For more matches call {} with {{\"cursor\": "
                                           "_ctxguard.nextCursor}}.",
                                           context_.tool_name)
                             : std::string("These are all the matches."));
  if (plan.cuts.size() > 1) {
    json::array others;
    for (std::size_t i = 1; i < plan.cuts.size(); ++i) {
      const ArrayCut& cut = plan.cuts[i];
      others.push_back(cut_fields(cut, context_.issuer.next_page(part_index_, cut)));
    }
    meta["otherCuts"] = std::move(others);
  }
  return meta;
}

void FetchCall::answer_item_as_text(const Page& page, const ArrayCut& shown) {
  const std::size_t index = page.indices != nullptr ? (*page.indices)[0] : shown.begin;
  std::string item_path = page.path;
  append_pointer_index(item_path, index);
  // The pieces go on as the value at the item's path does (answer_value_piece): a string as its
  // characters, anything else as its JSON text.
  const json::value& value = page.array[index];
  const json::string* string = value.if_string();
  json::object item =
      value_piece_fields(item_path, string != nullptr ? PieceOf::kString : PieceOf::kJsonText);
  item["item"] =
      json::object{{"path", page.path}, {"index", index}, {"totalCount", page.array.size()}};
  if (page.indices == nullptr && shown.begin + 1 < shown.total) {
    item["nextItemsCursor"] = context_.issuer.array_page(part_index_, page.path, shown.begin + 1,
                                                         context_.limit, request_.fields);
  }
  if (page.indices != nullptr) {
    // A search goes on past a match too large to show whole: its next match, and the count.
    item["query"] = request_.query;
    item["totalMatches"] = page.total_matches;
    const std::size_t next = page.indices->size() > 1 ? (*page.indices)[1] : page.resume;
    if (next != kNoResume) {
      item["nextItemsCursor"] = context_.issuer.array_query(
          part_index_, page.path, next, context_.limit, request_.fields, request_.query);
    }
  }
  if (string != nullptr) {
    answer_text(*string, 0, item_path, item);
  } else {
    answer_text(to_json(value), 0, item_path, item);
  }
}

Refusable<> FetchCall::answer_array_query(const json::array& array, const std::string& path,
                                          std::size_t begin) {
  auto parsed = Query::parse(request_.query);
  if (!parsed) {
    return FetchRefusal{.error = FetchError::kQueryInvalid,
                        .detail = std::move(parsed.error().message)};
  }
  const Query& query = *parsed;
  // Every match is counted (the model learns how many there are); the first `limit` from
  // `begin` are shown.
  std::vector<std::size_t> shown;
  std::size_t total = 0;
  std::size_t resume = kNoResume;  // the first match beyond the page
  for (std::size_t i = 0; i < array.size(); ++i) {
    if (!query.matches(array[i])) continue;
    ++total;
    if (i < begin) continue;
    if (shown.size() < context_.limit) {
      shown.push_back(i);
    } else if (resume == kNoResume) {
      resume = i;
    }
  }
  if (shown.empty()) {
    answer_no_match(path, total);
  } else {
    answer_page(Page{.array = array,
                     .path = path,
                     .begin = shown.front(),
                     .indices = &shown,
                     .total_matches = total,
                     .resume = resume});
  }
  return {};
}

void FetchCall::answer_no_match(const std::string& path, std::size_t total) {
  json::object meta{{"path", path},
                    {"query", request_.query},
                    {"totalMatches", total},
                    {"indices", json::array{}},
                    {"hasMore", false}};
  meta["hint"] = total == 0 ? fmt::format("No item matches \"{}\".", request_.query)
                            : std::string("No more matches.");
  answer_.record.final_tokens = compose(std::move(meta), "[]").tokens;
}

void FetchCall::answer_value(const json::value& value, const std::string& path) {
  ValueSubject subject(*this, value, path);
  ValueView view;
  view.tables = context_.budget.summary.tables;
  if (value.is_object() && !request_.fields.empty()) {
    view.object_fields[&value.get_object()] = request_.fields;
  }
  const FitResult result = fit(subject, fit_options(), std::move(view));
  answer_.record.final_tokens = result.size.tokens;
  if (!result.fitted) {
    answer_text(to_json(value), 0, path, value_piece_fields(path, PieceOf::kJsonText));
  }
}

}  // namespace ctxguard::pipeline
