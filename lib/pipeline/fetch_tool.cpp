#include "pipeline/fetch_tool.hpp"

#include <fmt/format.h>

#include "budget/token_estimator.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/paginate.hpp"
#include "pipeline/text_cut.hpp"
#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

constexpr std::size_t kMetadataTokens = 160;
constexpr double kTokensPerCursor = 70;
constexpr int kPlanningRounds = 6;

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

}  // namespace

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

  std::size_t limit = payload->limit != 0 ? payload->limit : budget_.page_size;
  if (const json::value* limit_arg = args->if_contains("limit"); limit_arg != nullptr) {
    std::int64_t requested = 0;
    if (limit_arg->is_int64()) {
      requested = limit_arg->get_int64();
    } else if (limit_arg->is_uint64()) {
      requested =
          static_cast<std::int64_t>(std::min<std::uint64_t>(limit_arg->get_uint64(), INT64_MAX));
    } else if (limit_arg->is_double() &&
               limit_arg->get_double() ==
                   static_cast<double>(static_cast<std::int64_t>(limit_arg->get_double()))) {
      requested = static_cast<std::int64_t>(limit_arg->get_double());
    } else {
      return fail(
          fmt::format("`limit` must be a whole number from 1 to {}.", budget_.max_page_size));
    }
    if (requested < 1 || static_cast<std::uint64_t>(requested) > budget_.max_page_size) {
      return fail(fmt::format("`limit` {} is out of range: it must be from 1 to {}.", requested,
                              budget_.max_page_size));
    }
    limit = static_cast<std::size_t>(requested);
  }
  std::vector<std::string> fields = payload->fields;
  if (const json::value* fields_arg = args->if_contains("fields"); fields_arg != nullptr) {
    const json::array* list = fields_arg->if_array();
    if (list == nullptr || list->size() > cursor::kMaxFields) {
      return fail("`fields` must be a list of key names, e.g. [\"id\", \"name\"].");
    }
    fields.clear();
    for (const json::value& field : *list) {
      if (!field.is_string() || field.get_string().size() > cursor::kMaxFieldBytes) {
        return fail("`fields` must be a list of key names, e.g. [\"id\", \"name\"].");
      }
      fields.emplace_back(field.get_string());
    }
  }

  const std::uint64_t entry_id = payload->entry ^ cache_id_salt();
  const std::shared_ptr<const CachedResult> entry = cache_.find(entry_id, now);
  if (entry == nullptr) {
    return fail(
        "The result this cursor belongs to is no longer cached (it expired or was evicted to "
        "free memory). Call the original tool again.");
  }
  if (payload->part >= entry->parts.size()) return fail("This cursor does not match its result.");
  const CachedPart& part = entry->parts[payload->part];
  answer.record.tool = name_ + ":" + entry->tool;
  answer.record.cache_entry = entry_id;
  answer.record.stages = {"fetch"};
  const CursorIssuer issuer(codec_, entry_id, wall_now);

  if (payload->kind == cursor::CursorKind::kTextRange) {
    std::string subtree;
    std::string_view text = part.text;
    if (part.is_json) {
      const json::value* value = find_pointer(part.json, payload->path);
      if (value == nullptr) return fail("This cursor does not match its result.");
      subtree = to_json(*value);
      text = subtree;
    }
    if (payload->offset > text.size()) return fail("This cursor does not match its result.");
    answer_text(answer, text, static_cast<std::size_t>(payload->offset), payload->part,
                payload->path, issuer, {});
    return answer;
  }

  const json::value* found = part.is_json ? find_pointer(part.json, payload->path) : nullptr;
  const json::array* array = found != nullptr ? found->if_array() : nullptr;
  if (array == nullptr || payload->offset > array->size()) {
    return fail("This cursor does not match its result.");
  }
  const auto begin = static_cast<std::size_t>(payload->offset);
  const std::size_t count = std::min(limit, array->size() - begin);

  std::string body;
  double overshoot = 0;
  for (int round = 0; round < kPlanningRounds; ++round) {
    CutPlanner planner(budget_.page_size, budget_.min_cut_items, kTokensPerCursor);
    const double measured =
        planner.add_page(*array, payload->part, payload->path, begin, count, fields);
    planner.cut(measured + static_cast<double>(kMetadataTokens) -
                static_cast<double>(budget_.token_budget) + overshoot);
    const std::vector<ArrayCut> cuts = planner.visible_cuts();
    const CutMap map = planner.cut_map();
    const ArrayCut& page = cuts.front();
    body.clear();
    write_page_items(body, *array, ShownRange{page.begin, page.shown}, fields, map);

    json::object projection;
    if (!fields.empty()) {
      json::array list;
      for (const std::string& field : fields) list.emplace_back(field);
      projection["fields"] = std::move(list);
    }
    // The page's own cursor keeps `limit` and `fields`; cuts inside its items start afresh.
    json::object meta = array_metadata(
        cuts,
        [&](const ArrayCut& cut) {
          if (cut.begin + cut.shown >= cut.total) return std::string();
          return cut.is_page
                     ? issuer.array_page(payload->part, cut.path, cut.begin + cut.shown, limit,
                                         fields)
                     : issuer.array_page(payload->part, cut.path, cut.begin + cut.shown, 0, {});
        },
        projection, name_, budget_.max_page_size);
    std::string text = settle_budget_fields(
        meta, budget_.token_budget, 0,
        [&](const json::object& fields_so_far) { return attach_metadata(body, fields_so_far); },
        answer.record.final_tokens);
    answer.record.items_total = page.total;
    answer.record.items_shown = page.shown;
    answer.result = text_tool_result(std::move(text), false);
    if (answer.record.final_tokens <= budget_.token_budget) break;
    if (page.shown <= 1) {
      // One item alone is over the budget: it is served as text, in pieces, with a cursor to
      // the items after it. (Summarizing long fields is the next stage's job.)
      std::string item_path = payload->path;
      append_pointer_index(item_path, page.begin);
      json::object item;
      item["item"] =
          json::object{{"path", payload->path}, {"index", page.begin}, {"totalCount", page.total}};
      if (page.begin + 1 < page.total) {
        item["nextItemsCursor"] =
            issuer.array_page(payload->part, payload->path, page.begin + 1, limit, fields);
      }
      const std::string item_text = to_json((*array)[page.begin]);
      answer_text(answer, item_text, 0, payload->part, item_path, issuer, std::move(item));
      break;
    }
    overshoot += static_cast<double>(answer.record.final_tokens - budget_.token_budget) * 1.25 + 32;
  }
  return answer;
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
