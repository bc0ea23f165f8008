#include "pipeline/fetch_tool.hpp"

#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "budget/token_estimator.hpp"
#include "pipeline/digest.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/paginate.hpp"
#include "pipeline/projection.hpp"
#include "pipeline/query.hpp"
#include "pipeline/summarize.hpp"
#include "pipeline/text_cut.hpp"
#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

constexpr std::size_t kMetadataTokens = 160;
constexpr double kTokensPerCursor = 70;
constexpr int kPlanningRounds = 6;
constexpr std::size_t kNoResume = SIZE_MAX;

std::string cursor_problem(const std::error_code& error, std::chrono::seconds ttl) {
  switch (static_cast<Error>(error.value())) {
    case Error::kCursorExpired:
      return fmt::format(
          "This cursor has expired (cursors last {} seconds). Call the original tool again for a "
          "fresh result and cursor.",
          ttl.count());
    case Error::kCursorForged:
      return "This cursor was altered or comes from another ctxguard session. Use the "
             "_ctxguard.nextCursor exactly as given, or call the original tool again.";
    default:
      return "This is not a valid cursor. Pass _ctxguard.nextCursor exactly as given, or call the "
             "original tool again.";
  }
}

// A whole number argument from `low` to `high`; nullopt (and `error` set) otherwise.
std::optional<std::size_t> whole_number(const json::value& value, std::string_view name,
                                        std::size_t low, std::size_t high, std::string& error) {
  std::int64_t number = 0;
  if (value.is_int64()) {
    number = value.get_int64();
  } else if (value.is_uint64()) {
    number = static_cast<std::int64_t>(std::min<std::uint64_t>(value.get_uint64(), INT64_MAX));
  } else if (value.is_double() &&
             value.get_double() ==
                 static_cast<double>(static_cast<std::int64_t>(value.get_double()))) {
    number = static_cast<std::int64_t>(value.get_double());
  } else {
    error = fmt::format("`{}` must be a whole number from {} to {}.", name, low, high);
    return std::nullopt;
  }
  if (number < static_cast<std::int64_t>(low) || static_cast<std::uint64_t>(number) > high) {
    error =
        fmt::format("`{}` {} is out of range: it must be from {} to {}.", name, number, low, high);
    return std::nullopt;
  }
  return static_cast<std::size_t>(number);
}

json::array string_array(const std::vector<std::string>& list) {
  json::array out;
  for (const std::string& item : list) out.emplace_back(item);
  return out;
}

}  // namespace

// What one call asks for, validated.
struct FetchTool::Request {
  cursor::CursorPayload payload;
  std::size_t limit = 0;
  FieldList fields;
  bool fields_given = false;
  std::optional<std::string> path;
  std::optional<std::size_t> start_line;
  std::optional<std::size_t> end_line;
  std::string query;
};

