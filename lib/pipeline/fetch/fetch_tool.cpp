#include "pipeline/fetch/fetch_tool.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "pipeline/metadata.hpp"
#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

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

// The cursor problem's name in telemetry (ctxguard_cursor_errors_total's reason).
std::string_view cursor_reason(const std::error_code& error) {
  switch (static_cast<Error>(error.value())) {
    case Error::kCursorExpired:
      return "expired";
    case Error::kCursorForged:
      return "forged";
    default:
      return "malformed";
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
  } else if (value.is_double() && std::isfinite(value.get_double()) &&
             value.get_double() == std::trunc(value.get_double())) {
    // Clamped like a uint64 above, before the conversion: beyond int64's range it is undefined.
    number = static_cast<std::int64_t>(std::clamp(value.get_double(), -9e18, 9e18));
  } else {
    error = high >= SIZE_MAX / 2
                ? fmt::format("`{}` must be a whole number, {} or more.", name, low)
                : fmt::format("`{}` must be a whole number from {} to {}.", name, low, high);
    return std::nullopt;
  }
  if (number < static_cast<std::int64_t>(low) || static_cast<std::uint64_t>(number) > high) {
    // Line numbers have no useful upper bound to state.
    error = high >= SIZE_MAX / 2
                ? fmt::format("`{}` {} is out of range: it must be {} or more.", name, number, low)
                : fmt::format("`{}` {} is out of range: it must be from {} to {}.", name, number,
                              low, high);
    return std::nullopt;
  }
  return static_cast<std::size_t>(number);
}

}  // namespace

