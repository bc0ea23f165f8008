#pragma once
// One tools/call result on its way through the pipeline: ResultPipeline::process makes one for
// each result it has to rewrite. Internal to lib/pipeline. The work is in two files:
// rewrite_job.cpp (the cache entry, chunked text, the hard-cap text cut, composing and measuring
// the answer) and rewrite_job_json.cpp (the JSON stages: compaction, pages, summarization,
// projection, and the `_ctxguard` of a JSON part).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "config/settings.hpp"
#include "cursor/cursor_codec.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/fit/digest.hpp"
#include "pipeline/fit/fitter.hpp"
#include "pipeline/fit/paginate.hpp"
#include "pipeline/fit/projection.hpp"
#include "pipeline/fit/summarize.hpp"
#include "pipeline/fit/text_fit.hpp"
#include "pipeline/json_parts.hpp"
#include "pipeline/metadata.hpp"
#include "pipeline/rewrite/result_pipeline.hpp"

namespace ctxguard::pipeline {

// The JSON stages fit the result's JSON parts with the fit engine: the job is their subject.
// The characters and bytes `text` adds to the text a client reads (no tokens).
Cost text_cost(std::string_view text);

class RewriteJob : private FitSubject {
  // How one part goes out.
  enum class Mode { kOriginal, kCompacted, kPaginated, kTextCut };

  struct PartOutput {
    Mode mode = Mode::kOriginal;
    std::string body;            // compacted or paginated JSON; the piece of text shown
    std::vector<ArrayCut> cuts;  // paginated: shortened arrays, the largest first
    std::size_t text_total = 0;  // text cut: bytes in the whole text
    std::string text;            // what the model reads for this part
    std::string trailer;         // text cut: the trailing `{"_ctxguard": ...}` item
    boost::json::object meta;    // the part's `_ctxguard`, without the budget fields
    ViewStats stats;             // what summarization left out of `body`
  };

 public:
  RewriteJob(const config::BudgetSettings& budget, const cursor::CursorCodec& codec,
             ResultCache& cache, const std::string& fetch_tool,
             const ResultPipeline::SpillWriter& spill, const CallContext& context,
             boost::json::object& result)
      : spill_(spill),
        budget_(budget),
        codec_(codec),
        cache_(cache),
        fetch_tool_(fetch_tool),
        context_(context),
        result_(result),
        measures_text_(FitBudget::cap_of(budget).limits_text()) {}

  // `original`: the size of the result as the server sent it (before its text items were joined,
  // if they were): it goes out as it came only when that is within the hard cap.
  std::optional<RewrittenResult> run(const ResultTokens& tokens, const AnswerSize& original,
                                     bool is_error);

 private:
  // structuredContent repeating a part makes every token of that part count twice (or more).
  void compute_weights();

  // The cache entry: parsed values move in (cut arrays are recognised by address, and the
  // entry's values do not move again; whether it gets cached is decided later), and texts long
  // enough to be chunked are copied in with their line index.
  void build_entry();

  // Plain text over the chunk size: its first chunk, and a trailing item saying where it stands
  // (docs/protocol.md, section 2.5). Returns whether any part was chunked.
  bool chunk_texts();

  CursorIssuer issuer() const { return CursorIssuer(codec_, entry_id_, context_.wall_now); }

  // The JSON stages, aiming at the budget: compaction, then the levels of fit (pages, cut
  // strings and deep values, projection, shorter pages). Returns whether the answer changed; it
  // may still be over the budget (the caller cuts it as text then).
  bool fit_json();

  // Whether compaction alone saves tokens in a part the model reads as text.
  bool compaction_saves() const;
  // Writes the JSON parts compacted; true when the answer then fits.
  bool compact_fits();
  // The stages that changed what the model reads, for the log.
  void record_fit(const FitResult& result);

  // FitSubject: the JSON parts of the result, weighted, written with their `_ctxguard`.
  void add_values(CutPlanner& planner) override;
  Cost cost(CutPlanner& planner) override;
  std::vector<RecordGroup> record_groups(const CutMap& cuts, const ValueView& view) override;
  std::optional<AnswerSize> render(const FitPlan& plan) override;
  std::vector<Shortened> shortened() override;

