#include "pipeline/rewrite_job.hpp"

#include <algorithm>
#include <memory>

#include "budget/token_estimator.hpp"
#include "pipeline/text/text_chunk.hpp"
#include "pipeline/text/text_cut.hpp"
#include "pipeline/text/text_digest.hpp"
#include "support/json_reader.hpp"
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

// The characters and bytes `text` adds to the text a client reads.
Cost text_cost(std::string_view text) {
  return Cost{.tokens = 0,
              .chars = static_cast<double>(budget::utf16_length(text)),
              .bytes = static_cast<double>(text.size())};
}

}  // namespace

std::optional<RewrittenResult> RewriteJob::run(const ResultTokens& tokens,
                                               const AnswerSize& original, bool is_error) {
  record_.tool = std::string(context_.tool);
  record_.original_tokens = tokens.total;
  const bool rewrite = context_.rewrite && !is_error;
  const FitBudget cap = FitBudget::cap_of(budget_);
  split_ = split_result(result_, tokens, rewrite, budget_.cache_bytes);
  entry_ = std::make_shared<CachedResult>();
  entry_->tool = record_.tool;
  outputs_.assign(split_.parts.size(), PartOutput{});
  weights_.assign(split_.parts.size(), 1.0);

  compact_tokens_.resize(split_.parts.size());
  compact_text_.resize(split_.parts.size());
  text_digests_.resize(split_.parts.size());
  for (std::size_t k = 0; k < split_.parts.size(); ++k) {
    compact_tokens_[k] = split_.parts[k].original_tokens;
    if (measures_text_) compact_text_[k] = text_cost(split_.parts[k].text);
  }
  compute_weights();  // chunks of text that structuredContent repeats are smaller
  if (rewrite) {
    build_entry();
    const bool chunked = budget_.chunking && chunk_texts();
    const bool changed = fit_json() || chunked;
    // A first answer may exceed the budget up to the hard cap when its shape leaves no finer
    // cut (a deep tree); ctxguard_fetch pages always fit the budget.
    if (fits(answer_size(), cap)) return changed ? finish() : std::nullopt;
    // Past the cap only through what the stages added (a `_ctxguard` item per chunk and page):
    // the server's answer, within the cap, goes out as it came rather than cut as text.
    if (fits(original, cap)) return std::nullopt;
  }
  cut_as_text(cap);
  return finish();
}