FetchAnswer FetchTool::answer(const json::value& arguments,
                              std::chrono::steady_clock::time_point now,
                              std::chrono::system_clock::time_point wall_now) const {
  FetchAnswer answer;
  answer.record.tool = name_;
  const auto fail = [&](std::string message) {
    answer.result = text_tool_result(std::move(message), true);
    answer.record.stages = {"fetch-error"};
    return std::move(answer);
  };

  const json::object* args = arguments.if_object();
  const json::value* cursor_arg = args != nullptr ? args->if_contains("cursor") : nullptr;
  if (cursor_arg == nullptr || !cursor_arg->is_string()) {
    return fail("`cursor` is required: pass the _ctxguard.nextCursor of a shortened result.");
  }
  auto payload = codec_.decode(std::string_view(cursor_arg->get_string()), wall_now);
  if (!payload) return fail(cursor_problem(payload.error(), codec_.ttl()));

  Request request;
  request.payload = std::move(*payload);
  request.limit =
      request.payload.limit != 0 && request.payload.kind == cursor::CursorKind::kArrayPage
          ? request.payload.limit
          : budget_.page_size;
  request.fields = request.payload.fields;
  request.query = request.payload.query;
  std::string error;
  if (const json::value* limit_arg = args->if_contains("limit"); limit_arg != nullptr) {
    const auto limit = whole_number(*limit_arg, "limit", 1, budget_.max_page_size, error);
    if (!limit) return fail(error);
    request.limit = *limit;
  }
  if (const json::value* fields_arg = args->if_contains("fields"); fields_arg != nullptr) {
    const json::array* list = fields_arg->if_array();
    if (list == nullptr || list->size() > cursor::kMaxFields) {
      return fail("`fields` must be a list of key names, e.g. [\"id\", \"name\"].");
    }
    request.fields.clear();
    for (const json::value& field : *list) {
      if (!field.is_string() || field.get_string().size() > cursor::kMaxFieldBytes) {
        return fail("`fields` must be a list of key names, e.g. [\"id\", \"name\"].");
      }
      request.fields.emplace_back(field.get_string());
    }
    request.fields_given = true;
  }
  if (const json::value* path_arg = args->if_contains("path"); path_arg != nullptr) {
    if (!path_arg->is_string() || path_arg->get_string().size() > cursor::kMaxPathBytes ||
        (!path_arg->get_string().empty() && path_arg->get_string().front() != '/')) {
      return fail(
          "`path` must be a JSON Pointer such as \"/items/3/description\", as shortened values "
          "name it.");
    }
    request.path = std::string(path_arg->get_string());
  }
  for (auto [name, target] :
       {std::pair{"startLine", &request.start_line}, std::pair{"endLine", &request.end_line}}) {
    if (const json::value* line = args->if_contains(name); line != nullptr) {
      const auto number = whole_number(*line, name, 1, SIZE_MAX / 2, error);
      if (!number) return fail(error);
      *target = *number;
    }
  }
  if (const json::value* query_arg = args->if_contains("query"); query_arg != nullptr) {
    if (!query_arg->is_string())
      return fail("`query` must be a string, e.g. \"status=cancelled\".");
    request.query = std::string(query_arg->get_string());
    // A new search starts at the beginning; the same query continues where its cursor points.
    if (request.payload.query != request.query) request.payload.offset = 0;
  }

  const std::uint64_t entry_id = request.payload.entry ^ cache_id_salt();
  const std::shared_ptr<const CachedResult> entry = cache_.find(entry_id, now);
  if (entry == nullptr) {
    return fail(
        "The result this cursor belongs to is no longer cached (it expired or was evicted to "
        "free memory). Call the original tool again.");
  }
  if (request.payload.part >= entry->parts.size()) {
    return fail("This cursor does not match its result.");
  }
  const CachedPart& part = entry->parts[request.payload.part];
  answer.record.tool = name_ + ":" + entry->tool;
  answer.record.cache_entry = entry_id;
  answer.record.stages = {"fetch"};
  const CursorIssuer issuer(codec_, entry_id, wall_now);
  const std::size_t part_index = request.payload.part;

  // Text: line ranges, line search, chunks, byte ranges.
  const bool text_part = !part.is_json;
  if (request.start_line || request.end_line) {
    if (!text_part) {
      return fail("`startLine`/`endLine` apply to text results; this cursor is into JSON.");
    }
    const std::size_t first = request.start_line.value_or(1);
    const std::size_t last = request.end_line.value_or(SIZE_MAX / 2);
    if (last < first) return fail("`endLine` must not be before `startLine`.");
    answer_lines(answer, part, part_index, first, last, issuer);
    return answer;
  }
  if (text_part) {
    if (!request.query.empty()) {
      std::size_t from = request.payload.kind == cursor::CursorKind::kTextLines &&
                                 request.payload.query == request.query
                             ? static_cast<std::size_t>(request.payload.offset)
                             : 1;
      if (!answer_line_query(answer, part, part_index, request.query,
                             std::max<std::size_t>(from, 1), issuer, error)) {
        return fail(error);
      }
      return answer;
    }
    switch (request.payload.kind) {
      case cursor::CursorKind::kTextChunk:
        if (request.payload.offset >= part.chunks.size()) {
          return fail("This cursor does not match its result.");
        }
        answer_chunk(answer, part, part_index, static_cast<std::size_t>(request.payload.offset),
                     issuer);
        return answer;
      case cursor::CursorKind::kTextLines:
        answer_lines(answer, part, part_index, static_cast<std::size_t>(request.payload.offset),
                     request.payload.limit, issuer);
        return answer;
      case cursor::CursorKind::kTextRange:
      case cursor::CursorKind::kValue:
        if (request.payload.offset > part.text.size()) {
          return fail("This cursor does not match its result.");
        }
        answer_text(answer, part.text, static_cast<std::size_t>(request.payload.offset), part_index,
                    "", issuer, {});
        return answer;
      case cursor::CursorKind::kArrayPage:
        return fail("This cursor does not match its result.");
    }
  }

  // JSON: the value the cursor (or `path`) names.
  const std::string path = request.path.value_or(request.payload.path);
  const json::value* value = find_pointer(part.json, path);
  if (value == nullptr) {
    return fail(request.path ? fmt::format("There is no value at path \"{}\" in this result.", path)
                             : std::string("This cursor does not match its result."));
  }
  if (request.payload.kind == cursor::CursorKind::kTextRange && !request.path) {
    if (const json::string* string = value->if_string()) {
      if (request.payload.offset > string->size())
        return fail("This cursor does not match its result.");
      answer_text(answer, *string, static_cast<std::size_t>(request.payload.offset), part_index,
                  path, issuer, {});
      return answer;
    }
    const std::string subtree = to_json(*value);
    if (request.payload.offset > subtree.size())
      return fail("This cursor does not match its result.");
    answer_text(answer, subtree, static_cast<std::size_t>(request.payload.offset), part_index, path,
                issuer, {});
    return answer;
  }
  if (const json::string* string = value->if_string()) {
    answer_text(answer, *string, 0, part_index, path, issuer, {});
    return answer;
  }
  if (const json::array* array = value->if_array()) {
    const bool continued = request.payload.kind == cursor::CursorKind::kArrayPage && !request.path;
    std::size_t begin = continued ? static_cast<std::size_t>(request.payload.offset) : 0;
    if (begin > array->size()) return fail("This cursor does not match its result.");
    if (!request.query.empty()) {
      if (!answer_array_query(answer, *entry, part_index, *array, path, begin, request, issuer,
                              error)) {
        return fail(error);
      }
      return answer;
    }
    answer_page(answer, *entry, part_index, *array, path, begin, nullptr, 0, kNoResume, request,
                issuer, {});
    return answer;
  }
  if (!request.query.empty())
    return fail("`query` applies to arrays and text; this value is neither.");
  answer_value(answer, *entry, part_index, *value, path, request, issuer);
  return answer;
}

