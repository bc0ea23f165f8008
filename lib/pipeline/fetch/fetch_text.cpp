#include "pipeline/fetch/fetch_tool.hpp"

// The answers of ctxguard_fetch over cached text: chunks, line ranges, matching lines, and pieces
// of text that fit the budget (the JSON answers are in fetch_json.cpp).

#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "budget/token_estimator.hpp"
#include "pipeline/fetch/query.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/text/text_cut.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

void FetchTool::answer_chunk(FetchAnswer& answer, const CachedPart& part, std::size_t part_index,
                             std::size_t index, const Call& call) const {
  const TextChunk& chunk = part.chunks[index];
  json::object meta = chunk_metadata(part, part_index, index, call.issuer, name_);
  if (part.spill) meta["file"] = part.spill->path;
  const std::string_view text =
      std::string_view(part.text).substr(chunk.begin, chunk.end - chunk.begin);
  const std::size_t piece = budget::estimate_tokens(text);
  const std::string trailer = settle_budget_fields(meta, call.budget.token_budget, piece,
                                                   trailer_text, answer.record.final_tokens);
  answer.result =
      json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}},
                                           json::object{{"type", "text"}, {"text", trailer}}}}};
  answer.record.items_total = part.chunks.size();
  answer.record.items_shown = 1;
}

// Exactly lines [first, last], as many as fit the budget from `first` on.
void FetchTool::answer_lines(FetchAnswer& answer, const CachedPart& part, std::size_t part_index,
                             std::size_t first, std::size_t last, const Call& call,
                             std::optional<std::size_t> resume_at) const {
  std::optional<LineIndex> own;
  const LineIndex* lines = part.lines.get();
  if (lines == nullptr) lines = &own.emplace(part.text);
  const std::size_t total = lines->lines();
  last = std::min(last, total);
  std::size_t begin = first <= total ? lines->line_begin(first) : part.text.size();
  if (resume_at) {
    begin = *resume_at;
    first = lines->line_of(begin);  // total + 1 at the very end
  }
  std::size_t end = first <= last ? lines->line_end(last) : begin;
  std::size_t allowance =
      call.budget.token_budget - std::min(call.budget.token_budget / 2, kMetadataTokens);
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
    meta["offset"] = begin;
    meta["startLine"] = first;
    meta["endLine"] = shown_last;
    meta["totalLines"] = total;
    meta["bytes"] = cut - begin;
    const bool more = cut < end;
    meta["hasMore"] = more;
    // Resumes at the byte after the piece: the next line, or inside this one when one line
    // alone is over the budget.
    if (more) meta["nextCursor"] = call.issuer.line_range(part_index, cut, last);
    meta["hint"] = first > total ? fmt::format("The text has only {} lines.", total)
                   : more        ? fmt::format(
                                       "Lines {}-{} of the {} asked for (the budget ends here). For the "
                                              "rest call {} with {{\"cursor\": _ctxguard.nextCursor}}.",
                                       first, shown_last, last, name_)
                          : fmt::format("Lines {}-{} of {}.", first, shown_last, total);
    const std::size_t piece =
        budget::estimate_tokens(std::string_view(part.text).substr(begin, cut - begin));
    trailer = settle_budget_fields(meta, call.budget.token_budget, piece, trailer_text,
                                   answer.record.final_tokens);
    if (answer.record.final_tokens <= call.budget.token_budget || allowance < 64) {
      end = cut;
      break;
    }
    allowance -=
        std::min(allowance / 2, answer.record.final_tokens - call.budget.token_budget + 16);
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
                                  std::size_t from, const Call& call, std::string& error) const {
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
      call.budget.token_budget - std::min(call.budget.token_budget / 2, kMetadataTokens + 40);
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
  if (resume != 0) meta["nextCursor"] = call.issuer.line_query(part_index, resume, query_text);
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
  const std::string trailer = settle_budget_fields(meta, call.budget.token_budget, counter.tokens(),
                                                   trailer_text, answer.record.final_tokens);
  answer.result =
      json::object{{"content", json::array{json::object{{"type", "text"}, {"text", body}},
                                           json::object{{"type", "text"}, {"text", trailer}}}}};
  answer.record.items_total = total;
  answer.record.items_shown = shown;
  return true;
}

void FetchTool::answer_text(FetchAnswer& answer, std::string_view text, std::size_t begin,
                            std::size_t part, const std::string& path, const Call& call,
                            json::object extra) const {
  std::size_t allowance =
      call.budget.token_budget - std::min(call.budget.token_budget / 2, kMetadataTokens);
  std::string trailer;
  std::size_t end = 0;
  for (int round = 0; round < kPlanningRounds; ++round) {
    end = begin == text.size() ? begin : cut_text(text, begin, allowance);
    json::object meta = extra;
    meta["offset"] = begin;
    meta["returnedBytes"] = end - begin;
    meta["totalBytes"] = text.size();
    meta["hasMore"] = end < text.size();
    if (end < text.size()) meta["nextCursor"] = call.issuer.text_range(part, path, end);
    std::string hint = text_hint(end, text.size(), end < text.size(), name_);
    if (extra.contains("nextItemsCursor")) {
      hint += " This item alone exceeds the budget; for the items after it, call " + name_ +
              " with {\"cursor\": _ctxguard.nextItemsCursor}.";
    }
    meta["hint"] = std::move(hint);
    const std::size_t piece = budget::estimate_tokens(text.substr(begin, end - begin));
    trailer = settle_budget_fields(meta, call.budget.token_budget, piece, trailer_text,
                                   answer.record.final_tokens);
    if (answer.record.final_tokens <= call.budget.token_budget || allowance < 64) break;
    allowance -=
        std::min(allowance / 2, answer.record.final_tokens - call.budget.token_budget + 16);
  }
  answer.result = json::object{
      {"content",
       json::array{json::object{{"type", "text"}, {"text", text.substr(begin, end - begin)}},
                   json::object{{"type", "text"}, {"text", trailer}}}}};
  answer.record.items_total = text.size();
  answer.record.items_shown = end - begin;
}

}  // namespace ctxguard::pipeline
