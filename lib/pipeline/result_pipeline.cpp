#include "pipeline/result_pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include <spdlog/spdlog.h>

#include "budget/token_estimator.hpp"
#include "pipeline/json_arena.hpp"
#include "pipeline/json_parts.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/paginate.hpp"
#include "pipeline/text_cut.hpp"
#include "support/json_reader.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

namespace {

// Planning allowances for what `_ctxguard` adds; the written answer is measured afterwards.
constexpr std::size_t kMetadataTokens = 160;
constexpr std::size_t kTokensPerCursor = 70;
// Re-planning rounds when the written answer comes out larger than planned.
constexpr int kPlanningRounds = 6;

enum class Mode { kOriginal, kCompacted, kPaginated, kTextCut };

struct PartOutput {
  Mode mode = Mode::kOriginal;
  std::string body;            // compacted or paginated JSON; the piece of text shown
  std::vector<ArrayCut> cuts;  // paginated: shortened arrays, the largest first
  std::size_t text_total = 0;  // text cut: bytes in the whole text
  std::string text;            // what the model reads for this part
  std::string trailer;         // text cut: the trailing `{"_ctxguard": ...}` item
  json::object meta;           // the part's `_ctxguard`, without the budget fields
};

class Job {
 public:
  Job(const config::BudgetSettings& budget, const cursor::CursorCodec& codec, ResultCache& cache,
      const std::string& fetch_tool, const CallContext& context, json::object& result)
      : budget_(budget),
        codec_(codec),
        cache_(cache),
        fetch_tool_(fetch_tool),
        context_(context),
        result_(result) {}

  std::optional<RewrittenResult> run(const ResultTokens& tokens, bool is_error) {
    record_.tool = std::string(context_.tool);
    record_.original_tokens = tokens.total;
    const bool rewrite = context_.rewrite && !is_error;
    split_ = split_result(result_, tokens, rewrite);
    entry_ = std::make_shared<CachedResult>();
    entry_->tool = record_.tool;
    outputs_.assign(split_.parts.size(), PartOutput{});
    weights_.assign(split_.parts.size(), 1.0);

    compact_tokens_.resize(split_.parts.size());
    for (std::size_t k = 0; k < split_.parts.size(); ++k) {
      compact_tokens_[k] = split_.parts[k].original_tokens;
    }
    if (!rewrite) compute_weights();
    if (rewrite) {
      const bool changed = compact_and_paginate();
      if (total_tokens() <= budget_.hard_cap) {
        return changed ? finish() : std::nullopt;
      }
    }
    cut_as_text();
    return finish();
  }