const FieldList* FetchTool::projection_rule(const CachedResult& entry) const {
  for (const config::ProjectionRule& rule : budget_.summary.projections) {
    if (glob_matches(rule.tool_glob, entry.tool)) return &rule.fields;
  }
  return nullptr;
}

// Lays out a page of `array` (or the value `tree`) within the budget, level by level: nested
// arrays cut to pages, then long strings and deep values cut, then records projected, then fewer
// items. `compose` builds the answer from a layout and returns its tokens.
FetchTool::Layout FetchTool::lay_out(const CachedResult& entry, std::size_t part,
                                     const Subject& subject, const Request& request,
                                     const std::function<std::size_t(Layout&)>& compose) const {
  Layout layout;
  if (subject.array != nullptr && !request.fields.empty()) {
    layout.view.item_fields[subject.array] = request.fields;
  } else if (subject.tree != nullptr && subject.tree->is_object() && !request.fields.empty()) {
    layout.view.object_fields[&subject.tree->get_object()] = request.fields;
  }
  CutMap last_map;
  double last_excess = 0;
  for (const FitLevel level : kFitLevels) {
    if (level == FitLevel::kSummarize) {
      layout.view.max_string_chars = budget_.summary.max_string_chars;
      layout.view.max_depth = budget_.summary.max_depth;
      if (!layout.view.summarizes()) continue;
    }
    if (level == FitLevel::kProject) {
      if (!budget_.summary.project || request.fields_given || !request.fields.empty()) continue;
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
      layout.projections = plan_projections(groups, last_excess * 1.1 + 16, projection_rule(entry),
                                            kMinProjectedFields, layout.view);
      if (layout.projections.empty()) continue;
    }
    double overshoot = 0;
    for (int round = 0; round < kPlanningRounds; ++round) {
      CutPlanner planner(budget_.page_size, budget_.min_cut_items, kTokensPerCursor);
      planner.set_view(layout.view);
      const double measured = subject.array != nullptr
                                  ? planner.add_page(*subject.array, part, subject.path,
                                                     subject.begin, subject.count, subject.indices)
                                  : planner.add_tree(*subject.tree, part, subject.path);
      const double excess = measured + static_cast<double>(kMetadataTokens) -
                            static_cast<double>(budget_.token_budget) + overshoot;
      const bool reached = plan_level(planner, level, excess);
      last_map = planner.cut_map();
      last_excess = planner.excess_left();
      if (!reached && level != FitLevel::kShrink) break;
      layout.cuts = planner.visible_cuts();
      layout.map = std::move(last_map);
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
      if (layout.tokens <= budget_.token_budget) return layout;
      overshoot += static_cast<double>(layout.tokens - budget_.token_budget) * 1.25 + 32;
    }
  }
  return layout;
}

