#include "pipeline/rewrite/rewrite_job.hpp"

#include <algorithm>
#include <cmath>

#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

bool RewriteJob::fit_json() {
  json_parts_.clear();
  for (std::size_t k = 0; k < split_.parts.size(); ++k) {
    if (split_.parts[k].is_json) json_parts_.push_back(k);
  }
  if (json_parts_.empty()) {
    compute_weights();
    return false;
  }
  FitOptions options = FitOptions::of(budget_, context_.tool);
  // pagination: false leaves every array whole: no array is long enough to be cut.
  if (!budget_.pagination) options.min_cut_items = SIZE_MAX;
  // One walk prices every part and every array in it (the estimate of the minified form); the
  // first planning round reuses it.
  auto priced = std::make_unique<CutPlanner>(options.page_size, options.min_cut_items, kCursorCost);
  priced->count_chars(options.budget.chars != 0);
  add_values(*priced);
  compute_weights();

  // Stage 1: lossless compaction. Rendering a large value costs as much as parsing it, so it
  // is rendered here only when compaction alone may be enough; otherwise the paginated
  // rendering below is minified anyway.
  const bool compacted = compaction_saves();
  if (compacted) record_.stages.emplace_back("compact");
  if (compacted && compacted_total() <= budget_.token_budget && compact_fits()) return true;

  // Stages 2-4: pagination, summarization, projection, each level only when needed.
  ValueView view;
  view.tables = budget_.summary.tables;
  const FitResult result = fit(*this, options, std::move(view), std::move(priced));
  if (result.stopped || !result.rendered) return compacted;
  record_fit(result);
  return true;
}

bool RewriteJob::compaction_saves() const {
  for (const std::size_t k : json_parts_) {
    // structuredContent goes out as JSON whatever its form: only text can be compacted.
    if (split_.parts[k].content_index == kNotContent) continue;
    if (compact_tokens_[k] < split_.parts[k].original_tokens) return true;
  }
  return false;
}

bool RewriteJob::compact_fits() {
  for (const std::size_t k : json_parts_) {
    if (split_.parts[k].content_index == kNotContent) continue;
    PartOutput& output = outputs_[k];
    output.body = to_json(entry_->parts[k].json);
    if (output.body != split_.parts[k].text) output.mode = Mode::kCompacted;
  }
  return fits(answer_size(), FitBudget::of(budget_));
}

void RewriteJob::record_fit(const FitResult& result) {
  bool paginated = false;
  bool summarized = false;
  bool tables = false;
  for (const PartOutput& output : outputs_) {
    paginated = paginated || !output.cuts.empty();
    tables = tables || !output.stats.tables.empty();
    summarized = summarized || output.stats.strings_cut + output.stats.values_collapsed > 0;
    for (const ArrayCut& cut : output.cuts) {
      record_.items_total += cut.total;
      record_.items_shown += cut.shown;
    }
  }
  if (paginated) record_.stages.emplace_back("paginate");
  if (summarized) record_.stages.emplace_back("summarize");
  if (!result.plan.projections.empty()) record_.stages.emplace_back("project");
  if (tables) record_.stages.emplace_back("tables");
}

void RewriteJob::add_values(CutPlanner& planner) {
  for (const std::size_t k : json_parts_) {
    const Cost cost = planner.add_tree(entry_->parts[k].json, k, "");
    compact_tokens_[k] = static_cast<std::size_t>(std::ceil(cost.tokens));
    compact_text_[k] = Cost{.tokens = 0, .chars = cost.chars, .bytes = cost.bytes};
  }
}

Cost RewriteJob::cost(CutPlanner& planner) {
  Cost cost{.tokens = static_cast<double>(compacted_total())};
  std::size_t items = 0;
  for (std::size_t k = 0; k < split_.parts.size(); ++k) {
    // structuredContent is not in the text a client reads: tokens only.
    const bool in_text = split_.parts[k].content_index != kNotContent;
    if (split_.parts[k].is_json) planner.set_weight(k, weights_[k], in_text);
    if (!in_text) continue;
    cost.chars += compact_text_[k].chars;
    cost.bytes += compact_text_[k].bytes;
    ++items;
  }
  // The text items are joined with '\n'.
  const double joins = items > 0 ? static_cast<double>(items - 1) : 0.0;
  cost.chars += joins;
  cost.bytes += joins;
  return cost;
}

