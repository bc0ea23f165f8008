#include "pipeline/fetch/fetch_call.hpp"

// The answers of ctxguard_fetch over cached text: chunks, line ranges, matching lines, and pieces
// of text that fit the budget (the JSON answers are in fetch_json.cpp).

#include <algorithm>

#include <fmt/format.h>

#include "budget/token_estimator.hpp"
#include "pipeline/fetch/query.hpp"
#include "pipeline/fit/text_fit.hpp"
#include "pipeline/json_parts.hpp"
#include "pipeline/text/log_entry.hpp"
#include "pipeline/text/text_cut.hpp"
#include "pipeline/text/text_digest.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

// A search's `_ctxguard` says more than a piece's: the query, its counts, a longer hint.
constexpr std::size_t kQueryTrailerTokens = 40;
constexpr std::size_t kQueryTrailerChars = 160;

// What a line search's page holds.
struct LineMatches {
  std::string body;  // "LINE: text\n" per match shown
  std::size_t total = 0;
  std::size_t shown = 0;
  std::size_t resume = 0;  // the first matching line not shown (0: none)
};

// Calls visit(content, line) for every line of `text` that `query` matches, in order, the line
// without its line break.
template <typename Visit>
void for_each_match(std::string_view text, const LineIndex& lines, const Query& query,
                    const Visit& visit) {
  for (std::size_t line = 1; line <= lines.lines(); ++line) {
    std::string_view content =
        text.substr(lines.line_begin(line), lines.line_end(line) - lines.line_begin(line));
    while (!content.empty() && (content.back() == '\n' || content.back() == '\r')) {
      content.remove_suffix(1);
    }
    if (query.matches_line(content)) visit(content, line);
  }
}

// The digest of the entries a search of a log matched (docs/protocol.md 5.5), and the room it
// takes in the answer's `_ctxguard` (with its key and its sentence in the hint).
struct MatchesDigest {
  json::object value;  // empty: no entry matched
  std::size_t tokens = 0;
  std::size_t chars = 0;

  static MatchesDigest of(std::string_view text, const LineIndex& lines, const Query& query) {
    LogLinesDigest digest;
    for_each_match(text, lines, query,
                   [&](std::string_view content, std::size_t line) { digest.add(content, line); });
    MatchesDigest matches{.value = digest.finish(), .tokens = 0, .chars = 0};
    if (matches.value.at("entries").to_number<std::size_t>() == 0) {
      matches.value.clear();
      return matches;
    }
    const DigestRoom room = digest_room(matches.value, kMatchesDigestHint);
    matches.tokens = room.tokens;
    matches.chars = room.chars + 12;  // `,"digest":` around it
    return matches;
  }
};

// The lines of `text` matching `query`, counted from line 1, listed from line `from` on while
// they fit `allowance` (a first match alone over it is shown cut).
LineMatches match_lines(std::string_view text, const LineIndex& lines, const Query& query,
                        std::size_t from, const FitBudget& allowance) {
  LineMatches matches;
  budget::TokenCounter counter(allowance.chars != 0);
  for_each_match(text, lines, query, [&](std::string_view content, std::size_t line) {
    ++matches.total;
    if (line < from || matches.resume != 0) return;
    std::string entry = fmt::format("{}: {}\n", line, content);
    budget::TokenCounter next = counter;
    next.add(entry);
    // Every entry ends its line: a body of n entries is n + 1 lines as a client counts them.
    const AnswerSize size{.tokens = next.tokens(),
                          .chars = next.chars(),
                          .bytes = next.bytes(),
                          .lines = matches.shown + 2};
    if (fits(size, allowance)) {
      counter = next;
      matches.body += entry;
      ++matches.shown;
    } else if (matches.shown == 0) {  // one very long line: its start, and the mark after it
      const std::string_view mark = "…\n";
      FitBudget room = allowance;
      if (room.chars != 0) room.chars -= std::min(room.chars - 1, mark.size());
      if (room.bytes != 0) room.bytes -= std::min(room.bytes - 1, mark.size());
      if (room.lines != 0) room.lines -= std::min(room.lines - 1, std::size_t{1});
      entry.resize(cut_text(entry, 0, room));
      matches.body += entry;
      matches.body += mark;
      ++matches.shown;
      matches.resume = line + 1;
    } else {
      matches.resume = line;
    }
  });
  return matches;
}

