#include "telemetry/call_event.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include <fmt/format.h>
#include <boost/json/object.hpp>

#include <iterator>

#include "support/iso_date.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"
#include "support/platform_file.hpp"

namespace ctxguard::telemetry {

namespace json = boost::json;
using std::chrono::duration;
using std::chrono::nanoseconds;

namespace {

constexpr std::string_view kKindNames[] = {"call", "task", "resource", "fetch", "tools_list"};
constexpr std::string_view kOutcomeNames[] = {"passthrough", "compacted",  "summarized",
                                              "paginated",   "chunked",    "error",
                                              "fetched",     "fetch-error"};

bool has_stage(const std::vector<std::string>& stages,
               std::initializer_list<std::string_view> any) {
  return std::any_of(stages.begin(), stages.end(), [&](const std::string& stage) {
    return std::find(any.begin(), any.end(), stage) != any.end();
  });
}

nanoseconds from_ms(double ms) {
  return std::chrono::duration_cast<nanoseconds>(duration<double, std::milli>(std::max(ms, 0.0)));
}

// A non-negative whole number member; absent members are 0.
bool read_count(const json::object& object, std::string_view key, std::size_t& out) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr) return true;
  if (value->is_uint64()) {
    out = static_cast<std::size_t>(value->get_uint64());
  } else if (value->is_int64() && value->get_int64() >= 0) {
    out = static_cast<std::size_t>(value->get_int64());
  } else {
    return false;
  }
  return true;
}

bool read_ms(const json::object& object, std::string_view key, std::optional<nanoseconds>& out) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr || value->is_null()) return true;
  if (!value->is_number()) return false;
  out = from_ms(value->to_number<double>());
  return true;
}

// The fields of a tools_list record (absent in the others); false when one is malformed.
bool read_tool_list_fields(const json::object& object, CallEvent& event) {
  if (const json::value* largest = object.if_contains("largest_tools")) {
    const json::array* list = largest->if_array();
    if (list == nullptr) return false;
    for (const json::value& item : *list) {
      const json::object* listed = item.if_object();
      const json::value* name = listed != nullptr ? listed->if_contains("name") : nullptr;
      CallEvent::ToolTokens entry;
      if (name == nullptr || !name->is_string() || !read_count(*listed, "tokens", entry.tokens)) {
        return false;
      }
      entry.name = std::string(name->get_string());
      event.largest_tools.push_back(std::move(entry));
    }
  }
  if (object.contains("instructions_tokens")) {
    std::size_t tokens = 0;
    if (!read_count(object, "instructions_tokens", tokens)) return false;
    event.instructions_tokens = tokens;
  }
  return true;
}

}  // namespace

std::string_view to_string(CallKind kind) { return kKindNames[static_cast<int>(kind)]; }
std::string_view to_string(Outcome outcome) { return kOutcomeNames[static_cast<int>(outcome)]; }

std::optional<CallKind> parse_call_kind(std::string_view text) {
  const auto* found = std::find(std::begin(kKindNames), std::end(kKindNames), text);
  if (found == std::end(kKindNames)) return std::nullopt;
  return static_cast<CallKind>(found - std::begin(kKindNames));
}

std::optional<Outcome> parse_outcome(std::string_view text) {
  const auto* found = std::find(std::begin(kOutcomeNames), std::end(kOutcomeNames), text);
  if (found == std::end(kOutcomeNames)) return std::nullopt;
  return static_cast<Outcome>(found - std::begin(kOutcomeNames));
}

bool used_pagination(const std::vector<std::string>& stages) {
  return has_stage(stages, {"paginate"});
}
bool used_summarization(const std::vector<std::string>& stages) {
  return has_stage(stages, {"summarize", "project", "hard-cap"});
}
bool used_chunking(const std::vector<std::string>& stages) { return has_stage(stages, {"chunk"}); }
bool used_compaction(const std::vector<std::string>& stages) {
  return has_stage(stages, {"compact", "tables"});
}