void FetchTool::answer_page(FetchAnswer& answer, const CachedResult& entry, std::size_t part,
                            const json::array& array, const std::string& path, std::size_t begin,
                            const std::vector<std::size_t>* indices, std::size_t total_matches,
                            std::size_t resume, const Request& request, const CursorIssuer& issuer,
                            json::object extra) const {
  const std::size_t count =
      indices != nullptr ? indices->size() : std::min(request.limit, array.size() - begin);
  Subject subject{.array = &array,
                  .tree = nullptr,
                  .path = path,
                  .begin = begin,
                  .count = count,
                  .indices = indices};
  const auto compose = [&](Layout& layout) {
    const ArrayCut& page = layout.cuts.front();
    json::object fields_meta = extra;
    if (!request.fields.empty()) fields_meta["fields"] = string_array(request.fields);
    if (indices == nullptr && begin == 0 && request.query.empty()) {
      if (auto digest = digest_array(array, path)) fields_meta["summary"] = digest->summary;
    }
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
        meta["nextCursor"] = issuer.array_query(part, path, next, request.limit, request.query);
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
          others.push_back(
              cut_fields(cut, cut.begin + cut.shown < cut.total
                                  ? issuer.array_page(part, cut.path, cut.begin + cut.shown, 0, {})
                                  : std::string()));
        }
        meta["otherCuts"] = std::move(others);
      }
    } else {
      meta = array_metadata(
          layout.cuts,
          [&](const ArrayCut& cut) {
            if (cut.begin + cut.shown >= cut.total) return std::string();
            return cut.is_page ? issuer.array_page(part, cut.path, cut.begin + cut.shown,
                                                   request.limit, request.fields)
                               : issuer.array_page(part, cut.path, cut.begin + cut.shown, 0, {});
          },
          fields_meta, name_, budget_.max_page_size);
    }
    add_summary_fields(meta, layout.stats, layout.projections, issuer.value(part, ""), name_);
    std::size_t tokens = 0;
    std::string text = settle_budget_fields(
        meta, budget_.token_budget, 0,
        [&](const json::object& so_far) { return attach_metadata(layout.body, so_far); }, tokens);
    answer.result = text_tool_result(std::move(text), false);
    answer.record.items_total = indices != nullptr ? total_matches : page.total;
    answer.record.items_shown = page.shown;
    return tokens;
  };
  Layout layout = lay_out(entry, part, subject, request, compose);
  answer.record.final_tokens = layout.tokens;
  if (layout.tokens <= budget_.token_budget || layout.cuts.empty() ||
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
        issuer.array_page(part, path, page.begin + 1, request.limit, request.fields);
  }
  answer_text(answer, to_json(array[index]), 0, part, item_path, issuer, std::move(item));
}