void RewriteJob::compute_weights() {
  weights_.assign(split_.parts.size(), 1.0);
  if (split_.relation == StructuredRelation::kMirror ||
      split_.relation == StructuredRelation::kWrapper) {
    const std::size_t k = split_.related_part;
    const std::size_t base = split_.relation == StructuredRelation::kMirror
                                 ? compact_tokens_[k]
                                 : split_.parts[k].original_tokens;
    weights_[k] += static_cast<double>(split_.structured_tokens) /
                   static_cast<double>(std::max<std::size_t>(base, 1));
  }
}

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
      digest.value = digest_text(part.text);
      const std::string written = to_json(digest.value);
      digest.chars = written.size() + kTextDigestHint.size();
      digest.tokens = budget::estimate_tokens(written) + kDigestKeyTokens +
                      budget::estimate_tokens(kTextDigestHint);
      // A chunk that goes out twice (structuredContent repeating the text) costs twice.
      budget::FitBudget limits = chunk_limits(budget_);
      const double weight = std::max(weights_[k], 1.0);
      const double with_digest = static_cast<double>(budget_.token_budget) / weight -
                                 static_cast<double>(kChunkMetadataTokens + digest.tokens);
      const double size =
          std::min(static_cast<double>(limits.tokens) / weight, std::max(with_digest, 0.0));
      limits.tokens = std::max<std::size_t>(static_cast<std::size_t>(size), 16);
      for (std::size_t* unit : {&limits.chars, &limits.bytes}) {
        if (*unit != 0) *unit = *unit > 2 * digest.chars ? *unit - digest.chars : *unit / 2;
      }
      set_chunked_text(cached, std::string(part.text), limits);
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
  const auto parts = static_cast<double>(sizes.size());
  const Cost per_cut{.tokens = kMetadataTokens + kTokensPerCursor,
                     .chars = kMetadataChars + kCharsPerCursor + 1,
                     .bytes = kMetadataChars + kCharsPerCursor + 1};
  Cost overshoot;
  for (int round = 0; round < kPlanningRounds; ++round) {
    const Cost reserve{.tokens = per_cut.tokens * parts + overshoot.tokens,
                       .chars = per_cut.chars * parts + overshoot.chars,
                       .bytes = per_cut.bytes * parts + overshoot.bytes};
    write_text_cuts(text_allowances(sizes, cap, reserve), sizes);
    const AnswerSize size = answer_size();
    if (fits(size, cap)) break;
    overshoot = overshoot_after(overshoot, size, cap);
  }
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
                                                   const Cost& reserve) const {
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
  unit(&AnswerSize::tokens, &FitBudget::tokens, cap.tokens, reserve.tokens, weights_);
  if (cap.chars != 0)
    unit(&AnswerSize::chars, &FitBudget::chars, cap.chars, reserve.chars, text_weights);
  if (cap.bytes != 0)
    unit(&AnswerSize::bytes, &FitBudget::bytes, cap.bytes, reserve.bytes, text_weights);
  if (cap.lines != 0) {
    unit(&AnswerSize::lines, &FitBudget::lines, cap.lines, static_cast<double>(sizes.size()),
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

bool RewriteJob::cached() {
  if (entry_id_ != 0) return true;
  // Observe mode writes no files: nothing it computes is ever sent.
  if (!context_.dry_run) spill_parts();
  entry_bytes_ = memory_bytes(*entry_);
  entry_id_ = cache_.reserve(entry_bytes_);
  record_.cache_entry = entry_id_;
  return entry_id_ != 0;
}

void RewriteJob::spill_parts() {
  if (!spill_) return;
  for (std::size_t k = 0; k < entry_->parts.size() && k < split_.parts.size(); ++k) {
    CachedPart& part = entry_->parts[k];
    if (part.spill) continue;  // written already (a hard-cap cut after pagination)
    const ResultPart& original = split_.parts[k];
    std::string structured;
    std::string_view content = original.text;
    if (original.content_index == kNotContent) {
      const json::value* value = result_.if_contains("structuredContent");
      if (value == nullptr) continue;
      structured = to_json(*value);
      content = structured;
    }
    if (auto spilled = spill_(context_.tool, original.is_json ? "json" : "txt", content)) {
      part.spill = std::move(*spilled);
    }
  }
}

std::size_t RewriteJob::compacted_total() const {
  double total = 0;
  for (std::size_t k = 0; k < compact_tokens_.size(); ++k) {
    total += static_cast<double>(compact_tokens_[k]) * weights_[k];
  }
  return static_cast<std::size_t>(total);
}

std::size_t RewriteJob::compose() {
  compose_with(0);
  std::size_t reported = measure() + 4;
  for (int round = 0; round < 3; ++round) {
    compose_with(reported);
    const std::size_t measured = measure();
    if (measured <= reported) break;
    reported = measured + 2;
  }
  return reported;
}

void RewriteJob::compose_with(std::size_t estimated) {
  for (PartOutput& output : outputs_) {
    switch (output.mode) {
      case Mode::kOriginal:
        output.text.clear();
        break;
      case Mode::kCompacted:
        output.text = output.body;
        break;
      case Mode::kPaginated: {
        json::object meta = output.meta;
        set_budget_fields(meta, estimated, budget_.token_budget);
        output.text = attach_metadata(output.body, meta);
        break;
      }
      case Mode::kTextCut: {
        json::object meta = output.meta;
        set_budget_fields(meta, estimated, budget_.token_budget);
        output.text = output.body;
        output.trailer = trailer_text(meta);
        break;
      }
    }
  }
  structured_ = build_structured();
}

std::optional<json::value> RewriteJob::build_structured() const {
  const json::value* original = result_.if_contains("structuredContent");
  if (original == nullptr || split_.relation == StructuredRelation::kAbsent) return std::nullopt;
  const PartOutput& output = outputs_[split_.related_part];
  switch (output.mode) {
    case Mode::kOriginal:
      return std::nullopt;
    case Mode::kCompacted:
      return rewrite_structured(*original, split_, TextChange::kCompacted, output.text, nullptr);
    case Mode::kPaginated:
      return rewrite_structured(*original, split_, TextChange::kPaginated, output.text, nullptr);
    case Mode::kTextCut: {
      const auto trailer = parse_json(output.trailer);
      return rewrite_structured(*original, split_, TextChange::kCut, output.text,
                                trailer ? trailer->as_object().if_contains("_ctxguard") : nullptr);
    }
  }
  return std::nullopt;
}

std::size_t RewriteJob::measure() const {
  std::size_t tokens = 0;
  for (std::size_t k = 0; k < split_.parts.size(); ++k) {
    if (split_.parts[k].content_index == kNotContent) continue;  // structuredContent, below
    const PartOutput& output = outputs_[k];
    tokens += output.mode == Mode::kOriginal ? split_.parts[k].original_tokens
                                             : budget::estimate_tokens(output.text);
    if (output.mode == Mode::kTextCut) tokens += budget::estimate_tokens(output.trailer);
  }
  if (structured_) {
    tokens += budget::estimate_json_tokens(*structured_);
  } else if (split_.relation != StructuredRelation::kAbsent) {
    tokens += split_.structured_tokens;
  }
  return tokens;
}

AnswerSize RewriteJob::answer_size() {
  // Held to the budget as the answer states it: estimatedTokens never says it is over.
  const std::size_t reported = compose();
  if (!measures_text_) return AnswerSize{.tokens = reported};
  budget::TextMeasure text;
  const json::array& content = result_.at("content").as_array();
  const std::vector<const PartOutput*> by_item = outputs_by_item(content.size());
  for (std::size_t i = 0; i < content.size(); ++i) {
    if (const PartOutput* output = by_item[i]) {
      text.add_item(output->text);
      if (output->mode == Mode::kTextCut) text.add_item(output->trailer);
    } else if (const json::string* original = text_of(content[i])) {
      text.add_item(*original);
    }
  }
  AnswerSize size = text.size();
  size.tokens = reported;
  return size;
}

std::vector<const RewriteJob::PartOutput*> RewriteJob::outputs_by_item(std::size_t items) const {
  std::vector<const PartOutput*> by_item(items, nullptr);
  for (std::size_t k = 0; k < split_.parts.size(); ++k) {
    const std::size_t index = split_.parts[k].content_index;
    if (index != kNotContent && index < items && outputs_[k].mode != Mode::kOriginal) {
      by_item[index] = &outputs_[k];
    }
  }
  return by_item;
}

std::optional<RewrittenResult> RewriteJob::finish() {
  bool changed = structured_.has_value();
  for (const PartOutput& output : outputs_) changed = changed || output.mode != Mode::kOriginal;
  if (!changed) return std::nullopt;
  // The answer goes out with cursors into the entry: it is stored now, and only now.
  if (entry_id_ != 0 && !context_.dry_run) {
    cache_.commit(entry_id_, entry_, entry_bytes_, context_.now);
  }

  RewrittenResult rewritten;
  rewritten.record = std::move(record_);
  rewritten.record.final_tokens = measure();
  json::object& out = rewritten.result;
  for (json::key_value_pair& member : result_) {
    if (member.key() == "content") {
      out["content"] = rewrite_content(member.value().as_array());
    } else if (member.key() == "structuredContent" && structured_) {
      out["structuredContent"] = std::move(*structured_);
    } else {
      out[member.key()] = std::move(member.value());
    }
  }
  return rewritten;
}

json::array RewriteJob::rewrite_content(json::array& content) {
  const std::vector<const PartOutput*> by_item = outputs_by_item(content.size());
  json::array out;
  out.reserve(content.size() + 1);
  for (std::size_t i = 0; i < content.size(); ++i) {
    const PartOutput* output = by_item[i];
    if (output == nullptr) {
      out.push_back(std::move(content[i]));
      continue;
    }
    json::object item = std::move(content[i].as_object());
    item["text"] = output->text;
    out.push_back(std::move(item));
    if (output->mode == Mode::kTextCut) {
      out.push_back(json::object{{"type", "text"}, {"text", output->trailer}});
    }
  }
  return out;
}

}  // namespace ctxguard::pipeline
