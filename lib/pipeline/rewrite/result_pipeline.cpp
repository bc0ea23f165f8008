#include "pipeline/rewrite/result_pipeline.hpp"

#include <algorithm>
#include <memory>

#include "budget/token_estimator.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/rewrite/rewrite_job.hpp"
#include "pipeline/text/text_chunk.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;
using budget::AnswerSize;
using budget::FitBudget;

namespace {

// What cutting one text part costs beyond its text: its `_ctxguard` item and cursor.
constexpr std::size_t kTokensPerCut = kMetadataTokens + kTokensPerCursor;

// Whether the hard cap's cut would give more text items a `_ctxguard` item of their own than
// the cap holds (a hundred search hits, one item each): the answer would grow with every cut.
// With a limit on lines, items are lines a cut cannot take back.
bool too_many_to_cut(const ResultTokens& tokens, const AnswerSize& size, const FitBudget& cap) {
  if (fits(size, cap)) return false;
  const auto texts = static_cast<std::size_t>(
      std::count_if(tokens.items.begin(), tokens.items.end(),
                    [](std::size_t item_tokens) { return item_tokens > 0; }));
  return texts * kTokensPerCut > cap.tokens ||
         (cap.chars != 0 && texts * (kMetadataChars + kCharsPerCursor) > cap.chars) ||
         (cap.bytes != 0 && texts * (kMetadataChars + kCharsPerCursor) > cap.bytes) ||
         (cap.lines != 0 && 2 * texts > cap.lines);
}

// `result` with its text items joined into the first ('\n' between them) and its other items
// in their order: one cut and one cursor then serve all of them.
json::object join_text_items(const json::object& result) {
  json::object joined = result;
  json::array& content = joined.at("content").as_array();
  json::array kept;
  std::optional<std::size_t> first;  // in `kept` (an index: pushing may move the items)
  for (json::value& item : content) {
    if (text_of(item) == nullptr) {
      kept.push_back(std::move(item));
    } else if (!first) {
      first = kept.size();
      kept.push_back(std::move(item));
    } else {
      json::string& text = kept[*first].as_object().at("text").as_string();
      text.append("\n");
      text.append(item.as_object().at("text").as_string());
    }
  }
  content = std::move(kept);
  return joined;
}

}  // namespace

ProcessedResult ResultPipeline::process(json::object& result, const config::BudgetSettings& budget,
                                        const CallContext& context) {
  const auto tokens = result_tokens(result);
  if (!tokens) return {};  // not a CallToolResult: not ours to judge
  return {.rewritten = rewrite_call(result, *tokens, budget, context),
          .original_tokens = tokens->total};
}

std::optional<RewrittenResult> ResultPipeline::rewrite_call(json::object& result,
                                                            const ResultTokens& tokens,
                                                            const config::BudgetSettings& budget,
                                                            const CallContext& context) {
  const json::value* error = result.if_contains("isError");
  const bool is_error = error != nullptr && error->is_bool() && error->get_bool();
  const bool rewrite = context.rewrite && !is_error;
  const FitBudget cap = FitBudget::cap_of(budget);
  // Characters, bytes and lines are counted only when a limit asks for them.
  const auto size_of = [&cap](const json::object& subject, std::size_t estimate) {
    return cap.limits_text() ? result_size(subject, estimate) : AnswerSize{.tokens = estimate};
  };
  const AnswerSize size = size_of(result, tokens.total);
  if (fits(size, rewrite ? FitBudget::of(budget) : cap) &&
      !(rewrite && has_text_to_chunk(result, tokens, budget))) {
    return std::nullopt;
  }
  // Rewritten from a copy with the text items joined (rare), so that `result` is still the
  // server's should the job decide to leave it.
  std::optional<json::object> joined;
  std::optional<ResultTokens> joined_tokens;
  if (too_many_to_cut(tokens, size, cap)) {
    joined = join_text_items(result);
    joined_tokens = result_tokens(*joined);
  }
  json::object& subject = joined ? *joined : result;
  const ResultTokens& subject_tokens = joined ? *joined_tokens : tokens;
  // Observe mode (dry_run) reserves cache entries but never commits them, so a shadowed answer
  // never evicts a result whose cursors are out there.
  RewriteJob job(budget, codec_, cache_, names_.fetch, spill_, context, subject);
  // Whether the answer may go out as it came is judged on the server's result, not the joined copy.
  auto rewritten = job.run(subject_tokens, size, is_error);
  if (rewritten) {
    CallRecord& record = rewritten->record;
    record.limit = budget::tightest_limit(size, FitBudget::of(budget)).unit;
    record.fill = budget::tightest_limit(size_of(rewritten->result, record.final_tokens),
                                         FitBudget::of(budget))
                      .share;
  }
  return rewritten;
}