// The `_ctxguard` of a page of matching lines, without its cursor.
json::object query_meta(const std::string& query, const LineMatches& matches,
                        std::size_t total_lines, const MatchesDigest& digest,
                        const std::string& fetch_tool) {
  json::object meta{{"query", query},
                    {"totalMatches", matches.total},
                    {"shownMatches", matches.shown},
                    {"totalLines", total_lines},
                    {"hasMore", matches.resume != 0}};
  meta["hint"] =
      matches.total == 0
          ? fmt::format("No line matches \"{}\".", query)
          : fmt::format("Matching lines, each as \"LINE: text\". {}",
                        matches.resume != 0
                            ? fmt::format("For more matches call {} with {{\"cursor\": "
                                          "_ctxguard.nextCursor}}; for context around a line, "
                                          "with \"startLine\"/\"endLine\".",
                                          fetch_tool)
                            : std::string("These are all the matches."));
  if (!digest.value.empty()) {
    meta["digest"] = digest.value;
    meta["hint"].as_string().append(kMatchesDigestHint);
  }
  return meta;
}

}  // namespace

AnswerSize FetchCall::set_text_answer(std::string_view piece, json::object meta) {
  std::string way_on = way_on_text(meta);
  const std::size_t other_tokens =
      budget::estimate_tokens(piece) + (way_on.empty() ? 0 : budget::estimate_tokens(way_on));
  std::string trailer = settle_budget_fields(meta, context_.budget.token_budget, other_tokens,
                                             trailer_text, answer_.record.final_tokens);
  answer_.result = answer_result(std::move(way_on), {std::string(piece), std::move(trailer)});
  return result_size(answer_.result, answer_.record.final_tokens);
}

TextReserve FetchCall::trailer_reserve(std::size_t more_tokens, std::size_t more_chars) const {
  return TextReserve::for_trailers(budget(), kMetadataTokens + more_tokens,
                                   kMetadataChars + more_chars);
}

const LineIndex* FetchCall::line_index(std::optional<LineIndex>& own) const {
  return part_.lines != nullptr ? part_.lines.get() : &own.emplace(part_.text);
}

void FetchCall::answer_chunk(std::size_t index) {
  const TextChunk& chunk = part_.chunks[index];
  json::object meta =
      chunk_metadata(part_, part_index_, index, context_.issuer, context_.tool_name);
  if (part_.spill) meta["file"] = part_.spill->path;
  set_text_answer(std::string_view(part_.text).substr(chunk.begin, chunk.end - chunk.begin),
                  std::move(meta));
  answer_.record.items_total = part_.chunks.size();
  answer_.record.items_shown = 1;
}

