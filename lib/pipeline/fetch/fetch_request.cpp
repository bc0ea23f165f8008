#include "pipeline/fetch/fetch_request.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "support/error.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

// A whole number argument, 1 or more.
Refusable<std::size_t> whole_number(const json::value& value, std::string_view name) {
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
    return FetchRefusal{.error = FetchError::kNotWholeNumber, .detail = std::string(name)};
  }
  if (number < 1) {
    return FetchRefusal{
        .error = FetchError::kBelowOne, .detail = std::string(name), .number = number};
  }
  return static_cast<std::size_t>(number);
}

Refusable<> parse_fields(const json::value& value, FetchRequest& request) {
  const json::array* list = value.if_array();
  if (list == nullptr || list->size() > cursor::kMaxFields) {
    return refusal(FetchError::kFieldsNotList);
  }
  request.fields.clear();
  for (const json::value& field : *list) {
    if (!field.is_string() || field.get_string().size() > cursor::kMaxFieldBytes) {
      return refusal(FetchError::kFieldsNotList);
    }
    request.fields.emplace_back(field.get_string());
  }
  request.fields_given = true;
  return {};
}

Refusable<> parse_path(const json::value& value, FetchRequest& request) {
  const json::string* path = value.if_string();
  if (path == nullptr || path->size() > cursor::kMaxPathBytes ||
      (!path->empty() && path->front() != '/')) {
    return refusal(FetchError::kPathNotPointer);
  }
  request.path = std::string(*path);
  return {};
}

Refusable<> parse_query(const json::value& value, FetchRequest& request) {
  const json::string* query = value.if_string();
  if (query == nullptr) return refusal(FetchError::kQueryNotString);
  if (query->empty()) return refusal(FetchError::kQueryEmpty);
  request.query = std::string(*query);
  // A new search starts at the beginning; the same query continues where its cursor points.
  if (request.payload.query != request.query) request.payload.offset = 0;
  return {};
}

Refusable<> parse_number(const json::object& args, std::string_view name,
                         std::optional<std::size_t>& target) {
  const json::value* value = args.if_contains(name);
  if (value == nullptr) return {};
  const Refusable<std::size_t> number = whole_number(*value, name);
  if (!number) return number.error();
  target = *number;
  return {};
}

// The arguments beside the cursor, in the order their problems are reported.
Refusable<> parse_arguments(const json::object& args, FetchRequest& request) {
  if (auto parsed = parse_number(args, "limit", request.limit); !parsed) return parsed;
  if (const json::value* fields = args.if_contains("fields")) {
    if (auto parsed = parse_fields(*fields, request); !parsed) return parsed;
  }
  if (const json::value* path = args.if_contains("path")) {
    if (auto parsed = parse_path(*path, request); !parsed) return parsed;
  }
  if (auto parsed = parse_number(args, "startLine", request.start_line); !parsed) return parsed;
  if (auto parsed = parse_number(args, "endLine", request.end_line); !parsed) return parsed;
  if (const json::value* query = args.if_contains("query")) {
    if (auto parsed = parse_query(*query, request); !parsed) return parsed;
  }
  if (const json::value* aggregate = args.if_contains("aggregate")) {
    auto spec = parse_aggregate(*aggregate);
    if (!spec) {
      return FetchRefusal{.error = FetchError::kAggregateInvalid,
                          .detail = std::move(spec.error().message)};
    }
    // A new aggregate starts at its first group; the same one continues where its cursor points.
    if (request.aggregate != *spec) request.payload.offset = 0;
    request.aggregate = *std::move(spec);
  }
  return {};
}

}  // namespace