bool FetchTool::answer_array_query(FetchAnswer& answer, const CachedResult& entry, std::size_t part,
                                   const json::array& array, const std::string& path,
                                   std::size_t begin, const Request& request,
                                   const CursorIssuer& issuer, std::string& error) const {
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
        meta, budget_.token_budget, 0,
        [&](const json::object& so_far) { return attach_metadata("[]", so_far); }, tokens);
    answer.result = text_tool_result(std::move(text), false);
    answer.record.final_tokens = tokens;
    return true;
  }
  answer_page(answer, entry, part, array, path, shown.front(), &shown, total, resume, request,
              issuer, {});
  return true;
}

void FetchTool::answer_value(FetchAnswer& answer, const CachedResult& entry, std::size_t part,
                             const json::value& value, const std::string& path,
                             const Request& request, const CursorIssuer& issuer) const {
  Subject subject{
      .array = nullptr, .tree = &value, .path = path, .begin = 0, .count = 0, .indices = nullptr};
  const auto compose = [&](Layout& layout) {
    json::object meta;
    if (!layout.cuts.empty()) {
      meta = array_metadata(
          layout.cuts,
          [&](const ArrayCut& cut) {
            return cut.begin + cut.shown < cut.total
                       ? issuer.array_page(part, cut.path, cut.begin + cut.shown, 0, {})
                       : std::string();
          },
          {}, name_, budget_.max_page_size);
    }
    meta["valuePath"] = path;
    if (!request.fields.empty()) meta["fields"] = string_array(request.fields);
    add_summary_fields(meta, layout.stats, layout.projections, issuer.value(part, ""), name_);
    if (!meta.contains("hint")) meta["hint"] = fmt::format("The whole value at \"{}\".", path);
    std::size_t tokens = 0;
    std::string text = settle_budget_fields(
        meta, budget_.token_budget, 0,
        [&](const json::object& so_far) {
          return attach_metadata(layout.body.front() == '{' || layout.body.front() == '['
                                     ? layout.body
                                     : "[" + layout.body + "]",
                                 so_far);
        },
        tokens);
    answer.result = text_tool_result(std::move(text), false);
    return tokens;
  };
  Layout layout = lay_out(entry, part, subject, request, compose);
  answer.record.final_tokens = layout.tokens;
  if (layout.tokens > budget_.token_budget) {
    answer_text(answer, to_json(value), 0, part, path, issuer, {});
  }
}

void FetchTool::answer_chunk(FetchAnswer& answer, const CachedPart& part, std::size_t part_index,
                             std::size_t index, const CursorIssuer& issuer) const {
  const TextChunk& chunk = part.chunks[index];
  json::object meta = chunk_metadata(part, part_index, index, issuer, name_);
  if (!part.spill_path.empty()) meta["file"] = part.spill_path;
  const std::string_view text =
      std::string_view(part.text).substr(chunk.begin, chunk.end - chunk.begin);
  const std::size_t piece = budget::estimate_tokens(text);
  const std::string trailer = settle_budget_fields(
      meta, budget_.token_budget, piece,
      [](const json::object& fields) {
        return to_json(json::object{{"_ctxguard", fields}});
      },
      answer.record.final_tokens);
  answer.result =
      json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}},
                                           json::object{{"type", "text"}, {"text", trailer}}}}};
  answer.record.items_total = part.chunks.size();
  answer.record.items_shown = 1;
}

