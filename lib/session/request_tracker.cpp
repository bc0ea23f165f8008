#include "session/request_tracker.hpp"

#include <algorithm>

#include <boost/json/serialize.hpp>

namespace ctxguard::session {
namespace {

std::string key_of(const boost::json::value& id) { return boost::json::serialize(id); }

}  // namespace

void RequestTracker::track(const boost::json::value& id, std::string method, Clock::time_point now,
                           std::string subject, std::shared_ptr<const void> context) {
  pending_.insert_or_assign(key_of(id), PendingRequest{id, std::move(method), std::move(subject),
                                                       now, next_sequence_++, std::move(context)});
}

std::optional<PendingRequest> RequestTracker::resolve(const boost::json::value& id) {
  auto node = pending_.extract(key_of(id));
  if (node.empty()) return std::nullopt;
  return std::move(node.mapped());
}

bool RequestTracker::contains(const boost::json::value& id) const {
  return pending_.contains(key_of(id));
}

std::vector<PendingRequest> RequestTracker::take_all() {
  std::vector<PendingRequest> all;
  all.reserve(pending_.size());
  for (auto& [key, request] : pending_) all.push_back(std::move(request));
  pending_.clear();
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.sequence < b.sequence; });
  return all;
}

}  // namespace ctxguard::session