FetchAnswer FetchTool::answer(const json::value& arguments, const SettingsFor& settings_for,
                              std::chrono::steady_clock::time_point now,
                              std::chrono::system_clock::time_point wall_now) {
  FetchAnswer answer;
  answer.record.tool = name_;
  // `reason` names the failure in telemetry: a cursor problem, or "argument".
  const auto fail = [&](std::string message, std::string_view reason = "argument") {
    answer.result = text_tool_result(std::move(message), true);
    answer.record.stages = {"fetch-error"};
    answer.record.error = reason;
    return std::move(answer);
  };

  const json::object* args = arguments.if_object();
  const json::value* cursor_arg = args != nullptr ? args->if_contains("cursor") : nullptr;
  if (cursor_arg == nullptr || !cursor_arg->is_string()) {
    return fail("`cursor` is required: pass the _ctxguard.nextCursor of a shortened result.",
                "missing");
  }
  auto payload = codec_.decode(std::string_view(cursor_arg->get_string()), wall_now);
  if (!payload) {
    return fail(cursor_problem(payload.error(), codec_.ttl()), cursor_reason(payload.error()));
  }

  Request request;
  request.payload = std::move(*payload);
  request.fields = request.payload.fields;
  request.query = request.payload.query;
  std::string error;
  std::optional<std::size_t> limit;  // checked against the tool's maxPageSize below
  if (const json::value* limit_arg = args->if_contains("limit"); limit_arg != nullptr) {
    limit = whole_number(*limit_arg, "limit", 1, SIZE_MAX / 2, error);
    if (!limit) return fail(error);
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
    if (query_arg->get_string().empty()) {
      return fail("`query` is empty: give one or more words or field=value terms.");
    }
    request.query = std::string(query_arg->get_string());
    // A new search starts at the beginning; the same query continues where its cursor points.
    if (request.payload.query != request.query) request.payload.offset = 0;
  }

  const std::uint64_t entry_id = request.payload.entry;
  const std::shared_ptr<const CachedResult> entry = cache_.find(entry_id, now);
  if (entry == nullptr) {
    return fail(
        "The result this cursor belongs to is no longer cached (it expired or was evicted to "
        "free memory). Call the original tool again.",
        "evicted");
  }
  if (request.payload.part >= entry->parts.size()) {
    return fail("This cursor does not match its result.", "mismatch");
  }
  // The settings of the tool whose result this is, as configured now.
  const config::BudgetSettings& budget = settings_for(entry->tool);
  answer.record.tool = name_ + ":" + entry->tool;
  if (limit && *limit > budget.max_page_size) {
    return fail(fmt::format("`limit` must be a whole number from 1 to {}.", budget.max_page_size));
  }
  // A limit the cursor carries was allowed when it was issued; a reload may have lowered the max.
  const bool carried =
      request.payload.limit != 0 && request.payload.kind == cursor::CursorKind::kArrayPage;
  request.limit = limit     ? *limit
                  : carried ? std::min<std::size_t>(request.payload.limit, budget.max_page_size)
                            : budget.page_size;
  if (!request.query.empty() && !budget.search) {
    return fail(
        fmt::format(
            "Search is turned off for results of {} (search: false in ctxguard's configuration). "
            "Page through it without `query`.",
            entry->tool),
        "search-off");
  }
  const CachedPart& part = entry->parts[request.payload.part];
  answer.record.cache_entry = entry_id;
  answer.record.stages = {"fetch"};
  const CursorIssuer issuer(codec_, entry_id, wall_now);
  const Call call{budget, issuer};
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
    answer_lines(answer, part, part_index, first, last, call);
    return answer;
  }
  if (text_part) {
    if (request.path) {
      return fail(
          "`path` applies to JSON results; this cursor is into text (use startLine/endLine).");
    }
    if (!request.query.empty()) {
      std::size_t from = request.payload.kind == cursor::CursorKind::kTextLines &&
                                 request.payload.query == request.query
                             ? static_cast<std::size_t>(request.payload.offset)
                             : 1;
      if (!answer_line_query(answer, part, part_index, request.query,
                             std::max<std::size_t>(from, 1), call, error)) {
        return fail(error);
      }
      return answer;
    }
    switch (request.payload.kind) {
      case cursor::CursorKind::kTextChunk:
        if (request.payload.offset >= part.chunks.size()) {
          return fail("This cursor does not match its result.", "mismatch");
        }
        answer_chunk(answer, part, part_index, static_cast<std::size_t>(request.payload.offset),
                     call);
        return answer;
      case cursor::CursorKind::kTextLines:
        if (request.payload.offset > part.text.size()) {
          return fail("This cursor does not match its result.", "mismatch");
        }
        answer_lines(answer, part, part_index, 0, request.payload.limit, call,
                     static_cast<std::size_t>(request.payload.offset));
        return answer;
      case cursor::CursorKind::kTextRange:
      case cursor::CursorKind::kValue:
        if (request.payload.offset > part.text.size()) {
          return fail("This cursor does not match its result.", "mismatch");
        }
        answer_text(answer, part.text, static_cast<std::size_t>(request.payload.offset), part_index,
                    "", call, {});
        return answer;
      case cursor::CursorKind::kArrayPage:
        return fail("This cursor does not match its result.", "mismatch");
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
    if (!request.query.empty()) {
      return fail(
          "`query` does not apply to the pieces of one value; search the array or text that holds "
          "it instead.");
    }
    if (const json::string* string = value->if_string()) {
      if (request.payload.offset > string->size())
        return fail("This cursor does not match its result.", "mismatch");
      answer_text(answer, *string, static_cast<std::size_t>(request.payload.offset), part_index,
                  path, call, value_piece_fields(path, true));
      return answer;
    }
    const std::string subtree = to_json(*value);
    if (request.payload.offset > subtree.size())
      return fail("This cursor does not match its result.", "mismatch");
    answer_text(answer, subtree, static_cast<std::size_t>(request.payload.offset), part_index, path,
                call, value_piece_fields(path, false));
    return answer;
  }
  if (const json::string* string = value->if_string()) {
    if (!request.query.empty()) {
      return fail(fmt::format(
          "`query` applies to arrays and text; the value at \"{}\" is a string. Fetch it without "
          "`query`.",
          path));
    }
    answer_text(answer, *string, 0, part_index, path, call, value_piece_fields(path, true));
    return answer;
  }
  if (const json::array* array = value->if_array()) {
    const bool continued = request.payload.kind == cursor::CursorKind::kArrayPage && !request.path;
    std::size_t begin = continued ? static_cast<std::size_t>(request.payload.offset) : 0;
    if (begin > array->size()) return fail("This cursor does not match its result.", "mismatch");
    if (!request.query.empty()) {
      if (!answer_array_query(answer, *entry, part_index, *array, path, begin, request, call,
                              error)) {
        return fail(error);
      }
      return answer;
    }
    answer_page(answer, *entry, part_index, *array, path, begin, nullptr, 0, kNoResume, request,
                call, {});
    return answer;
  }
  if (!request.query.empty())
    return fail("`query` applies to arrays and text; this value is neither.");
  answer_value(answer, *entry, part_index, *value, path, request, call);
  return answer;
}

}  // namespace ctxguard::pipeline