// Exactly lines [first, last] (FR-023), as many as fit the budget from `first` on.
void FetchTool::answer_lines(FetchAnswer& answer, const CachedPart& part, std::size_t part_index,
                             std::size_t first, std::size_t last,
                             const CursorIssuer& issuer) const {
  std::optional<LineIndex> own;
  const LineIndex* lines = part.lines.get();
  if (lines == nullptr) lines = &own.emplace(part.text);
  const std::size_t total = lines->lines();
  last = std::min(last, total);
  std::size_t begin = first <= total ? lines->line_begin(first) : part.text.size();
  std::size_t end = first <= last ? lines->line_end(last) : begin;
  std::size_t allowance =
      budget_.token_budget - std::min(budget_.token_budget / 2, kMetadataTokens);
  std::string trailer;
  std::size_t shown_last = last;
  for (int round = 0; round < kPlanningRounds; ++round) {
    std::size_t cut = end;
    if (begin < end && budget::estimate_tokens(
                           std::string_view(part.text).substr(begin, end - begin)) > allowance) {
      cut = cut_text(std::string_view(part.text).substr(0, end), begin, allowance);
      // Whole lines only, unless a single line is itself over the budget.
      const std::size_t line = lines->line_of(cut - 1);
      if (lines->line_end(line) != cut && line > first) cut = lines->line_begin(line);
    }
    shown_last = begin < cut ? lines->line_of(cut - 1) : first - 1;
    json::object meta;
    meta["startLine"] = first;
    meta["endLine"] = shown_last;
    meta["totalLines"] = total;
    meta["bytes"] = cut - begin;
    const bool more = cut < end;
    meta["hasMore"] = more;
    if (more) {
      const std::size_t next = lines->line_of(cut) == shown_last ? shown_last : shown_last + 1;
      meta["nextCursor"] = issuer.text_lines(part_index, next, last);
    }
    meta["hint"] = first > total ? fmt::format("The text has only {} lines.", total)
                   : more        ? fmt::format(
                                       "Lines {}-{} of the {} asked for (the budget ends here). For the "
                                              "rest call {} with {{\"cursor\": _ctxguard.nextCursor}}.",
                                       first, shown_last, last, name_)
                          : fmt::format("Lines {}-{} of {}.", first, shown_last, total);
    const std::size_t piece =
        budget::estimate_tokens(std::string_view(part.text).substr(begin, cut - begin));
    trailer = settle_budget_fields(
        meta, budget_.token_budget, piece,
        [](const json::object& fields) {
          return to_json(json::object{{"_ctxguard", fields}});
        },
        answer.record.final_tokens);
    if (answer.record.final_tokens <= budget_.token_budget || allowance < 64) {
      end = cut;
      break;
    }
    allowance -= std::min(allowance / 2, answer.record.final_tokens - budget_.token_budget + 16);
  }
  answer.result = json::object{
      {"content",
       json::array{json::object{{"type", "text"},
                                {"text", std::string_view(part.text).substr(begin, end - begin)}},
                   json::object{{"type", "text"}, {"text", trailer}}}}};
  answer.record.items_total = total;
  answer.record.items_shown = shown_last >= first ? shown_last - first + 1 : 0;
}