 private:
  // structuredContent repeating a part makes every token of that part count twice (or more).
  void compute_weights() {
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

  // Stages 1 and 2, aiming at the budget. Returns whether the answer changed; it may still be
  // over the budget (the caller applies the hard cap).
  bool compact_and_paginate() {
    std::vector<std::size_t> json_parts;
    for (std::size_t k = 0; k < split_.parts.size(); ++k) {
      if (split_.parts[k].is_json) json_parts.push_back(k);
    }
    if (json_parts.empty()) {
      compute_weights();
      return false;
    }

    // The parsed values move into the cache entry now: cut arrays are recognised by address,
    // and the entry's values do not move again (whether the entry gets cached is decided later).
    for (ResultPart& part : split_.parts) {
      // Move-constructed (not assigned) so the value stays in its arena, uncopied.
      entry_->parts.push_back(CachedPart{.is_json = part.is_json,
                                         .arena = std::move(part.arena),
                                         .json = std::move(part.json),
                                         .text = {}});
    }
    // One walk prices every part and every array in it (the estimate of the minified form).
    auto planner =
        std::make_unique<CutPlanner>(budget_.page_size, budget_.min_cut_items, kTokensPerCursor);
    for (const std::size_t k : json_parts) {
      compact_tokens_[k] =
          static_cast<std::size_t>(std::ceil(planner->add_tree(entry_->parts[k].json, k, "")));
    }
    compute_weights();

    // Stage 1: lossless compaction. Rendering a large value costs as much as parsing it, so it
    // is rendered here only when compaction alone may be enough; otherwise the paginated
    // rendering below is minified anyway.
    bool changed = false;
    for (const std::size_t k : json_parts) {
      // structuredContent goes out as JSON whatever its form: only text can be compacted.
      if (split_.parts[k].content_index == kNotContent) continue;
      if (compact_tokens_[k] < split_.parts[k].original_tokens) changed = true;
    }
    if (changed) record_.stages.push_back("compact");
    if (changed && compacted_total() <= budget_.token_budget) {
      for (const std::size_t k : json_parts) {
        if (split_.parts[k].content_index == kNotContent) continue;
        PartOutput& output = outputs_[k];
        output.body = to_json(entry_->parts[k].json);
        if (output.body != split_.parts[k].text) output.mode = Mode::kCompacted;
      }
      if (total_tokens() <= budget_.token_budget) return true;
    }

    // Stage 2: pagination.
    double overshoot = 0;
    for (int round = 0; round < kPlanningRounds; ++round) {
      if (!planner) {  // a later round: the first one's cuts were not enough
        planner = std::make_unique<CutPlanner>(budget_.page_size, budget_.min_cut_items,
                                               kTokensPerCursor);
        for (const std::size_t k : json_parts) planner->add_tree(entry_->parts[k].json, k, "");
      }
      for (const std::size_t k : json_parts) planner->set_weight(k, weights_[k]);
      const double excess = static_cast<double>(compacted_total() + kMetadataTokens) -
                            static_cast<double>(budget_.token_budget) + overshoot;
      planner->cut(excess);
      std::vector<ArrayCut> cuts = planner->visible_cuts();
      if (cuts.empty()) return changed;
      if (!cached()) return changed;  // too large for the cache: nothing could be reached
      const CutMap map = planner->cut_map();
      planner.reset();
      for (const std::size_t k : json_parts) {
        PartOutput& output = outputs_[k];
        output.cuts.clear();
        for (const ArrayCut& cut : cuts) {
          if (cut.part == k) output.cuts.push_back(cut);
        }
        output.body.clear();
        write_with_cuts(output.body, entry_->parts[k].json, map);
        output.mode = output.cuts.empty() ? (output.body == split_.parts[k].text ? Mode::kOriginal
                                                                                 : Mode::kCompacted)
                                          : Mode::kPaginated;
        output.meta = output.cuts.empty() ? json::object{} : paginated_meta(k, output.cuts);
      }
      compose();
      const std::size_t total = total_tokens();
      if (total <= budget_.token_budget) break;
      overshoot += static_cast<double>(total - budget_.token_budget) * 1.25 + 32;
    }
    if (std::find(record_.stages.begin(), record_.stages.end(), "paginate") ==
        record_.stages.end()) {
      record_.stages.push_back("paginate");
    }
    for (const PartOutput& output : outputs_) {
      for (const ArrayCut& cut : output.cuts) {
        record_.items_total += cut.total;
        record_.items_shown += cut.shown;
      }
    }
    return true;
  }

  json::object paginated_meta(std::size_t part, const std::vector<ArrayCut>& cuts) const {
    const CursorIssuer issuer(codec_, entry_id_, context_.wall_now);
    json::object extra;
    // The server answered with an array; the answer shows it as {"items": [...]}.
    if (entry_->parts[part].json.is_array()) extra["wrapped"] = true;
    return array_metadata(
        cuts,
        [&](const ArrayCut& cut) {
          return cut.begin + cut.shown < cut.total
                     ? issuer.array_page(part, cut.path, cut.begin + cut.shown, 0, {})
                     : std::string();
        },
        extra, fetch_tool_, budget_.max_page_size);
  }

  // Last resort: the parts as text, the largest cut first, until the answer is under the cap.
  void cut_as_text() {
    // A fresh entry: the paginated one (if any) stays cached for cursors already composed, but
    // none of them goes out.
    // (JSON parts exist only once compact_and_paginate moved their values into that entry.)
    const std::shared_ptr<CachedResult> paginated = entry_;
    entry_ = std::make_shared<CachedResult>();
    entry_->tool = record_.tool;
    entry_id_ = 0;
    std::vector<std::size_t> tokens(split_.parts.size());
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
      tokens[k] = budget::estimate_tokens(cached.text);
      outputs_[k] = PartOutput{};
    }
    record_.stages.push_back("hard-cap");
    cached();  // when it cannot be, the cut stands and the hint says the rest is gone
    double overshoot = 0;
    for (int round = 0; round < kPlanningRounds; ++round) {
      std::vector<std::size_t> allowance = tokens;
      double total = 0;
      for (std::size_t k = 0; k < tokens.size(); ++k)
        total += static_cast<double>(tokens[k]) * weights_[k];
      const double target = static_cast<double>(budget_.hard_cap) -
                            static_cast<double>(kMetadataTokens + kTokensPerCursor) *
                                static_cast<double>(tokens.size()) -
                            overshoot;
      while (total > target) {
        std::size_t largest = 0;
        for (std::size_t k = 1; k < allowance.size(); ++k) {
          if (static_cast<double>(allowance[k]) * weights_[k] >
              static_cast<double>(allowance[largest]) * weights_[largest]) {
            largest = k;
          }
        }
        const double over = (total - target) / weights_[largest];
        const std::size_t keep = static_cast<double>(allowance[largest]) > over
                                     ? allowance[largest] - static_cast<std::size_t>(over) - 1
                                     : 1;
        total -= static_cast<double>(allowance[largest] - std::min(keep, allowance[largest])) *
                 weights_[largest];
        if (keep >= allowance[largest]) break;
        allowance[largest] = keep;
      }
      for (std::size_t k = 0; k < tokens.size(); ++k) {
        PartOutput& output = outputs_[k];
        const std::string& text = entry_->parts[k].text;
        output.text_total = text.size();
        const std::size_t end =
            allowance[k] >= tokens[k] ? text.size() : cut_text(text, 0, allowance[k]);
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
      compose();
      const std::size_t total_now = total_tokens();
      if (total_now <= budget_.hard_cap) break;
      overshoot += static_cast<double>(total_now - budget_.hard_cap) * 1.25 + 32;
    }
  }

  json::object text_meta(std::size_t part, std::size_t end, std::size_t total) const {
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
    return meta;
  }

  bool cached() {
    if (entry_id_ != 0) return true;
    std::size_t bytes = sizeof(CachedResult);
    for (const CachedPart& part : entry_->parts) {
      bytes += part.text.size();
      if (part.arena) bytes += part.arena->bytes();
    }
    entry_id_ = cache_.insert(entry_, bytes, context_.now);
    record_.cache_entry = entry_id_;
    return entry_id_ != 0;
  }

  std::size_t compacted_total() const {
    double total = 0;
    for (std::size_t k = 0; k < compact_tokens_.size(); ++k) {
      total += static_cast<double>(compact_tokens_[k]) * weights_[k];
    }
    return static_cast<std::size_t>(total);
  }

  // Builds every part's text with the budget fields filled in: once with a guess to measure the
  // answer, then with the measured figure (the figure itself costs a token or two more).
  void compose() {
    compose_with(0);
    std::size_t reported = measure() + 4;
    for (int round = 0; round < 3; ++round) {
      compose_with(reported);
      const std::size_t measured = measure();
      if (measured <= reported) break;
      reported = measured + 2;
    }
  }

  void compose_with(std::size_t estimated) {
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
          output.trailer = to_json(json::object{{"_ctxguard", std::move(meta)}});
          break;
        }
      }
    }
    structured_ = build_structured();
  }

  // The structuredContent to send, or nullopt to keep the server's.
  std::optional<json::value> build_structured() const {
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
        return rewrite_structured(
            *original, split_, TextChange::kCut, output.text,
            trailer ? trailer->as_object().if_contains("_ctxguard") : nullptr);
      }
    }
    return std::nullopt;
  }

  // Tokens of the answer as composed.
  std::size_t measure() const {
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

  std::size_t total_tokens() {
    compose();
    return measure();
  }

  // Called right after the last compose (total_tokens or cut_as_text).
  std::optional<RewrittenResult> finish() {
    bool changed = structured_.has_value();
    for (const PartOutput& output : outputs_) changed = changed || output.mode != Mode::kOriginal;
    if (!changed) return std::nullopt;

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

  json::array rewrite_content(json::array& content) {
    std::vector<const PartOutput*> by_item(content.size(), nullptr);
    for (std::size_t k = 0; k < split_.parts.size(); ++k) {
      const std::size_t index = split_.parts[k].content_index;
      if (index != kNotContent && outputs_[k].mode != Mode::kOriginal)
        by_item[index] = &outputs_[k];
    }
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

  const config::BudgetSettings& budget_;
  const cursor::CursorCodec& codec_;
  ResultCache& cache_;
  const std::string& fetch_tool_;
  const CallContext& context_;
  json::object& result_;

  ResultParts split_;
  std::shared_ptr<CachedResult> entry_;
  std::uint64_t entry_id_ = 0;
  std::vector<PartOutput> outputs_;
  std::vector<double> weights_;
  std::vector<std::size_t> compact_tokens_;
  std::optional<json::value> structured_;
  CallRecord record_;
};

}  // namespace

std::optional<RewrittenResult> ResultPipeline::process(json::object& result,
                                                       const CallContext& context) {
  const auto tokens = result_tokens(result);
  if (!tokens) return std::nullopt;  // not a CallToolResult: not ours to judge
  const json::value* error = result.if_contains("isError");
  const bool is_error = error != nullptr && error->is_bool() && error->get_bool();
  const std::size_t limit = context.rewrite && !is_error ? budget_.token_budget : budget_.hard_cap;
  if (tokens->total <= limit) return std::nullopt;
  Job job(budget_, codec_, cache_, fetch_tool_, context, result);
  return job.run(*tokens, is_error);
}

}  // namespace ctxguard::pipeline
