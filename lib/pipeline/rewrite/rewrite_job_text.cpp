#include "pipeline/rewrite/rewrite_job.hpp"

// The text side of a first answer: chunking text parts (with their digest), and cutting an
// answer as text when no level of fit brings it under the hard cap. The JSON side is in
// rewrite_job_json.cpp.

#include <algorithm>

#include "budget/token_estimator.hpp"
#include "pipeline/text/text_chunk.hpp"
#include "pipeline/text/text_cut.hpp"
#include "pipeline/text/text_digest.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

// What each of `amounts` may keep so that their sum, each weighted, is at most `target`: the
// largest (by what it costs, weighted) gives up the excess, then the next largest.
std::vector<std::size_t> largest_first_shares(const std::vector<double>& amounts,
                                              const std::vector<double>& weights, double target) {
  std::vector<std::size_t> share(amounts.size());
  double total = 0;
  for (std::size_t k = 0; k < amounts.size(); ++k) {
    share[k] = static_cast<std::size_t>(amounts[k]);
    total += amounts[k] * weights[k];
  }
  while (total > target) {
    std::size_t largest = 0;
    for (std::size_t k = 1; k < share.size(); ++k) {
      if (static_cast<double>(share[k]) * weights[k] >
          static_cast<double>(share[largest]) * weights[largest]) {
        largest = k;
      }
    }
    if (weights[largest] <= 0) break;  // nothing left that counts
    const double over = (total - target) / weights[largest];
    const std::size_t keep = static_cast<double>(share[largest]) > over
                                 ? share[largest] - static_cast<std::size_t>(over) - 1
                                 : 1;
    total -=
        static_cast<double>(share[largest] - std::min(keep, share[largest])) * weights[largest];
    if (keep >= share[largest]) break;
    share[largest] = keep;
  }
  return share;
}

}  // namespace

void RewriteJob::build_entry() {
  for (std::size_t k = 0; k < split_.parts.size(); ++k) {
    ResultPart& part = split_.parts[k];
    // Move-constructed (not assigned) so the value stays in its arena, uncopied.
    CachedPart& cached = entry_->parts.emplace_back(CachedPart{.is_json = part.is_json,
                                                               .arena = std::move(part.arena),
                                                               .json = std::move(part.json),
                                                               .text = {},
                                                               .lines = {},
                                                               .chunks = {},
                                                               .spill = {}});
    if (budget_.chunking && !part.is_json && part.content_index != kNotContent &&
        over_chunk_size(budget_, part.text, part.original_tokens)) {
      // The first answer's `_ctxguard` carries the text's digest (docs/protocol.md 2.5): the
      // chunks are made smaller only as far as the answer's room does not hold it already.
      TextDigest& digest = text_digests_[k];
      auto lines = std::make_shared<const LineIndex>(part.text);
      digest.value = digest_text(part.text, *lines);
      const DigestRoom room = digest_room(digest.value, kTextDigestHint);
      digest.chars = room.chars;
      digest.tokens = room.tokens;
      // A chunk that goes out twice (structuredContent repeating the text) costs twice.
      budget::FitBudget limits = chunk_limits(budget_);
      const double weight = std::max(weights_[k], 1.0);
      const double with_digest = static_cast<double>(budget_.token_budget) / weight -
                                 static_cast<double>(kChunkMetadataTokens + digest.tokens);
      const double size =
          std::min(static_cast<double>(limits.tokens) / weight, std::max(with_digest, 0.0));
      limits.tokens = std::max<std::size_t>(static_cast<std::size_t>(size), 16);
      // As JSON the digest's quotes are escaped: about a quarter more.
      const auto less = [](std::size_t& unit, std::size_t by) {
        if (unit != 0) unit = unit > 2 * by ? unit - by : unit / 2;
      };
      less(limits.chars, digest.chars);
      less(limits.bytes, digest.chars);
      less(limits.json_bytes, digest.chars + digest.chars / 4);
      set_chunked_text(cached, std::string(part.text), std::move(lines), limits);
    }
  }
}

