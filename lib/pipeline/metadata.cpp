#include "pipeline/metadata.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "budget/token_estimator.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

cursor::CursorPayload payload_at(cursor::CursorKind kind, std::uint64_t entry, std::size_t part,
                                 const std::string& path, std::size_t offset,
                                 std::chrono::system_clock::time_point now) {
  cursor::CursorPayload payload;
  payload.kind = kind;
  payload.entry = entry;
  payload.part = static_cast<std::uint32_t>(part);
  payload.path = path;
  payload.offset = offset;
  payload.issued_at =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  return payload;
}

}  // namespace

std::string CursorIssuer::array_page(std::size_t part, const std::string& path, std::size_t offset,
                                     std::size_t limit,
                                     const std::vector<std::string>& fields) const {
  cursor::CursorPayload payload =
      payload_at(cursor::CursorKind::kArrayPage, entry_, part, path, offset, now_);
  payload.limit = static_cast<std::uint32_t>(limit);
  payload.fields = fields;
  return codec_.encode(payload);
}

std::string CursorIssuer::next_page(std::size_t part, const ArrayCut& cut, std::size_t limit,
                                    const std::vector<std::string>& fields) const {
  if (cut.begin + cut.shown >= cut.total) return {};
  return array_page(part, cut.path, cut.begin + cut.shown, limit, fields);
}

std::string CursorIssuer::text_range(std::size_t part, const std::string& path,
                                     std::size_t offset) const {
  return codec_.encode(
      payload_at(cursor::CursorKind::kTextRange, entry_, part, path, offset, now_));
}

std::string CursorIssuer::text_chunk(std::size_t part, std::size_t index) const {
  return codec_.encode(payload_at(cursor::CursorKind::kTextChunk, entry_, part, "", index, now_));
}

std::string CursorIssuer::line_range(std::size_t part, std::size_t resume_at,
                                     std::size_t last) const {
  cursor::CursorPayload payload =
      payload_at(cursor::CursorKind::kTextLines, entry_, part, "", resume_at, now_);
  payload.limit = static_cast<std::uint32_t>(std::min<std::size_t>(last, UINT32_MAX));
  return codec_.encode(payload);
}

std::string CursorIssuer::line_query(std::size_t part, std::size_t first,
                                     const std::string& query) const {
  cursor::CursorPayload payload =
      payload_at(cursor::CursorKind::kTextLines, entry_, part, "", first, now_);
  payload.query = query;
  return codec_.encode(payload);
}

std::string CursorIssuer::value(std::size_t part, const std::string& path) const {
  return codec_.encode(payload_at(cursor::CursorKind::kValue, entry_, part, path, 0, now_));
}

std::string CursorIssuer::array_query(std::size_t part, const std::string& path, std::size_t offset,
                                      std::size_t limit, const std::vector<std::string>& fields,
                                      const std::string& query) const {
  return with_list_and_query(cursor::CursorKind::kArrayPage, part, path, offset, limit, fields,
                             query);
}

std::string CursorIssuer::aggregate(std::size_t part, const std::string& path, std::size_t offset,
                                    std::size_t limit, const std::vector<std::string>& spec,
                                    const std::string& query) const {
  return with_list_and_query(cursor::CursorKind::kAggregate, part, path, offset, limit, spec,
                             query);
}

std::string CursorIssuer::with_list_and_query(cursor::CursorKind kind, std::size_t part,
                                              const std::string& path, std::size_t offset,
                                              std::size_t limit,
                                              const std::vector<std::string>& list,
                                              const std::string& query) const {
  cursor::CursorPayload payload = payload_at(kind, entry_, part, path, offset, now_);
  payload.limit = static_cast<std::uint32_t>(limit);
  payload.fields = list;
  payload.query = query;
  return codec_.encode(payload);
}