bool FetchTool::answer_line_query(FetchAnswer& answer, const CachedPart& part,
                                  std::size_t part_index, const std::string& query_text,
                                  std::size_t from, const CursorIssuer& issuer,
                                  std::string& error) const {
  auto parsed = Query::parse(query_text);
  if (auto* problem = std::get_if<std::string>(&parsed)) {
    error = std::move(*problem);
    return false;
  }
  const Query& query = std::get<Query>(parsed);
  std::optional<LineIndex> own;
  const LineIndex* lines = part.lines.get();
  if (lines == nullptr) lines = &own.emplace(part.text);
  const std::size_t allowance =
      budget_.token_budget - std::min(budget_.token_budget / 2, kMetadataTokens + 40);
  std::string body;
  budget::TokenCounter counter;
  std::size_t total = 0;
  std::size_t shown = 0;
  std::size_t resume = 0;  // the first matching line not shown
  for (std::size_t line = 1; line <= lines->lines(); ++line) {
    std::string_view text = std::string_view(part.text).substr(
        lines->line_begin(line), lines->line_end(line) - lines->line_begin(line));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    if (!query.matches_line(text)) continue;
    ++total;
    if (line < from || resume != 0) continue;
    std::string entry = fmt::format("{}: {}\n", line, text);
    budget::TokenCounter next = counter;
    next.add(entry);
    if (next.tokens() > allowance) {
      if (shown == 0) {  // one very long line: its start
        const std::size_t end = cut_text(entry, 0, allowance);
        entry.resize(end);
        entry += "…\n";
        body += entry;
        ++shown;
        resume = line + 1;
        continue;
      }
      resume = line;
      continue;
    }
    counter = next;
    body += entry;
    ++shown;
  }
  json::object meta;
  meta["query"] = query_text;
  meta["totalMatches"] = total;
  meta["shownMatches"] = shown;
  meta["totalLines"] = lines->lines();
  meta["hasMore"] = resume != 0;
  if (resume != 0) meta["nextCursor"] = issuer.text_lines(part_index, resume, 0, query_text);
  meta["hint"] =
      total == 0
          ? fmt::format("No line matches \"{}\".", query_text)
          : fmt::format(
                "Matching lines, each as \"LINE: text\". {}",
                resume != 0
                    ? fmt::format(
                          "For more matches call {} with {{\"cursor\": _ctxguard.nextCursor}}; for "
                          "context around a line, with \"startLine\"/\"endLine\".",
                          name_)
                    : std::string("These are all the matches."));
  if (body.empty()) body = total == 0 ? "(no matching lines)\n" : "(no more matching lines)\n";
  const std::string trailer = settle_budget_fields(
      meta, budget_.token_budget, counter.tokens(),
      [](const json::object& fields) {
        return to_json(json::object{{"_ctxguard", fields}});
      },
      answer.record.final_tokens);
  answer.result =
      json::object{{"content", json::array{json::object{{"type", "text"}, {"text", body}},
                                           json::object{{"type", "text"}, {"text", trailer}}}}};
  answer.record.items_total = total;
  answer.record.items_shown = shown;
  return true;
}

void FetchTool::answer_text(FetchAnswer& answer, std::string_view text, std::size_t begin,
                            std::size_t part, const std::string& path, const CursorIssuer& issuer,
                            json::object extra) const {
  std::size_t allowance =
      budget_.token_budget - std::min(budget_.token_budget / 2, kMetadataTokens);
  std::string trailer;
  std::size_t end = 0;
  for (int round = 0; round < kPlanningRounds; ++round) {
    end = begin == text.size() ? begin : cut_text(text, begin, allowance);
    json::object meta = extra;
    meta["offset"] = begin;
    meta["returnedBytes"] = end - begin;
    meta["totalBytes"] = text.size();
    meta["hasMore"] = end < text.size();
    if (end < text.size()) meta["nextCursor"] = issuer.text_range(part, path, end);
    std::string hint = text_hint(end, text.size(), end < text.size(), name_);
    if (extra.contains("nextItemsCursor")) {
      hint += " This item alone exceeds the budget; for the items after it, call " + name_ +
              " with {\"cursor\": _ctxguard.nextItemsCursor}.";
    }
    meta["hint"] = std::move(hint);
    const std::size_t piece = budget::estimate_tokens(text.substr(begin, end - begin));
    trailer = settle_budget_fields(
        meta, budget_.token_budget, piece,
        [](const json::object& fields) {
          return to_json(json::object{{"_ctxguard", fields}});
        },
        answer.record.final_tokens);
    if (answer.record.final_tokens <= budget_.token_budget || allowance < 64) break;
    allowance -= std::min(allowance / 2, answer.record.final_tokens - budget_.token_budget + 16);
  }
  answer.result = json::object{
      {"content",
       json::array{json::object{{"type", "text"}, {"text", text.substr(begin, end - begin)}},
                   json::object{{"type", "text"}, {"text", trailer}}}}};
  answer.record.items_total = text.size();
  answer.record.items_shown = end - begin;
}

}  // namespace ctxguard::pipeline