// Exactly lines [first, last], as many as fit the budget from `first` on.
void FetchCall::answer_lines(std::size_t first, std::size_t last,
                             std::optional<std::size_t> resume_at) {
  std::optional<LineIndex> own;
  const LineIndex* lines = line_index(own);
  const std::size_t total = lines->lines();
  const std::string_view text = part_.text;
  last = std::min(last, total);
  std::size_t begin = first <= total ? lines->line_begin(first) : text.size();
  if (resume_at) {
    begin = *resume_at;
    first = lines->line_of(begin);  // total + 1 at the very end
  }
  const std::size_t end = first <= last ? lines->line_end(last) : begin;
  std::size_t shown_last = last;
  fit_text(budget(), trailer_reserve(), [&](const TextReserve& reserve) {
    std::size_t cut = end;
    if (begin < end) cut = cut_text(text.substr(0, end), begin, text_room(budget(), reserve));
    if (cut < end) {
      // Whole lines only, unless a single line is itself over the budget.
      const std::size_t line = lines->line_of(cut - 1);
      if (lines->line_end(line) != cut && line > first) cut = lines->line_begin(line);
    }
    shown_last = begin < cut ? lines->line_of(cut - 1) : first - 1;
    const bool more = cut < end;
    json::object meta{{"offset", begin},     {"startLine", first},   {"endLine", shown_last},
                      {"totalLines", total}, {"bytes", cut - begin}, {"hasMore", more}};
    // Resumes at the byte after the piece: the next line, or inside this one when one line
    // alone is over the budget.
    if (more) meta["nextCursor"] = context_.issuer.line_range(part_index_, cut, last);
    meta["hint"] = first > total ? fmt::format("The text has only {} lines.", total)
                   : more        ? fmt::format(
                                       "Lines {}-{} of the {} asked for (the budget ends here). For "
                                              "the rest call {} with {{\"cursor\": _ctxguard.nextCursor}}.",
                                       first, shown_last, last, context_.tool_name)
                          : fmt::format("Lines {}-{} of {}.", first, shown_last, total);
    return set_text_answer(text.substr(begin, cut - begin), std::move(meta));
  });
  answer_.record.items_total = total;
  answer_.record.items_shown = shown_last >= first ? shown_last - first + 1 : 0;
}

Refusable<> FetchCall::answer_line_query(std::size_t from) {
  auto parsed = Query::parse(request_.query);
  if (!parsed) {
    return FetchRefusal{.error = FetchError::kQueryInvalid,
                        .detail = std::move(parsed.error().message)};
  }
  std::optional<LineIndex> own;
  const LineIndex* lines = line_index(own);
  const Query& search = *parsed;
  // A search of a log starts with the digest of every entry it matched; its room is taken from
  // the lines shown.
  MatchesDigest digest;
  if (from == 1 && lines->is_log()) {
    digest = MatchesDigest::of(part_.text, *lines, search);
  }
  const std::string& query = request_.query;
  LineMatches matches;
  fit_text(budget(),
           trailer_reserve(kQueryTrailerTokens + digest.tokens, kQueryTrailerChars + digest.chars),
           [&](const TextReserve& reserve) {
             matches = match_lines(part_.text, *lines, search, from, text_room(budget(), reserve));
             if (matches.body.empty()) {
               matches.body =
                   matches.total == 0 ? "(no matching lines)\n" : "(no more matching lines)\n";
             }
             json::object meta =
                 query_meta(query, matches, lines->lines(), digest, context_.tool_name);
             if (matches.resume != 0) {
               meta["nextCursor"] = context_.issuer.line_query(part_index_, matches.resume, query);
             }
             return set_text_answer(matches.body, std::move(meta));
           });
  answer_.record.items_total = matches.total;
  answer_.record.items_shown = matches.shown;
  return {};
}

void FetchCall::answer_text(std::string_view text, std::size_t begin, const std::string& path,
                            const json::object& extra) {
  std::size_t end = begin;
  fit_text(budget(), trailer_reserve(), [&](const TextReserve& reserve) {
    end = begin == text.size() ? begin : cut_text(text, begin, text_room(budget(), reserve));
    json::object meta = extra;
    meta["offset"] = begin;
    meta["returnedBytes"] = end - begin;
    meta["totalBytes"] = text.size();
    meta["hasMore"] = end < text.size();
    if (end < text.size()) meta["nextCursor"] = context_.issuer.text_range(part_index_, path, end);
    std::string hint = text_hint(end, text.size(), end < text.size(), context_.tool_name);
    if (extra.contains("nextItemsCursor")) {
      hint += " This item alone exceeds the budget; for the items after it, call " +
              context_.tool_name + " with {\"cursor\": _ctxguard.nextItemsCursor}.";
    }
    meta["hint"] = hint;
    return set_text_answer(text.substr(begin, end - begin), std::move(meta));
  });
  answer_.record.items_total = text.size();
  answer_.record.items_shown = end - begin;
}

}  // namespace ctxguard::pipeline