json::object chunk_metadata(const CachedPart& part, std::size_t part_index, std::size_t index,
                            const CursorIssuer& issuer, std::string_view fetch_tool) {
  const TextChunk& chunk = part.chunks[index];
  const std::size_t total = part.chunks.size();
  json::object meta;
  meta["offset"] = chunk.begin;
  meta["chunkIndex"] = index;
  meta["totalChunks"] = total;
  meta["startLine"] = chunk.first_line;
  meta["endLine"] = chunk.last_line;
  meta["totalLines"] = part.lines ? part.lines->lines() : 0;
  meta["bytesInChunk"] = chunk.end - chunk.begin;
  meta["totalBytes"] = part.text.size();
  const bool has_more = index + 1 < total;
  meta["hasMore"] = has_more;
  if (has_more) meta["nextCursor"] = issuer.text_chunk(part_index, index + 1);
  meta["hint"] =
      has_more
          ? fmt::format(
                "Chunk {} of {} (lines {}-{} of {}). For the next chunk call {} with {{\"cursor\": "
                "_ctxguard.nextCursor}}; add \"startLine\"/\"endLine\" for exact lines or "
                "\"query\" to find lines.",
                index + 1, total, chunk.first_line, chunk.last_line,
                part.lines ? part.lines->lines() : 0, fetch_tool)
          : fmt::format("The last chunk ({} of {}): the text ends here.", index + 1, total);
  return meta;
}

std::string trailer_text(const json::object& fields) {
  return to_json(json::object{{"_ctxguard", in_reading_order(fields)}});
}

json::object in_reading_order(const json::object& meta) {
  json::object ordered;
  ordered.reserve(meta.size());
  if (const json::value* hint = meta.if_contains("hint")) ordered["hint"] = *hint;
  for (const std::string_view key : kWayOnCursors) {
    if (const json::value* value = meta.if_contains(key)) ordered[key] = *value;
  }
  for (const json::key_value_pair& member : meta) {
    if (!ordered.contains(member.key())) ordered[member.key()] = member.value();
  }
  return ordered;
}

std::string way_on_text(const json::object& meta) {
  const json::value* hint = meta.if_contains("hint");
  if (hint == nullptr || !hint->is_string()) return {};
  for (const std::string_view key : kWayOnCursors) {
    const json::value* cursor = meta.if_contains(key);
    if (cursor == nullptr || !cursor->is_string()) continue;
    std::string text = "ctxguard: ";
    text += std::string_view(hint->get_string());
    const std::string named = fmt::format("_ctxguard.{}", key);
    const std::size_t at = text.find(named);
    std::string written;
    write_json_string(written, cursor->get_string());
    if (at == std::string::npos) {
      // A hint that does not name it (never, today): the cursor after it.
      return fmt::format("{} Cursor: {}.", text, written);
    }
    text.replace(at, named.size(), written);
    // Up to the end of the sentence that names it: what follows is in `_ctxguard.hint`.
    const std::size_t end = text.find(". ", at + written.size());
    if (end != std::string::npos) text.resize(end + 1);
    return text;
  }
  return {};
}

json::object value_piece_fields(std::string_view path, PieceOf pieces) {
  return json::object{{"valuePath", path},
                      {"valueType", pieces == PieceOf::kString ? "string" : "json"}};
}

