#include "pipeline/rewrite/rewrite_job.hpp"

#include <algorithm>

#include "budget/token_estimator.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

// The characters and bytes `text` adds to the text a client reads.
Cost text_cost(std::string_view text) {
  return Cost{.tokens = 0,
              .chars = static_cast<double>(budget::utf16_length(text)),
              .bytes = static_cast<double>(text.size())};
}

std::optional<RewrittenResult> RewriteJob::run(const ResultTokens& tokens,
                                               const AnswerSize& original, bool is_error) {
  record_.tool = std::string(context_.tool);
  record_.original_tokens = tokens.total;
  const bool rewrite = context_.rewrite && !is_error;
  const FitBudget cap = FitBudget::cap_of(budget_);
  // JSON text larger than the cache could hold is not parsed: it could never be kept.
  split_ = split_result(result_, tokens, rewrite, cache_.max_bytes());
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
  return settle_stated_tokens([this](std::size_t stated) { compose_with(stated); },
                              [this] { return measure(); });
}

void RewriteJob::compose_with(std::size_t estimated) {
  way_on_.clear();
  for (const PartOutput& output : outputs_) {
    if (output.mode == Mode::kPaginated || output.mode == Mode::kTextCut) {
      way_on_ = way_on_text(output.meta);
      if (!way_on_.empty()) break;
    }
  }
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
      return rewrite_structured(*original, split_, TextChange::kCompacted, output.text);
    case Mode::kPaginated:
      return rewrite_structured(*original, split_, TextChange::kPaginated, output.text);
    case Mode::kTextCut: {
      const auto trailer = parse_json(output.trailer);
      return rewrite_structured(*original, split_, TextChange::kCut, output.text,
                                trailer ? trailer->as_object().if_contains("_ctxguard") : nullptr);
    }
  }
  return std::nullopt;
}

std::size_t RewriteJob::measure() const {
  std::size_t tokens = way_on_.empty() ? 0 : budget::estimate_tokens(way_on_);
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
  if (!way_on_.empty()) text.add_item(way_on_);
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
  measure_structured_json(size,
                          structured_ ? &*structured_ : result_.if_contains("structuredContent"));
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
  out.reserve(content.size() + 2);
  if (!way_on_.empty()) out.push_back(json::object{{"type", "text"}, {"text", way_on_}});
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
