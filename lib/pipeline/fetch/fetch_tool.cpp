#include "pipeline/fetch/fetch_tool.hpp"

#include <memory>
#include <utility>

#include "mcp/tool_result.hpp"
#include "pipeline/fetch/fetch_call.hpp"
#include "pipeline/metadata.hpp"

namespace ctxguard::pipeline {

namespace {

void refuse(FetchAnswer& answer, const FetchRefusal& refusal) {
  answer.result = mcp::text_tool_result(fetch_refusal_message(refusal), mcp::ToolResult::kError);
  answer.record.stages = {"fetch-error"};
  answer.record.error = fetch_refusal_reason(refusal.error);
}

}  // namespace

FetchAnswer FetchTool::refused(std::string tool, const FetchRefusal& refusal) const {
  FetchAnswer answer;
  answer.record.tool = std::move(tool);
  refuse(answer, refusal);
  return answer;
}

FetchAnswer FetchTool::answer(const boost::json::value& arguments, const SettingsFor& settings_for,
                              std::chrono::steady_clock::time_point now,
                              std::chrono::system_clock::time_point wall_now) {
  const auto parsed = parse_fetch_request(arguments, codec_, wall_now);
  if (!parsed) return refused(name(), parsed.error());
  const FetchRequest& request = *parsed;

  const std::uint64_t entry_id = request.payload.entry;
  const std::shared_ptr<const CachedResult> entry = cache_.find(entry_id, now);
  if (entry == nullptr) return refused(name(), FetchRefusal{.error = FetchError::kEvicted});
  if (request.payload.part >= entry->parts.size()) {
    return refused(name(), FetchRefusal{.error = FetchError::kMismatch});
  }
  // The settings of the tool whose result this is, as configured now.
  const config::BudgetSettings& budget = settings_for(entry->tool);
  std::string tool = name() + ":" + entry->tool;
  const auto limit = page_limit(request, budget);
  if (!limit) return refused(std::move(tool), limit.error());
  if (!request.query.empty() && !budget.search) {
    return refused(std::move(tool),
                   FetchRefusal{.error = FetchError::kSearchOff, .detail = entry->tool});
  }

  FetchAnswer answer;
  answer.record.tool = std::move(tool);
  answer.record.cache_entry = entry_id;
  answer.record.stages = {"fetch"};
  const CursorIssuer issuer(codec_, entry_id, wall_now);
  const FetchCall::Context context{.tool_name = name(),
                                   .entry = *entry,
                                   .request = request,
                                   .limit = *limit,
                                   .budget = budget,
                                   .issuer = issuer};
  if (const auto answered = FetchCall(context, answer).run(); !answered) {
    refuse(answer, answered.error());
  } else {
    // The limit the answer came closest to: the one that decided how much it holds.
    const budget::LimitShare closest = budget::tightest_limit(
        result_size(answer.result, answer.record.final_tokens), budget::FitBudget::of(budget));
    answer.record.limit = closest.unit;
    answer.record.fill = closest.share;
  }
  return answer;
}

}  // namespace ctxguard::pipeline