void add_summary_fields(json::object& meta, const ViewStats& stats,
                        const std::vector<Projection>& projections,
                        const std::string& result_cursor, std::string_view fetch_tool) {
  if (stats.strings_cut + stats.values_collapsed == 0 && stats.tables.empty() &&
      projections.empty()) {
    return;
  }
  if (stats.strings_cut > 0) meta["stringsCut"] = stats.strings_cut;
  if (stats.values_collapsed > 0) meta["valuesCollapsed"] = stats.values_collapsed;
  if (!stats.tables.empty()) {
    json::array paths;
    for (const std::string& path : stats.tables) paths.emplace_back(path);
    meta["tables"] = std::move(paths);
  }
  if (!projections.empty()) {
    json::array list;
    for (const Projection& projection : projections) {
      json::array kept;
      for (const std::string& field : projection.kept) kept.emplace_back(field);
      json::array omitted;
      for (const std::string& field : projection.omitted) omitted.emplace_back(field);
      // Records shown after the projection was planned may hold fields the planned ones did
      // not: what the writer left out of them is said to be left out too.
      std::size_t total = projection.total_fields;
      const void* group = projection.array != nullptr ? static_cast<const void*>(projection.array)
                                                      : static_cast<const void*>(projection.object);
      if (const auto left_out = stats.fields_left_out.find(group);
          left_out != stats.fields_left_out.end()) {
        for (const std::string& field : left_out->second) {
          if (std::find(projection.omitted.begin(), projection.omitted.end(), field) ==
              projection.omitted.end()) {
            omitted.emplace_back(field);
            ++total;
          }
        }
      }
      list.push_back(json::object{{"path", projection.path},
                                  {"projectedFields", std::move(kept)},
                                  {"omittedFields", std::move(omitted)},
                                  {"totalFields", total}});
    }
    meta["projections"] = std::move(list);
  }
  meta["resultCursor"] = result_cursor;
  std::string hint;
  if (const json::value* existing = meta.if_contains("hint"); existing && existing->is_string()) {
    hint = std::string(existing->get_string()) + " ";
  }
  hint += "Shortened to fit: ";
  std::vector<std::string> what;
  if (stats.strings_cut > 0) what.emplace_back("long strings end in \"…[+N chars: PATH]\"");
  if (stats.values_collapsed > 0)
    what.emplace_back(
        "deep values read \"[object of N keys: PATH]\" or \"[array of N items: PATH]\"");
  if (!projections.empty()) {
    what.emplace_back("records keep only some fields (_ctxguard.projections)");
  }
  if (!stats.tables.empty()) {
    what.emplace_back(
        "uniform records at _ctxguard.tables are written once as {\"columns\":[...],"
        "\"rows\":[[...]]}, all values kept");
  }
  for (std::size_t i = 0; i < what.size(); ++i) hint += (i == 0 ? "" : "; ") + what[i];
  hint += fmt::format(
      ". For any value in full call {} with {{\"cursor\": _ctxguard.resultCursor, \"path\": "
      "PATH}}",
      fetch_tool);
  if (!projections.empty()) hint += "; add \"fields\": [...] to choose the fields of records";
  hint += '.';
  meta["hint"] = hint;
}

json::object cut_fields(const ArrayCut& cut, const std::string& next_cursor) {
  json::object fields;
  fields["path"] = cut.path;
  fields["offset"] = cut.begin;
  fields["totalCount"] = cut.total;
  fields["pageSize"] = cut.shown;
  const bool has_more = cut.begin + cut.shown < cut.total;
  fields["hasMore"] = has_more;
  if (has_more) fields["nextCursor"] = next_cursor;
  return fields;
}

void set_budget_fields(json::object& meta, std::size_t estimated_tokens, std::size_t token_budget) {
  meta["estimatedTokens"] = estimated_tokens;
  meta["tokenBudget"] = token_budget;
  const double used = static_cast<double>(estimated_tokens) / static_cast<double>(token_budget);
  meta["budgetUsed"] = std::round(used * 100) / 100;
  meta["budgetRemaining"] = estimated_tokens < token_budget ? token_budget - estimated_tokens : 0;
}

json::object array_metadata(const std::vector<ArrayCut>& cuts,
                            const std::function<std::string(const ArrayCut&)>& cursor_for,
                            const json::object& extra, std::string_view fetch_tool,
                            std::size_t max_page_size) {
  const ArrayCut& primary = cuts.front();
  json::object meta = cut_fields(primary, cursor_for(primary));
  for (const json::key_value_pair& member : extra) meta[member.key()] = member.value();
  if (cuts.size() > 1) {
    json::array others;
    for (std::size_t i = 1; i < cuts.size(); ++i) {
      others.push_back(cut_fields(cuts[i], cursor_for(cuts[i])));
    }
    meta["otherCuts"] = std::move(others);
  }
  meta["hint"] = array_hint(primary, cuts.size() - 1, fetch_tool, max_page_size);
  return meta;
}