std::vector<RecordGroup> RewriteJob::record_groups(const CutMap& cuts, const ValueView& view) {
  std::vector<RecordGroup> groups;
  group_parts_.clear();
  for (const std::size_t k : json_parts_) {
    for (RecordGroup& group : find_record_groups(entry_->parts[k].json, "", cuts, view)) {
      group_parts_.push_back(k);
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

std::optional<AnswerSize> RewriteJob::render(const FitPlan& plan) {
  if (plan.cuts.empty() && !plan.view.summarizes()) return std::nullopt;  // nothing to show
  if (!cached()) return std::nullopt;  // too large for the cache: nothing could be reached
  write_json_parts(plan);
  return answer_size();
}

std::vector<Shortened> RewriteJob::shortened() {
  std::vector<Shortened> all;
  for (const std::size_t k : json_parts_) {
    for (const Shortened& value : outputs_[k].stats.shortened) {
      all.push_back(value);
      all.back().weight = weights_[k];
    }
  }
  return all;
}

void RewriteJob::write_json_parts(const FitPlan& plan) {
  for (const std::size_t k : json_parts_) {
    PartOutput& output = outputs_[k];
    output.cuts.clear();
    for (const ArrayCut& cut : plan.cuts) {
      if (cut.part == k) output.cuts.push_back(cut);
    }
    output.body.clear();
    output.stats = ViewStats{};
    if (plan.view.summarizes()) {
      std::string path;
      write_view(output.body, entry_->parts[k].json, plan.view, plan.map, path, output.stats);
      // A top-level array shown as a table is wrapped like any top-level array.
      if (entry_->parts[k].json.is_array() && output.body.front() == '{') {
        output.body = "{\"items\":" + output.body + "}";
      }
    } else {
      write_with_cuts(output.body, entry_->parts[k].json, plan.map);
    }
    const bool summarized = output.stats.strings_cut + output.stats.values_collapsed > 0 ||
                            !output.stats.tables.empty() || projected_part(k, plan);
    if (output.cuts.empty() && !summarized) {
      output.mode = output.body == split_.parts[k].text ? Mode::kOriginal : Mode::kCompacted;
      output.meta = json::object{};
    } else {
      output.mode = Mode::kPaginated;
      output.meta = part_meta(k, output, plan);
    }
  }
}

bool RewriteJob::projected_part(std::size_t part, const FitPlan& plan) const {
  return std::any_of(
      plan.projections.begin(), plan.projections.end(),
      [&](const Projection& projection) { return group_parts_[projection.group] == part; });
}

json::object RewriteJob::part_meta(std::size_t part, const PartOutput& output,
                                   const FitPlan& plan) {
  const CursorIssuer cursors = issuer();
  json::object extra;
  // The server answered with an array; the answer shows it as {"items": [...]}.
  if (entry_->parts[part].json.is_array()) extra["wrapped"] = true;
  std::vector<Projection> projections;
  for (const Projection& projection : plan.projections) {
    if (group_parts_[projection.group] == part) projections.push_back(projection);
  }
  json::object meta;
  if (!output.cuts.empty()) {
    if (const ArrayDigest* digest = digest_of(part, output.cuts.front().path)) {
      extra["summary"] = digest->summary;
      if (!digest->fields.empty()) extra["digest"] = digest->fields;
    }
    meta = array_metadata(
        output.cuts, [&](const ArrayCut& cut) { return cursors.next_page(part, cut); }, extra,
        fetch_tool_, budget_.max_page_size);
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
  if (entry_->parts[part].spill) meta["file"] = entry_->parts[part].spill->path;
  return meta;
}

const ArrayDigest* RewriteJob::digest_of(std::size_t part, std::string_view path) {
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

}  // namespace ctxguard::pipeline
