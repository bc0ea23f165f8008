#pragma once
// The requests one peer has sent and the other has not answered yet.
//
// Ids are JSON values (number or string, occasionally null) and are matched by their exact JSON
// form, so `1` and `"1"` are different requests, as JSON-RPC requires.

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

struct PendingRequest {
  boost::json::value id;
  std::string method;
  std::string
      subject;  // what the request is about: the tool of tools/call, the task of tasks/result
  Clock::time_point started;
  std::uint64_t sequence = 0;  // order of arrival, so abandoned requests are answered in order
  // Whatever the observer attached when the request passed (ctxguard: the configuration the
  // call started under, so its answer is handled with it even after a reload).
  std::shared_ptr<const void> context;
};

class RequestTracker {
 public:
  // Records an outstanding request. Reusing an id that is still in flight is a peer bug; the newer
  // request replaces the older one because that is the one the next answer will be matched to.
  void track(const boost::json::value& id, std::string method, Clock::time_point now,
             std::string subject = {}, std::shared_ptr<const void> context = {});

  // Removes and returns the request `id` answers, or nullopt for an unknown id.
  std::optional<PendingRequest> resolve(const boost::json::value& id);

  // Removes all outstanding requests and returns them in the order they arrived.
  std::vector<PendingRequest> take_all();

  bool contains(const boost::json::value& id) const;

  std::size_t size() const { return pending_.size(); }

 private:
  std::unordered_map<std::string, PendingRequest> pending_;  // keyed by the id's serialized JSON
  std::uint64_t next_sequence_ = 0;
};

}  // namespace ctxguard::session
