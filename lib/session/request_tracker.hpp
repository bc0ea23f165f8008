#pragma once
// The requests one peer has sent and the other has not answered yet.
//
// Ids are JSON values (number or string, occasionally null) and are matched by their exact JSON
// form, so `1` and `"1"` are different requests, as JSON-RPC requires.
//
// `Context` is whatever the observer keeps with each request and gets back with its answer
// (ctxguard: the configuration the call started under, so its answer is handled with it even
// after a reload). It is held as a `shared_ptr<const Context>`, so it lives as long as some
// request needs it.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/json/value.hpp>

namespace ctxguard::session {

using Clock = std::chrono::steady_clock;

// The key a request is tracked under: its id's serialized JSON.
std::string request_key(const boost::json::value& id);

template <typename Context>
struct PendingRequest {
  boost::json::value id;
  std::string method;
  std::string
      subject;  // what the request is about: the tool of tools/call, the task of tasks/result
  Clock::time_point started;
  std::uint64_t sequence = 0;  // order of arrival, so abandoned requests are answered in order
  std::shared_ptr<const Context> context;
};

template <typename Context>
class RequestTracker {
 public:
  using Pending = PendingRequest<Context>;

  // Records an outstanding request. Reusing an id that is still in flight is a peer bug; the newer
  // request replaces the older one because that is the one the next answer will be matched to.
  void track(const boost::json::value& id, std::string method, Clock::time_point now,
             std::string subject = {}, std::shared_ptr<const Context> context = {}) {
    pending_.insert_or_assign(request_key(id), Pending{id, std::move(method), std::move(subject),
                                                       now, next_sequence_++, std::move(context)});
  }

  // Removes and returns the request `id` answers, or nullopt for an unknown id.
  std::optional<Pending> resolve(const boost::json::value& id) {
    auto node = pending_.extract(request_key(id));
    if (node.empty()) return std::nullopt;
    return std::move(node.mapped());
  }

  // Removes all outstanding requests and returns them in the order they arrived.
  std::vector<Pending> take_all() {
    std::vector<Pending> all;
    all.reserve(pending_.size());
    for (auto& [key, request] : pending_) all.push_back(std::move(request));
    pending_.clear();
    std::sort(all.begin(), all.end(),
              [](const Pending& a, const Pending& b) { return a.sequence < b.sequence; });
    return all;
  }

  bool contains(const boost::json::value& id) const { return pending_.contains(request_key(id)); }

  std::size_t size() const { return pending_.size(); }

 private:
  std::unordered_map<std::string, Pending> pending_;  // keyed by request_key
  std::uint64_t next_sequence_ = 0;
};

}  // namespace ctxguard::session