std::optional<RewrittenResult> ResultPipeline::process_resource(
    json::object& result, const config::BudgetSettings& budget, const CallContext& context) {
  if (!budget.chunking) return std::nullopt;
  json::value* contents_value = result.if_contains("contents");
  json::array* contents = contents_value != nullptr ? contents_value->if_array() : nullptr;
  if (contents == nullptr) return std::nullopt;
  auto entry = std::make_shared<CachedResult>();
  entry->tool = std::string(context.tool);
  std::vector<std::size_t> chunked;  // contents indices, one cached part each
  std::size_t original_tokens = 0;
  for (std::size_t i = 0; i < contents->size(); ++i) {
    const json::object* item = (*contents)[i].if_object();
    const json::value* text = item != nullptr ? item->if_contains("text") : nullptr;
    if (text == nullptr || !text->is_string()) continue;
    const std::size_t tokens = budget::estimate_tokens(text->get_string());
    original_tokens += tokens;
    if (!over_chunk_size(budget, text->get_string(), tokens)) continue;
    set_chunked_text(entry->parts.emplace_back(), std::string(text->get_string()),
                     std::make_shared<const LineIndex>(text->get_string()), chunk_limits(budget));
    chunked.push_back(i);
  }
  if (chunked.empty()) return std::nullopt;
  if (spill_ && !context.dry_run) {
    for (CachedPart& part : entry->parts) {
      if (auto spilled = spill_(context.tool, "txt", part.text)) {
        part.spill = std::move(*spilled);
      }
    }
  }
  const std::uint64_t id = cache_.insert(entry, memory_bytes(*entry), context.now);
  if (id == 0) return std::nullopt;  // too large to keep: the text passes as the server sent it
  const CursorIssuer issuer(codec_, id, context.wall_now);

  RewrittenResult rewritten;
  rewritten.record.tool = std::string(context.tool);
  rewritten.record.original_tokens = original_tokens;
  rewritten.record.stages = {"chunk"};
  rewritten.record.cache_entry = id;
  json::array out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < contents->size(); ++i) {
    if (next < chunked.size() && chunked[next] == i) {
      const CachedPart& part = entry->parts[next];
      json::object item = std::move((*contents)[i].as_object());
      const TextChunk& first = part.chunks.front();
      item["text"] = std::string_view(part.text).substr(first.begin, first.end - first.begin);
      json::object meta = chunk_metadata(part, next, 0, issuer, names_.fetch);
      if (part.spill) meta["file"] = part.spill->path;
      const std::size_t piece = budget::estimate_tokens(item["text"].as_string());
      std::size_t tokens = 0;
      std::string trailer =
          settle_budget_fields(meta, budget.token_budget, piece, trailer_text, tokens);
      rewritten.record.final_tokens += tokens;
      json::object note{
          {"uri", item["uri"]}, {"mimeType", "application/json"}, {"text", std::move(trailer)}};
      out.push_back(std::move(item));
      out.push_back(std::move(note));
      ++next;
      continue;
    }
    out.push_back(std::move((*contents)[i]));
  }
  // The result's members in their order; `contents` (an object holds a key once) takes its place
  // first and the new items after.
  for (json::key_value_pair& member : result) {
    json::value& slot = rewritten.result[member.key()];
    if (member.key() != "contents") slot = std::move(member.value());
  }
  rewritten.result["contents"] = std::move(out);
  return rewritten;
}

bool ResultPipeline::has_text_to_chunk(const json::object& result, const ResultTokens& tokens,
                                       const config::BudgetSettings& budget) const {
  if (!budget.chunking) return false;
  const json::array& content = result.at("content").as_array();
  for (std::size_t i = 0; i < content.size() && i < tokens.items.size(); ++i) {
    const json::object* item = content[i].if_object();
    const json::value* text = item != nullptr ? item->if_contains("text") : nullptr;
    if (text == nullptr || !text->is_string()) continue;
    if (!over_chunk_size(budget, text->get_string(), tokens.items[i])) continue;
    // JSON text is the JSON stages' business; everything else over the chunk size is chunked,
    // JSON too large to parse within the cache size included (json_parts: parse_text_json).
    if (!parse_text_json(text->get_string(), cache_.max_bytes())) return true;
  }
  return false;
}

}  // namespace ctxguard::pipeline
