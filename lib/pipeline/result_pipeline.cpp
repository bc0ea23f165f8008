#include "pipeline/result_pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include <spdlog/spdlog.h>

#include "budget/token_estimator.hpp"
#include "pipeline/digest.hpp"
#include "pipeline/json_arena.hpp"
#include "pipeline/json_parts.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/paginate.hpp"
#include "pipeline/projection.hpp"
#include "pipeline/summarize.hpp"
#include "pipeline/text_chunk.hpp"
#include "pipeline/text_cut.hpp"
#include "support/json_pointer.hpp"
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
  ViewStats stats;             // what summarization left out of `body`
};

class Job {
 public:
  Job(const config::BudgetSettings& budget, const cursor::CursorCodec& codec, ResultCache& cache,
      const std::string& fetch_tool, const ResultPipeline::SpillWriter& spill,
      const CallContext& context, json::object& result)
      : spill_(spill),
        budget_(budget),
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
      build_entry();
      const bool chunked = chunk_texts();
      const bool changed = fit_json() || chunked;
      // A first answer may exceed the budget up to the hard cap when its shape leaves no finer
      // cut (a deep tree); ctxguard_fetch pages always fit the budget.
      if (total_tokens() <= budget_.hard_cap) {
        return changed ? finish() : std::nullopt;
      }
    }
    cut_as_text(budget_.hard_cap);
    return finish();
  }

 private:
  // structuredContent repeating a part makes every token of that part count twice (or more).
  void compute_weights() {
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

  // The cache entry: parsed values move in (cut arrays are recognised by address, and the
  // entry's values do not move again; whether it gets cached is decided later), and texts long
  // enough to be chunked are copied in with their line index.
  void build_entry() {
    for (ResultPart& part : split_.parts) {
      // Move-constructed (not assigned) so the value stays in its arena, uncopied.
      CachedPart& cached = entry_->parts.emplace_back(CachedPart{.is_json = part.is_json,
                                                                 .arena = std::move(part.arena),
                                                                 .json = std::move(part.json),
                                                                 .text = {},
                                                                 .lines = {},
                                                                 .chunks = {},
                                                                 .spill = {},
                                                                 .spill_path = {}});
      if (!part.is_json && part.content_index != kNotContent &&
          part.original_tokens > chunk_tokens(budget_)) {
        cached.text = std::string(part.text);
        auto lines = std::make_shared<LineIndex>(cached.text);
        cached.chunks = chunk_text(cached.text, chunk_tokens(budget_), *lines);
        cached.lines = std::move(lines);
      }
    }
  }

  // Plain text over the chunk size: its first chunk, and a trailing item saying where it stands
  // (FR-020..022). Returns whether any part was chunked.
  bool chunk_texts() {
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
      if (!part.spill_path.empty()) output.meta["file"] = part.spill_path;
      compact_tokens_[k] = budget::estimate_tokens(output.body) + kMetadataTokens;
    }
    if (any) {
      record_.stages.push_back("chunk");
      compute_weights();
    }
    return any;
  }

  CursorIssuer issuer() const { return CursorIssuer(codec_, entry_id_, context_.wall_now); }

  // The JSON stages, aiming at the budget: compaction, then the levels of fit (pages, cut
  // strings and deep values, projection, shorter pages). Returns whether the answer changed; it
  // may still be over the budget (the caller cuts it as text then).
  bool fit_json() {
    std::vector<std::size_t> json_parts;
    for (std::size_t k = 0; k < split_.parts.size(); ++k) {
      if (split_.parts[k].is_json) json_parts.push_back(k);
    }
    if (json_parts.empty()) {
      compute_weights();
      return false;
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

    // Stages 2-4: pagination, summarization, projection, each level only when needed.
    CutMap last_map;
    double last_excess = 0;
    bool fitted = false;
    bool wrote = false;
    for (const FitLevel level : kFitLevels) {
      if (level == FitLevel::kSummarize) {
        view_.max_string_chars = budget_.summary.max_string_chars;
        view_.max_depth = budget_.summary.max_depth;
        if (!view_.summarizes()) continue;
        planner.reset();
      }
      if (level == FitLevel::kProject) {
        if (!budget_.summary.project) continue;
        if (!plan_projection(json_parts, last_map, last_excess)) continue;
        planner.reset();
      }
      double overshoot = 0;
      for (int round = 0; round < kPlanningRounds; ++round) {
        if (!planner) {
          planner = std::make_unique<CutPlanner>(budget_.page_size, budget_.min_cut_items,
                                                 kTokensPerCursor);
          planner->set_view(view_);
          for (const std::size_t k : json_parts) {
            compact_tokens_[k] = static_cast<std::size_t>(
                std::ceil(planner->add_tree(entry_->parts[k].json, k, "")));
          }
        }
        for (const std::size_t k : json_parts) planner->set_weight(k, weights_[k]);
        const double excess = static_cast<double>(compacted_total() + kMetadataTokens) -
                              static_cast<double>(budget_.token_budget) + overshoot;
        const bool reached = plan_level(*planner, level, excess);
        last_map = planner->cut_map();
        last_excess = planner->excess_left();
        std::vector<ArrayCut> cuts = planner->visible_cuts();
        planner.reset();
        if (!reached && level != FitLevel::kShrink) break;  // a stronger level is needed
        if (cuts.empty() && !view_.summarizes()) return changed;
        if (!cached()) return changed;  // too large for the cache: nothing could be reached
        write_json_parts(json_parts, cuts, last_map);
        wrote = true;
        const std::size_t total = total_tokens();
        if (total <= budget_.token_budget) {
          fitted = true;
          break;
        }
        overshoot += static_cast<double>(total - budget_.token_budget) * 1.25 + 32;
      }
      if (fitted) break;
    }
    if (!wrote) return changed;
    record_.stages.push_back("paginate");
    if (view_.max_string_chars != 0 || view_.max_depth != 0) record_.stages.push_back("summarize");
    if (!projections_.empty()) record_.stages.push_back("project");
    for (const PartOutput& output : outputs_) {
      for (const ArrayCut& cut : output.cuts) {
        record_.items_total += cut.total;
        record_.items_shown += cut.shown;
      }
    }
    return true;
  }

  // Chooses the projections (into view_) that should save what the page cuts could not.
  bool plan_projection(const std::vector<std::size_t>& json_parts, const CutMap& map,
                       double excess) {
    const FieldList* rule = nullptr;
    for (const config::ProjectionRule& candidate : budget_.summary.projections) {
      if (glob_matches(candidate.tool_glob, context_.tool)) {
        rule = &candidate.fields;
        break;
      }
    }
    std::vector<RecordGroup> groups;
    std::vector<std::size_t> group_parts;
    for (const std::size_t k : json_parts) {
      for (RecordGroup& group : find_record_groups(entry_->parts[k].json, "", map, view_)) {
        group_parts.push_back(k);
        groups.push_back(std::move(group));
      }
    }
    // A margin: field costs are estimated apart from the text around them.
    projections_ = plan_projections(groups, excess * 1.1 + 16, rule, kMinProjectedFields, view_);
    projection_parts_.clear();
    for (const Projection& projection : projections_) {
      for (std::size_t g = 0; g < groups.size(); ++g) {
        if (groups[g].path == projection.path) {
          projection_parts_.push_back(group_parts[g]);
          break;
        }
      }
    }
    return !projections_.empty();
  }

  void write_json_parts(const std::vector<std::size_t>& json_parts,
                        const std::vector<ArrayCut>& cuts, const CutMap& map) {
    for (const std::size_t k : json_parts) {
      PartOutput& output = outputs_[k];
      output.cuts.clear();
      for (const ArrayCut& cut : cuts) {
        if (cut.part == k) output.cuts.push_back(cut);
      }
      output.body.clear();
      output.stats = ViewStats{};
      if (view_.summarizes()) {
        std::string path;
        write_view(output.body, entry_->parts[k].json, view_, map, path, 0, nullptr, output.stats);
      } else {
        write_with_cuts(output.body, entry_->parts[k].json, map);
      }
      const bool summarized =
          output.stats.strings_cut + output.stats.values_collapsed > 0 || projected_part(k);
      if (output.cuts.empty() && !summarized) {
        output.mode = output.body == split_.parts[k].text ? Mode::kOriginal : Mode::kCompacted;
        output.meta = json::object{};
      } else {
        output.mode = Mode::kPaginated;
        output.meta = part_meta(k, output);
      }
    }
  }

  bool projected_part(std::size_t part) const {
    return std::find(projection_parts_.begin(), projection_parts_.end(), part) !=
           projection_parts_.end();
  }

  json::object part_meta(std::size_t part, const PartOutput& output) {
    const CursorIssuer cursors = issuer();
    json::object extra;
    // The server answered with an array; the answer shows it as {"items": [...]}.
    if (entry_->parts[part].json.is_array()) extra["wrapped"] = true;
    std::vector<Projection> projections;
    for (std::size_t i = 0; i < projections_.size(); ++i) {
      if (projection_parts_[i] == part) projections.push_back(projections_[i]);
    }
    json::object meta;
    if (!output.cuts.empty()) {
      if (const ArrayDigest* digest = digest_of(part, output.cuts.front().path)) {
        extra["summary"] = digest->summary;
        if (!digest->fields.empty()) extra["digest"] = digest->fields;
      }
      meta = array_metadata(
          output.cuts,
          [&](const ArrayCut& cut) {
            return cut.begin + cut.shown < cut.total
                       ? cursors.array_page(part, cut.path, cut.begin + cut.shown, 0, {})
                       : std::string();
          },
          extra, fetch_tool_, budget_.max_page_size);
      if (json::value* others = meta.if_contains("otherCuts")) {
        for (json::value& other : others->as_array()) {
          json::object& entry = other.as_object();
          if (const ArrayDigest* digest = digest_of(part, entry["path"].as_string())) {
            entry["summary"] = digest->summary;
          }
        }
      }
    } else {
      meta = std::move(extra);
    }
    add_summary_fields(meta, output.stats, projections, cursors.value(part, ""), fetch_tool_);
    if (!entry_->parts[part].spill_path.empty()) meta["file"] = entry_->parts[part].spill_path;
    return meta;
  }

  // The digest of the array at `path` in `part`, computed once per answer.
  const ArrayDigest* digest_of(std::size_t part, std::string_view path) {
    const std::string key = std::to_string(part) + std::string(path);
    auto found = digests_.find(key);
    if (found == digests_.end()) {
      std::optional<ArrayDigest> digest;
      const json::value* value = find_pointer(entry_->parts[part].json, path);
      if (value != nullptr && value->is_array()) digest = digest_array(value->get_array(), path);
      found = digests_.emplace(key, std::move(digest)).first;
    }
    return found->second ? &*found->second : nullptr;
  }

  // Last resort: the parts as text, the largest cut first, until the answer is under `limit`.
  void cut_as_text(std::size_t limit) {
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
      const double target = static_cast<double>(limit) -
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
      if (total_now <= limit) break;
      overshoot += static_cast<double>(total_now - limit) * 1.25 + 32;
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
      bytes += part.text.size() + part.chunks.capacity() * sizeof(TextChunk);
      if (part.arena) bytes += part.arena->bytes();
      if (part.lines) bytes += part.lines->memory_bytes();
    }
    spill_parts();
    entry_id_ = cache_.insert(entry_, bytes, context_.now);
    record_.cache_entry = entry_id_;
    return entry_id_ != 0;
  }

  // --spill-dir: each part's full original goes to a file the answer names.
  void spill_parts() {
    if (!spill_) return;
    for (std::size_t k = 0; k < entry_->parts.size() && k < split_.parts.size(); ++k) {
      CachedPart& part = entry_->parts[k];
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
        part.spill = std::move(spilled->first);
        part.spill_path = std::move(spilled->second);
      }
    }
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

  const ResultPipeline::SpillWriter& spill_;
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
  ValueView view_;                             // how summarized values are shown
  std::vector<Projection> projections_;        // what projection did, for _ctxguard
  std::vector<std::size_t> projection_parts_;  // the part of each projection
  std::map<std::string, std::optional<ArrayDigest>> digests_;
};

}  // namespace