bool RewriteJob::chunk_texts() {
  bool any = false;
  for (std::size_t k = 0; k < entry_->parts.size(); ++k) {
    const CachedPart& part = entry_->parts[k];
    if (part.chunks.size() < 2) continue;
    if (!cached()) return any;  // nothing could be reached: the hard-cap cut says so
    any = true;
    PartOutput& output = outputs_[k];
    const TextChunk& first = part.chunks.front();
    output.mode = Mode::kTextCut;
    output.body = part.text.substr(first.begin, first.end - first.begin);
    output.text_total = part.text.size();
    output.meta = chunk_metadata(part, k, 0, issuer(), fetch_tool_);
    if (part.spill) output.meta["file"] = part.spill->path;
    // Measured when the chunks were sized (build_entry).
    const TextDigest& digest = text_digests_[k];
    if (!digest.value.empty()) {
      output.meta["digest"] = digest.value;
      json::string& hint = output.meta["hint"].as_string();
      hint.append(kTextDigestHint);
    }
    compact_tokens_[k] = budget::estimate_tokens(output.body) + kMetadataTokens + digest.tokens;
    if (measures_text_) {
      const auto reserve = static_cast<double>(kChunkMetadataChars + 1 + digest.chars);
      compact_text_[k] =
          text_cost(output.body) + Cost{.tokens = 0, .chars = reserve, .bytes = reserve};
    }
  }
  if (any) {
    record_.stages.emplace_back("chunk");
    compute_weights();
  }
  return any;
}

void RewriteJob::cut_as_text(const FitBudget& cap) {
  const std::vector<AnswerSize> sizes = start_text_entry();
  // What the abandoned levels did is not what goes out: the record says what does.
  const bool compacted =
      std::find(record_.stages.begin(), record_.stages.end(), "compact") != record_.stages.end();
  record_.stages = compacted ? std::vector<std::string_view>{"compact", "hard-cap"}
                             : std::vector<std::string_view>{"hard-cap"};
  record_.items_total = 0;
  record_.items_shown = 0;
  cached();  // when it cannot be, the cut stands and the hint says the rest is gone
  // Each part may be cut, and then has a `_ctxguard` item of its own (a cursor, a line).
  fit_text(cap,
           TextReserve::for_trailers(cap, kMetadataTokens + kTokensPerCursor,
                                     kMetadataChars + kCharsPerCursor, sizes.size()),
           [&](const TextReserve& reserve) {
             write_text_cuts(text_allowances(sizes, cap, reserve), sizes);
             return answer_size();
           });
}

std::vector<AnswerSize> RewriteJob::start_text_entry() {
  // A fresh entry: the paginated one (if any) is dropped with its reservation, since none of its
  // cursors goes out. (JSON parts exist only once the JSON stages moved their values into it.)
  const std::shared_ptr<CachedResult> paginated = entry_;
  entry_ = std::make_shared<CachedResult>();
  entry_->tool = record_.tool;
  entry_id_ = 0;
  std::vector<AnswerSize> sizes(split_.parts.size());
  for (std::size_t k = 0; k < split_.parts.size(); ++k) {
    CachedPart& cached = entry_->parts.emplace_back();
    const ResultPart& part = split_.parts[k];
    if (part.is_json) {
      cached.text = to_json(paginated->parts[k].json);  // compacted
    } else if (part.content_index != kNotContent) {
      cached.text = std::string(part.text);
    } else {
      const json::value* structured = result_.if_contains("structuredContent");
      cached.text = structured != nullptr ? to_json(*structured) : std::string();
    }
    budget::TextMeasure measure;
    measure.add_item(cached.text);
    sizes[k] = measure.size();
    sizes[k].tokens = budget::estimate_tokens(cached.text);
    outputs_[k] = PartOutput{};
    // The server's text was already written to a file for the paginated entry: one file each.
    if (k < paginated->parts.size()) cached.spill = paginated->parts[k].spill;
  }
  return sizes;
}

