// ctxguard_fetch {cursor, aggregate}: the groups of an aggregate over a cached array, as many as
// fit the budget, the rest behind a cursor (docs/protocol.md 5.6).

#include <fmt/format.h>

#include "pipeline/fetch/aggregate.hpp"
#include "pipeline/fetch/fetch_call.hpp"
#include "support/json_writer.hpp"
#include "support/most_that_fit.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;
using cursor::CursorKind;

namespace {

// What a page of groups says besides them.
struct GroupPage {
  const Aggregate& aggregate;
  const AggregateSpec& spec;
  const std::string& query;
  std::size_t first = 0;
};

std::string group_body(const GroupPage& page, std::size_t count) {
  json::object body{{"aggregate", page.spec.to_json()}};
  if (!page.query.empty()) body["query"] = page.query;
  body["items"] = page.aggregate.items;
  json::array groups;
  for (std::size_t i = page.first; i < page.first + count; ++i) {
    groups.push_back(page.aggregate.groups[i]);
  }
  body["groups"] = std::move(groups);
  if (!page.aggregate.skipped.empty()) body["skipped"] = page.aggregate.skipped;
  return to_json(body);
}

}  // namespace

Refusable<> FetchCall::answer_aggregate(const json::array& array, const std::string& path) {
  std::optional<Query> filter;
  if (!request_.query.empty()) {
    auto parsed = Query::parse(request_.query);
    if (!parsed) {
      return FetchRefusal{.error = FetchError::kQueryInvalid,
                          .detail = std::move(parsed.error().message)};
    }
    filter = *std::move(parsed);
  }
  const AggregateSpec& spec = *request_.aggregate;
  const Aggregate result = aggregate(array, spec, filter ? &*filter : nullptr);
  const bool continued = request_.payload.kind == CursorKind::kAggregate && !request_.path;
  const std::size_t first = continued ? static_cast<std::size_t>(request_.payload.offset) : 0;
  const std::size_t total = result.groups.size();
  if (first > total) return refusal(FetchError::kMismatch);
  const GroupPage page{result, spec, request_.query, first};
  const auto answer_with = [&](std::size_t count) {
    json::object meta{
        {"path", path}, {"groupsTotal", total}, {"firstGroup", first}, {"groupsShown", count}};
    const bool more = first + count < total;
    meta["hasMore"] = more;
    if (more) {
      meta["nextCursor"] =
          context_.issuer.aggregate(part_index_, path, first + count, context_.limit,
                                    spec.to_cursor_fields(), request_.query);
      meta["hint"] = fmt::format(
          "Groups {}-{} of {}, the largest first; {} {{\"cursor\": _ctxguard.nextCursor}} gives "
          "the next.",
          first + 1, first + count, total, context_.tool_name);
    }
    return compose(std::move(meta), group_body(page, count));
  };
  // The most groups, up to a page, that fit: by halving (each try writes the whole answer).
  const std::size_t shown = most_that_fit(
      std::min<std::size_t>(1, total - first), std::min(context_.limit, total - first),
      [&](std::size_t groups) { return budget::fits(answer_with(groups), budget()); });
  answer_.record.final_tokens = answer_with(shown).tokens;
  answer_.record.items_total = total;
  answer_.record.items_shown = shown;
  answer_.record.stages = {"fetch", "aggregate"};
  return {};
}

}  // namespace ctxguard::pipeline