std::string fetch_refusal_message(const FetchRefusal& refusal) {
  switch (refusal.error) {
    case FetchError::kCursorMissing:
      return "`cursor` is required: pass the _ctxguard.nextCursor of a shortened result.";
    case FetchError::kCursorMalformed:
      return "This is not a valid cursor. Pass _ctxguard.nextCursor exactly as given, or call the "
             "original tool again.";
    case FetchError::kCursorForged:
      return "This cursor was altered or comes from another ctxguard session. Use the "
             "_ctxguard.nextCursor exactly as given, or call the original tool again.";
    case FetchError::kCursorExpired:
      return fmt::format(
          "This cursor has expired (cursors last {} seconds). Call the original tool again for a "
          "fresh result and cursor.",
          refusal.number);
    case FetchError::kNotWholeNumber:
      return fmt::format("`{}` must be a whole number, 1 or more.", refusal.detail);
    case FetchError::kBelowOne:
      return fmt::format("`{}` {} is out of range: it must be 1 or more.", refusal.detail,
                         refusal.number);
    case FetchError::kLimitOverMax:
      return fmt::format("`limit` must be a whole number from 1 to {}.", refusal.number);
    case FetchError::kFieldsNotList:
      return "`fields` must be a list of key names, e.g. [\"id\", \"name\"].";
    case FetchError::kPathNotPointer:
      return "`path` must be a JSON Pointer such as \"/items/3/description\", as shortened values "
             "name it.";
    case FetchError::kQueryNotString:
      return "`query` must be a string, e.g. \"status=cancelled\".";
    case FetchError::kQueryEmpty:
      return "`query` is empty: give one or more words or field=value terms.";
    case FetchError::kQueryInvalid:
      return refusal.detail;
    case FetchError::kEvicted:
      return "The result this cursor belongs to is no longer cached (it expired or was evicted to "
             "free memory). Call the original tool again.";
    case FetchError::kMismatch:
      return "This cursor does not match its result.";
    case FetchError::kSearchOff:
      return fmt::format(
          "Search is turned off for results of {} (search: false in ctxguard's configuration). "
          "Page through it without `query`.",
          refusal.detail);
    case FetchError::kLinesOnJson:
      return "`startLine`/`endLine` apply to text results; this cursor is into JSON.";
    case FetchError::kEndBeforeStart:
      return "`endLine` must not be before `startLine`.";
    case FetchError::kPathOnText:
      return "`path` applies to JSON results; this cursor is into text (use startLine/endLine).";
    case FetchError::kNoValueAtPath:
      return fmt::format("There is no value at path \"{}\" in this result.", refusal.detail);
    case FetchError::kQueryOnPiece:
      return "`query` does not apply to the pieces of one value; search the array or text that "
             "holds it instead.";
    case FetchError::kQueryOnString:
      return fmt::format(
          "`query` applies to arrays and text; the value at \"{}\" is a string. Fetch it without "
          "`query`.",
          refusal.detail);
    case FetchError::kAggregateInvalid:
      return refusal.detail;
    case FetchError::kAggregateNotArray:
      return "`aggregate` applies to arrays of records; this cursor is not into one.";
    case FetchError::kQueryOnScalar:
      return "`query` applies to arrays and text; this value is neither.";
  }
  return "This call could not be answered.";
}

std::string_view fetch_refusal_reason(FetchError error) {
  switch (error) {
    case FetchError::kCursorMissing:
      return "missing";
    case FetchError::kCursorMalformed:
      return "malformed";
    case FetchError::kCursorForged:
      return "forged";
    case FetchError::kCursorExpired:
      return "expired";
    case FetchError::kEvicted:
      return "evicted";
    case FetchError::kMismatch:
      return "mismatch";
    case FetchError::kSearchOff:
      return "search-off";
    default:
      return "argument";
  }
}

Refusable<FetchRequest> parse_fetch_request(const json::value& arguments,
                                            const cursor::CursorCodec& codec,
                                            std::chrono::system_clock::time_point wall_now) {
  const json::object* args = arguments.if_object();
  const json::value* cursor_arg = args != nullptr ? args->if_contains("cursor") : nullptr;
  if (cursor_arg == nullptr || !cursor_arg->is_string()) {
    return refusal(FetchError::kCursorMissing);
  }
  auto payload = codec.decode(std::string_view(cursor_arg->get_string()), wall_now);
  if (!payload) {
    switch (static_cast<Error>(payload.error().value())) {
      case Error::kCursorExpired:
        return FetchRefusal{.error = FetchError::kCursorExpired, .number = codec.ttl().count()};
      case Error::kCursorForged:
        return refusal(FetchError::kCursorForged);
      default:
        return refusal(FetchError::kCursorMalformed);
    }
  }
  FetchRequest request;
  request.payload = std::move(*payload);
  if (request.payload.kind == cursor::CursorKind::kAggregate) {
    // Its fields are the aggregate, not a projection.
    request.aggregate = AggregateSpec::from_cursor_fields(request.payload.fields);
    if (!request.aggregate) return refusal(FetchError::kCursorMalformed);
  } else {
    request.fields = request.payload.fields;
  }
  request.query = request.payload.query;
  if (auto parsed = parse_arguments(*args, request); !parsed) return parsed.error();
  return request;
}

Refusable<std::size_t> page_limit(const FetchRequest& request,
                                  const config::BudgetSettings& settings) {
  if (request.limit) {
    if (*request.limit > settings.max_page_size) {
      return FetchRefusal{.error = FetchError::kLimitOverMax,
                          .number = static_cast<std::int64_t>(settings.max_page_size)};
    }
    return *request.limit;
  }
  // A limit the cursor carries was allowed when it was issued; a reload may have lowered the max.
  if (request.payload.limit != 0 && request.payload.kind == cursor::CursorKind::kArrayPage) {
    return std::min<std::size_t>(request.payload.limit, settings.max_page_size);
  }
  return settings.page_size;
}

}  // namespace ctxguard::pipeline