std::vector<FitBudget> RewriteJob::text_allowances(const std::vector<AnswerSize>& sizes,
                                                   const FitBudget& cap,
                                                   const TextReserve& reserve) const {
  std::vector<FitBudget> allowances(sizes.size());
  // Tokens count as weighted (structuredContent repeating a part); the other units only in the
  // text items, once each.
  std::vector<double> text_weights(sizes.size());
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    text_weights[k] = split_.parts[k].content_index == kNotContent ? 0 : 1;
  }
  const auto unit = [&](std::size_t AnswerSize::*measured, std::size_t FitBudget::*allowed,
                        std::size_t limit, double reserved, const std::vector<double>& weights) {
    std::vector<double> amounts(sizes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      amounts[k] = static_cast<double>(sizes[k].*measured);
    }
    const std::vector<std::size_t> shares =
        largest_first_shares(amounts, weights, static_cast<double>(limit) - reserved);
    for (std::size_t k = 0; k < sizes.size(); ++k) allowances[k].*allowed = shares[k];
  };
  unit(&AnswerSize::tokens, &FitBudget::tokens, cap.tokens, reserve.cost.tokens, weights_);
  if (cap.chars != 0)
    unit(&AnswerSize::chars, &FitBudget::chars, cap.chars, reserve.cost.chars, text_weights);
  if (cap.bytes != 0)
    unit(&AnswerSize::bytes, &FitBudget::bytes, cap.bytes, reserve.cost.bytes, text_weights);
  if (cap.lines != 0) {
    unit(&AnswerSize::lines, &FitBudget::lines, cap.lines, static_cast<double>(reserve.lines),
         text_weights);
  }
  return allowances;
}

void RewriteJob::write_text_cuts(const std::vector<FitBudget>& allowances,
                                 const std::vector<AnswerSize>& sizes) {
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    PartOutput& output = outputs_[k];
    const std::string& text = entry_->parts[k].text;
    output.text_total = text.size();
    const FitBudget& allowance = allowances[k];
    const bool whole = allowance.tokens >= sizes[k].tokens &&
                       (allowance.chars == 0 || allowance.chars >= sizes[k].chars) &&
                       (allowance.bytes == 0 || allowance.bytes >= sizes[k].bytes) &&
                       (allowance.lines == 0 || allowance.lines >= sizes[k].lines);
    const std::size_t end = whole ? text.size() : cut_text(text, 0, allowance);
    if (end == text.size()) {  // this part fits whole
      const bool same = split_.parts[k].content_index == kNotContent ||
                        std::string_view(text) == split_.parts[k].text;
      output.mode = same ? Mode::kOriginal : Mode::kCompacted;
      output.body = same ? std::string() : text;
      continue;
    }
    output.mode = Mode::kTextCut;
    output.body = text.substr(0, end);
    output.meta = text_meta(k, end, text.size());
  }
}

json::object RewriteJob::text_meta(std::size_t part, std::size_t end, std::size_t total) const {
  const CursorIssuer issuer(codec_, entry_id_, context_.wall_now);
  json::object meta;
  meta["offset"] = 0;
  meta["returnedBytes"] = end;
  meta["totalBytes"] = total;
  const bool has_more = end < total;
  meta["hasMore"] = has_more;
  if (has_more && entry_id_ != 0) meta["nextCursor"] = issuer.text_range(part, "", end);
  meta["hint"] = entry_id_ != 0 ? text_hint(end, total, has_more, fetch_tool_)
                                : "The result was too large to keep; the rest is not available.";
  // The spill file lives as long as the cache entry holding it.
  if (entry_id_ != 0 && entry_->parts[part].spill) {
    meta["file"] = entry_->parts[part].spill->path;
  }
  return meta;
}

}  // namespace ctxguard::pipeline