std::size_t settle_stated_tokens(const std::function<void(std::size_t stated)>& compose,
                                 const std::function<std::size_t()>& measure) {
  compose(0);
  std::size_t stated = measure() + 4;
  for (int round = 0; round < 3; ++round) {
    compose(stated);
    const std::size_t measured = measure();
    if (measured <= stated) break;
    stated = measured + 2;
  }
  return stated;
}

std::string settle_budget_fields(json::object& meta, std::size_t token_budget,
                                 std::size_t other_tokens,
                                 const std::function<std::string(const json::object&)>& render,
                                 std::size_t& tokens) {
  std::string text;
  tokens = settle_stated_tokens(
      [&](std::size_t stated) {
        set_budget_fields(meta, stated, token_budget);
        text = render(meta);
      },
      [&] { return other_tokens + budget::estimate_tokens(text); });
  return text;
}

json::object answer_result(std::string way_on, std::vector<std::string> texts) {
  json::array content;
  content.reserve(texts.size() + 1);
  if (!way_on.empty())
    content.push_back(json::object{{"type", "text"}, {"text", std::move(way_on)}});
  for (std::string& text : texts) {
    content.push_back(json::object{{"type", "text"}, {"text", std::move(text)}});
  }
  return json::object{{"content", std::move(content)}};
}

std::string array_hint(const ArrayCut& primary, std::size_t other_cuts, std::string_view fetch_tool,
                       std::size_t max_page_size) {
  const std::string where =
      primary.path.empty() ? std::string("the top-level array") : "the array at " + primary.path;
  if (primary.shown == 0) return "No items left: this array has been read to its end.";
  std::string hint;
  if (primary.begin + primary.shown < primary.total) {
    hint = fmt::format(
        "Showing items {}-{} of {} of {}. For more, call {} with {{\"cursor\": "
        "_ctxguard.nextCursor}}; add \"limit\" (up to {}) or \"fields\" to narrow.",
        primary.begin, primary.begin + primary.shown - 1, primary.total, where, fetch_tool,
        max_page_size);
  } else {
    hint = fmt::format("Showing items {}-{} of {} of {}: the last page.", primary.begin,
                       primary.begin + primary.shown - 1, primary.total, where);
  }
  // Said once, where an array of records is first shown cut: later pages need not repeat it.
  if (primary.holds_records && primary.begin == 0 && primary.shown < primary.total) {
    hint += fmt::format(
        " To count or sum all {} items, pass the same cursor with \"aggregate\": "
        "{{\"groupBy\": FIELD, \"sum\": FIELD}} (and \"query\" to filter).",
        primary.total);
  }
  if (other_cuts > 0) {
    hint += fmt::format(
        " {} more array{} shortened: see _ctxguard.otherCuts; call {} with each one's "
        "nextCursor.",
        other_cuts, other_cuts == 1 ? " was" : "s were", fetch_tool);
  }
  return hint;
}

std::string text_hint(std::size_t shown_end, std::size_t total_bytes, bool has_more,
                      std::string_view fetch_tool) {
  if (!has_more) return fmt::format("The text ends here (byte {} of {}).", shown_end, total_bytes);
  return fmt::format(
      "The text above is cut at byte {} of {}. For the rest, call {} with {{\"cursor\": "
      "_ctxguard.nextCursor}}.",
      shown_end, total_bytes, fetch_tool);
}

std::string attach_metadata(const std::string& body, const json::object& meta) {
  std::string out;
  out.reserve(body.size() + 512);
  out += "{\"_ctxguard\":";
  write_json(out, in_reading_order(meta));
  if (!body.empty() && body.front() == '{') {
    if (body.size() > 2) out += ',';
    out.append(body, 1);
  } else {
    out += ",\"items\":";
    out += body;
    out += '}';
  }
  return out;
}

}  // namespace ctxguard::pipeline