Outcome outcome_of(CallKind kind, const std::vector<std::string>& stages) {
  if (kind == CallKind::kFetch) {
    return has_stage(stages, {"fetch-error"}) ? Outcome::kFetchFailed : Outcome::kFetched;
  }
  if (used_chunking(stages)) return Outcome::kChunked;
  if (used_pagination(stages)) return Outcome::kPaginated;
  if (used_summarization(stages)) return Outcome::kSummarized;
  if (used_compaction(stages)) return Outcome::kCompacted;
  return Outcome::kPassthrough;
}

double CallEvent::reduction_percent() const {
  if (original_tokens == 0 || final_tokens >= original_tokens) return 0.0;
  const double saved = static_cast<double>(original_tokens - final_tokens);
  return std::round(10000.0 * saved / static_cast<double>(original_tokens)) / 100.0;
}

std::string format_time(std::chrono::system_clock::time_point time) {
  const auto ms = std::chrono::floor<std::chrono::milliseconds>(time.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  const std::tm utc = platform::utc_calendar(seconds);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     ((ms % 1000) + 1000) % 1000);
}

std::optional<std::chrono::system_clock::time_point> parse_time(std::string_view text) {
  Calendar calendar;
  const auto instant = parse_iso_date(text, calendar);
  if (!instant) return std::nullopt;
  // The fraction's first nine digits, as nanoseconds.
  std::int64_t nanos = 0;
  for (std::size_t i = 0; i < 9; ++i) {
    nanos = nanos * 10 + (i < instant->fraction.size() ? instant->fraction[i] - '0' : 0);
  }
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(instant->seconds) + nanoseconds(nanos)));
}

std::string to_json_line(const CallEvent& event) {
  // Written field by field rather than through a json::object: a record is built for every call
  // on the relay's thread, and this is several times faster (bench/telemetry_bench).
  std::string line;
  line.reserve(512);
  const auto out = std::back_inserter(line);
  const auto text = [&](std::string_view key, std::string_view value) {
    fmt::format_to(out, ",\"{}\":", key);
    write_json_string(line, value);
  };
  const auto number = [&](std::string_view key, auto value) {
    fmt::format_to(out, ",\"{}\":{}", key, value);
  };
  const auto flag = [&](std::string_view key, bool value) {
    fmt::format_to(out, ",\"{}\":{}", key, value ? "true" : "false");
  };
  fmt::format_to(out, "{{\"time\":\"{}\",\"id\":", format_time(event.time));
  write_json(line, event.id);
  text("kind", to_string(event.kind));
  text("tool", event.tool);
  if (!event.client.empty()) text("client", event.client);
  if (!event.limit.empty()) text("limit", event.limit);
  text("mode", event.observed ? "observe" : "enforce");
  text("outcome", to_string(event.outcome));
  line += ",\"stages\":[";
  for (std::size_t i = 0; i < event.stages.size(); ++i) {
    if (i > 0) line += ',';
    write_json_string(line, event.stages[i]);
  }
  line += ']';
  number("budget", event.budget);
  number("original_tokens", event.original_tokens);
  number("final_tokens", event.final_tokens);
  fmt::format_to(out, ",\"reduction_pct\":{:.2f}", event.reduction_percent());
  number("original_bytes", event.original_bytes);
  number("final_bytes", event.final_bytes);
  number("items_total", event.items_total);
  number("items_shown", event.items_shown);
  if (event.fill_pct) fmt::format_to(out, ",\"fill_pct\":{:.2f}", *event.fill_pct);
  flag("over_budget", event.over_budget);
  flag("pagination_used", used_pagination(event.stages));
  flag("summarization_used", used_summarization(event.stages));
  flag("chunking_used", used_chunking(event.stages));
  flag("compaction_used", used_compaction(event.stages));
  fmt::format_to(out, ",\"proxy_ms\":{:.3f}", milliseconds(event.proxy_latency));
  if (event.server_latency) {
    fmt::format_to(out, ",\"server_ms\":{:.3f}", milliseconds(*event.server_latency));
  }
  if (!event.error.empty()) text("error", event.error);
  if (event.kind == CallKind::kToolsList) {
    line += ",\"largest_tools\":[";
    for (std::size_t i = 0; i < event.largest_tools.size(); ++i) {
      if (i > 0) line += ',';
      line += "{\"name\":";
      write_json_string(line, event.largest_tools[i].name);
      fmt::format_to(out, ",\"tokens\":{}}}", event.largest_tools[i].tokens);
    }
    line += ']';
  }
  if (event.instructions_tokens) number("instructions_tokens", *event.instructions_tokens);
  line += '}';
  return line;
}

