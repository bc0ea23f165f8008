#include "pipeline/rewrite_job.hpp"

#include <algorithm>
#include <cmath>

#include "support/glob.hpp"
#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

bool RewriteJob::fit_json() {
  std::vector<std::size_t> json_parts;
  for (std::size_t k = 0; k < split_.parts.size(); ++k) {
    if (split_.parts[k].is_json) json_parts.push_back(k);
  }
  if (json_parts.empty()) {
    compute_weights();
    return false;
  }

  // One walk prices every part and every array in it (the estimate of the minified form).
  // pagination: false leaves every array whole: no array is long enough to be cut.
  const std::size_t min_cut_items = budget_.pagination ? budget_.min_cut_items : SIZE_MAX;
  auto planner = std::make_unique<CutPlanner>(budget_.page_size, min_cut_items, kTokensPerCursor);
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
  view_.tables = budget_.summary.tables;
  for (std::size_t step = 0; step < std::size(kFitLevels); ++step) {
    const FitLevel level = kFitLevels[step];
    const bool summarizing =
        level == FitLevel::kSummarize || level == FitLevel::kProject || level == FitLevel::kTighten;
    if (summarizing && !budget_.summarization) continue;
    if (level == FitLevel::kSummarize) {
      view_.max_string_chars = budget_.summary.max_string_chars;
      view_.max_depth = budget_.summary.max_depth;
      if (!view_.summarizes()) continue;
      planner.reset();
    }
    if (level == FitLevel::kTighten) {
      if (!tighten(view_)) break;
      planner.reset();
      --step;  // tighter again next time, until it fits or nothing is left to tighten
    }
    if (level == FitLevel::kProject) {
      if (!budget_.summary.project) continue;
      if (!plan_projection(json_parts, last_map, last_excess)) continue;
      planner.reset();
    }
    double overshoot = 0;
    const int rounds = level == FitLevel::kTighten ? kTightenRounds : kPlanningRounds;
    for (int round = 0; round < rounds; ++round) {
      if (!planner) {
        planner = std::make_unique<CutPlanner>(budget_.page_size, min_cut_items, kTokensPerCursor);
        planner->set_view(view_);
        for (const std::size_t k : json_parts) {
          compact_tokens_[k] =
              static_cast<std::size_t>(std::ceil(planner->add_tree(entry_->parts[k].json, k, "")));
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
      if (!reached && level < FitLevel::kShrink) break;  // a stronger level is needed
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
  // The stages that changed what the model reads, for the log.
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
  if (paginated) record_.stages.push_back("paginate");
  if (summarized) record_.stages.push_back("summarize");
  if (!projections_.empty()) record_.stages.push_back("project");
  if (tables) record_.stages.push_back("tables");
  return true;
}

bool RewriteJob::plan_projection(const std::vector<std::size_t>& json_parts, const CutMap& map,
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

void RewriteJob::write_json_parts(const std::vector<std::size_t>& json_parts,
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
      // A top-level array shown as a table is wrapped like any top-level array.
      if (entry_->parts[k].json.is_array() && output.body.front() == '{') {
        output.body = "{\"items\":" + output.body + "}";
      }
    } else {
      write_with_cuts(output.body, entry_->parts[k].json, map);
    }
    const bool summarized = output.stats.strings_cut + output.stats.values_collapsed > 0 ||
                            !output.stats.tables.empty() || projected_part(k);
    if (output.cuts.empty() && !summarized) {
      output.mode = output.body == split_.parts[k].text ? Mode::kOriginal : Mode::kCompacted;
      output.meta = json::object{};
    } else {
      output.mode = Mode::kPaginated;
      output.meta = part_meta(k, output);
    }
  }
}

bool RewriteJob::projected_part(std::size_t part) const {
  return std::find(projection_parts_.begin(), projection_parts_.end(), part) !=
         projection_parts_.end();
}

json::object RewriteJob::part_meta(std::size_t part, const PartOutput& output) {
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