std::optional<RewrittenResult> ResultPipeline::process(json::object& result,
                                                       const CallContext& context) {
  const auto tokens = result_tokens(result);
  if (!tokens) return std::nullopt;  // not a CallToolResult: not ours to judge
  const json::value* error = result.if_contains("isError");
  const bool is_error = error != nullptr && error->is_bool() && error->get_bool();
  const bool rewrite = context.rewrite && !is_error;
  const std::size_t limit = rewrite ? budget_.token_budget : budget_.hard_cap;
  if (tokens->total <= limit && !(rewrite && has_text_to_chunk(result, *tokens))) {
    return std::nullopt;
  }
  Job job(budget_, codec_, cache_, fetch_tool_, spill_, context, result);
  return job.run(*tokens, is_error);
}

std::optional<RewrittenResult> ResultPipeline::process_resource(json::object& result,
                                                                const CallContext& context) {
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
    if (tokens <= chunk_tokens(budget_)) continue;
    CachedPart& part = entry->parts.emplace_back();
    part.text = std::string(text->get_string());
    auto lines = std::make_shared<LineIndex>(part.text);
    part.chunks = chunk_text(part.text, chunk_tokens(budget_), *lines);
    part.lines = std::move(lines);
    chunked.push_back(i);
  }
  if (chunked.empty()) return std::nullopt;
  std::size_t bytes = sizeof(CachedResult);
  for (const CachedPart& part : entry->parts) {
    bytes +=
        part.text.size() + part.lines->memory_bytes() + part.chunks.capacity() * sizeof(TextChunk);
  }
  if (spill_) {
    for (CachedPart& part : entry->parts) {
      if (auto spilled = spill_(context.tool, "txt", part.text)) {
        part.spill = std::move(spilled->first);
        part.spill_path = std::move(spilled->second);
      }
    }
  }
  const std::uint64_t id = cache_.insert(entry, bytes, context.now);
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
      json::object meta = chunk_metadata(part, next, 0, issuer, fetch_tool_);
      if (!part.spill_path.empty()) meta["file"] = part.spill_path;
      const std::size_t piece = budget::estimate_tokens(item["text"].as_string());
      std::size_t tokens = 0;
      std::string trailer = settle_budget_fields(
          meta, budget_.token_budget, piece,
          [](const json::object& fields) {
            return to_json(json::object{{"_ctxguard", fields}});
          },
          tokens);
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
  for (json::key_value_pair& member : result) {
    if (member.key() == "contents") {
      rewritten.result["contents"] = std::move(out);
    } else {
      rewritten.result[member.key()] = std::move(member.value());
    }
  }
  return rewritten;
}

bool ResultPipeline::has_text_to_chunk(const json::object& result,
                                       const ResultTokens& tokens) const {
  const json::array& content = result.at("content").as_array();
  for (std::size_t i = 0; i < content.size() && i < tokens.items.size(); ++i) {
    if (tokens.items[i] <= chunk_tokens(budget_)) continue;
    const json::object* item = content[i].if_object();
    const json::value* text = item != nullptr ? item->if_contains("text") : nullptr;
    if (text == nullptr || !text->is_string()) continue;
    // JSON text is the JSON stages' business; everything else over the chunk size is chunked.
    const std::string_view view = text->get_string();
    const std::size_t first = view.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || (view[first] != '{' && view[first] != '[')) return true;
    if (!parse_json(view)) return true;  // looks like JSON, is not: plain text
  }
  return false;
}

}  // namespace ctxguard::pipeline