  void write_json_parts(const FitPlan& plan);

  // Whether a projection of `plan` applies to a record group of `part`.
  bool projected_part(std::size_t part, const FitPlan& plan) const;

  boost::json::object part_meta(std::size_t part, const PartOutput& output, const FitPlan& plan);

  // The digest of the array at `path` in `part`, computed once per answer.
  const ArrayDigest* digest_of(std::size_t part, std::string_view path);

  // Last resort: the parts as text, the largest cut first, until the answer is within `cap`.
  void cut_as_text(const FitBudget& cap);
  // A fresh entry holding every part as text (JSON compacted); each part's size.
  std::vector<AnswerSize> start_text_entry();
  // What each part may keep so the answer is within `cap` less `reserve` (the `_ctxguard` items
  // and the correction so far), in every unit `cap` limits: the largest cut first.
  std::vector<FitBudget> text_allowances(const std::vector<AnswerSize>& sizes, const FitBudget& cap,
                                         const TextReserve& reserve) const;
  // Each part cut to its allowance, with its `_ctxguard` when it was cut.
  void write_text_cuts(const std::vector<FitBudget>& allowances,
                       const std::vector<AnswerSize>& sizes);

  boost::json::object text_meta(std::size_t part, std::size_t end, std::size_t total) const;

  // Reserves the entry's id in the cache (spilling its parts first): false when it is too large
  // to keep. finish() commits it once the answer goes out.
  bool cached();

  // --spill-dir: each part's full original goes to a file the answer names.
  void spill_parts();

  std::size_t compacted_total() const;

  // Builds every part's text with the budget fields filled in, the figure settled
  // (settle_stated_tokens). Returns the figure the answer states.
  std::size_t compose();

  void compose_with(std::size_t estimated);

  // The structuredContent to send, or nullopt to keep the server's.
  std::optional<boost::json::value> build_structured() const;

  // Tokens of the answer as composed.
  std::size_t measure() const;

  // Composes the answer and measures it in every unit.
  AnswerSize answer_size();

  // The output of each content item (nullptr: the item goes out as it came).
  std::vector<const PartOutput*> outputs_by_item(std::size_t items) const;

  // Called right after the last compose (answer_size or cut_as_text).
  std::optional<RewrittenResult> finish();

  boost::json::array rewrite_content(boost::json::array& content);

  const ResultPipeline::SpillWriter& spill_;
  const config::BudgetSettings& budget_;
  const cursor::CursorCodec& codec_;
  ResultCache& cache_;
  const std::string& fetch_tool_;
  const CallContext& context_;
  boost::json::object& result_;
  // The client limits characters, bytes or lines: answers are measured in them too (otherwise
  // only in tokens, the one unit then limited).
  const bool measures_text_;

  ResultParts split_;
  std::shared_ptr<CachedResult> entry_;
  std::uint64_t entry_id_ = 0;  // reserved in the cache; committed by finish()
  std::size_t entry_bytes_ = 0;
  std::vector<PartOutput> outputs_;
  std::vector<double> weights_;
  std::vector<std::size_t> compact_tokens_;
  std::vector<Cost> compact_text_;  // each part's characters and bytes as it stands
  // Chunked text parts: the first answer's digest, and what it takes there.
  struct TextDigest {
    boost::json::object value;
    std::size_t chars = 0;   // as JSON (bytes, an upper bound on characters)
    std::size_t tokens = 0;  // with its key
  };
  std::vector<TextDigest> text_digests_;
  std::optional<boost::json::value> structured_;
  // The answer's first item: the way on from the first part that offers a cursor (empty: none).
  std::string way_on_;
  CallRecord record_;
  std::vector<std::size_t> json_parts_;   // the parts that are JSON
  std::vector<std::size_t> group_parts_;  // the part of each record group projection was given
  std::map<std::string, std::optional<ArrayDigest>> digests_;
};

}  // namespace ctxguard::pipeline