Result<CallEvent> parse_call_event(std::string_view line) {
  auto parsed = parse_json(line);
  if (!parsed) return make_error_code(Error::kInvalidJson);
  const json::object* object = parsed->if_object();
  if (object == nullptr) return make_error_code(Error::kInvalidRecord);
  const auto text = [&](std::string_view key) -> const json::string* {
    const json::value* value = object->if_contains(key);
    return value != nullptr ? value->if_string() : nullptr;
  };

  CallEvent event;
  const json::string* time = text("time");
  const json::string* kind = text("kind");
  const json::string* tool = text("tool");
  const json::string* outcome = text("outcome");
  if (time == nullptr || kind == nullptr || tool == nullptr || outcome == nullptr) {
    return make_error_code(Error::kInvalidRecord);
  }
  const auto when = parse_time(*time);
  const auto call_kind = parse_call_kind(*kind);
  const auto filed_under = parse_outcome(*outcome);
  if (!when || !call_kind || !filed_under) return make_error_code(Error::kInvalidRecord);
  event.time = *when;
  event.kind = *call_kind;
  event.tool = std::string(*tool);
  event.outcome = *filed_under;
  if (const json::value* id = object->if_contains("id")) event.id = *id;
  if (const json::string* client = text("client")) event.client = std::string(*client);
  if (const json::string* limit = text("limit")) event.limit = std::string(*limit);
  if (const json::string* mode = text("mode")) event.observed = *mode == "observe";
  if (const json::value* stages = object->if_contains("stages")) {
    const json::array* list = stages->if_array();
    if (list == nullptr) return make_error_code(Error::kInvalidRecord);
    for (const json::value& stage : *list) {
      if (!stage.is_string()) return make_error_code(Error::kInvalidRecord);
      event.stages.emplace_back(stage.get_string());
    }
  }
  const std::pair<std::string_view, std::size_t*> counts[] = {
      {"budget", &event.budget},
      {"original_tokens", &event.original_tokens},
      {"final_tokens", &event.final_tokens},
      {"original_bytes", &event.original_bytes},
      {"final_bytes", &event.final_bytes},
      {"items_total", &event.items_total},
      {"items_shown", &event.items_shown}};
  for (const auto& [key, target] : counts) {
    if (!read_count(*object, key, *target)) return make_error_code(Error::kInvalidRecord);
  }
  if (!read_tool_list_fields(*object, event)) return make_error_code(Error::kInvalidRecord);
  if (const json::value* fill = object->if_contains("fill_pct")) {
    if (!fill->is_number() || fill->to_number<double>() < 0) {
      return make_error_code(Error::kInvalidRecord);
    }
    event.fill_pct = fill->to_number<double>();
  }
  if (const json::value* over = object->if_contains("over_budget")) {
    if (!over->is_bool()) return make_error_code(Error::kInvalidRecord);
    event.over_budget = over->get_bool();
  }
  std::optional<nanoseconds> proxy_latency;
  if (!read_ms(*object, "proxy_ms", proxy_latency) ||
      !read_ms(*object, "server_ms", event.server_latency)) {
    return make_error_code(Error::kInvalidRecord);
  }
  event.proxy_latency = proxy_latency.value_or(nanoseconds(0));
  if (const json::string* error = text("error")) event.error = std::string(*error);
  return event;
}

}  // namespace ctxguard::telemetry
