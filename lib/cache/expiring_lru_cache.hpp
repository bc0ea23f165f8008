#pragma once
// The full original results that rewritten answers point into, so `ctxguard_fetch` can serve
// the rest without calling the server again.
//
// Entries expire `ttl` after their last use (each served page hands out fresh cursors, so an
// entry in use stays alive) and the least recently used ones are evicted to keep the charged
// bytes under `max_bytes`. Entries are shared and immutable: a page being rendered keeps its
// entry alive even if it is evicted meanwhile. Not thread-safe (one per session, one executor).
// Time is passed in, never read, so tests need no sleeps.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>
#include <utility>

namespace ctxguard::cache {

template <class Entry>
class ExpiringLruCache;

struct CacheStats {
  std::size_t entries = 0;
  std::size_t bytes = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;       // unknown, evicted or expired ids
  std::uint64_t evictions = 0;    // dropped to stay under max_bytes
  std::uint64_t expirations = 0;  // dropped because their ttl passed
  std::uint64_t rejected = 0;     // larger than max_bytes on their own, never stored
};

// Ids start at 1 and are never reused within a process; 0 means "not stored".
//
// An entry last used at `t` is alive while now - t <= ttl and expired once now - t > ttl (the
// same boundary as the cursor ttl). Expired entries are dropped lazily: every insert, find and
// set_limits first drops the expired entries at the cold end, so `stats().entries` and
// `stats().bytes` count live entries as of the last call. All operations are O(1) amortized
// (each entry is dropped at most once) and never throw except std::bad_alloc, which leaves the
// cache unchanged apart from expired entries already dropped.
template <class Entry>
class ExpiringLruCache {
 public:
  using Clock = std::chrono::steady_clock;

  ExpiringLruCache(std::size_t max_bytes, Clock::duration ttl) : max_bytes_(max_bytes), ttl_(ttl) {}

  // Stores `entry`, charged `bytes`, evicting what it must. Returns its id, or 0 when `bytes`
  // alone exceeds max_bytes (nothing is evicted then).
  std::uint64_t insert(std::shared_ptr<const Entry> entry, std::size_t bytes,
                       Clock::time_point now);

  // Insert in two steps, for an entry whose id must be known before it is complete (the answer
  // being composed names it in its cursors) and that may never be stored (an answer abandoned,
  // or only computed for the log). reserve() takes the next id when `bytes` could be stored at
  // all, and 0 (counted as rejected) when it alone exceeds max_bytes; it evicts nothing. An id
  // never committed is never found. commit() stores `entry` under a reserved id as insert()
  // would; false (counted as rejected) when `bytes` now exceeds max_bytes.
  std::uint64_t reserve(std::size_t bytes);
  bool commit(std::uint64_t id, std::shared_ptr<const Entry> entry, std::size_t bytes,
              Clock::time_point now);

  // The entry, marked as just used; nullptr when unknown, evicted or expired.
  std::shared_ptr<const Entry> find(std::uint64_t id, Clock::time_point now);

  // New limits apply at once (a smaller max_bytes evicts immediately, a shorter ttl expires
  // immediately).
  void set_limits(std::size_t max_bytes, Clock::duration ttl, Clock::time_point now);

  const CacheStats& stats() const { return stats_; }
  std::size_t max_bytes() const { return max_bytes_; }
  Clock::duration ttl() const { return ttl_; }

 private:
  struct Slot {
    std::uint64_t id = 0;
    std::shared_ptr<const Entry> entry;
    std::size_t bytes = 0;
    Clock::time_point last_used{};
  };
  // Front = most recently used. With a non-decreasing `now`, recency order is also last-use
  // order, so the expired entries are always a run at the back.
  using Recency = std::list<Slot>;

  bool expired(const Slot& slot, Clock::time_point now) const {
    return now - slot.last_used > ttl_;
  }
  void drop_back() {
    stats_.bytes -= recency_.back().bytes;
    --stats_.entries;
    index_.erase(recency_.back().id);
    recency_.pop_back();
  }
  void drop_expired(Clock::time_point now) {
    while (!recency_.empty() && expired(recency_.back(), now)) {
      drop_back();
      ++stats_.expirations;
    }
  }
  // Least recently used first, until `incoming` more bytes fit.
  void evict_for(std::size_t incoming) {
    while (!recency_.empty() && stats_.bytes > max_bytes_ - incoming) {
      drop_back();
      ++stats_.evictions;
    }
  }

  std::size_t max_bytes_;
  Clock::duration ttl_;
  std::uint64_t next_id_ = 1;
  Recency recency_;
  std::unordered_map<std::uint64_t, typename Recency::iterator> index_;
  CacheStats stats_;
};

template <class Entry>
std::uint64_t ExpiringLruCache<Entry>::insert(std::shared_ptr<const Entry> entry, std::size_t bytes,
                                              Clock::time_point now) {
  drop_expired(now);
  const std::uint64_t id = reserve(bytes);
  if (id == 0 || !commit(id, std::move(entry), bytes, now)) return 0;
  return id;
}

template <class Entry>
std::uint64_t ExpiringLruCache<Entry>::reserve(std::size_t bytes) {
  if (bytes > max_bytes_) {
    ++stats_.rejected;
    return 0;
  }
  return next_id_++;
}

template <class Entry>
bool ExpiringLruCache<Entry>::commit(std::uint64_t id, std::shared_ptr<const Entry> entry,
                                     std::size_t bytes, Clock::time_point now) {
  drop_expired(now);
  if (id == 0 || id >= next_id_ || index_.contains(id)) return false;  // not reserved, or stored
  if (bytes > max_bytes_) {
    ++stats_.rejected;
    return false;
  }
  // Allocate the list node and the index slot before evicting anything, so std::bad_alloc
  // leaves the cache as it was.
  Recency fresh;
  fresh.push_back(Slot{id, std::move(entry), bytes, now});
  index_.emplace(id, fresh.begin());
  evict_for(bytes);
  recency_.splice(recency_.begin(), fresh);  // noexcept; iterators stay valid
  stats_.bytes += bytes;
  ++stats_.entries;
  return true;
}

template <class Entry>
std::shared_ptr<const Entry> ExpiringLruCache<Entry>::find(std::uint64_t id,
                                                           Clock::time_point now) {
  drop_expired(now);
  const auto found = index_.find(id);
  if (found == index_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  const auto slot = found->second;
  // Only reachable if `now` went backwards for other entries; still never serve a stale one.
  if (expired(*slot, now)) {
    stats_.bytes -= slot->bytes;
    --stats_.entries;
    ++stats_.expirations;
    ++stats_.misses;
    recency_.erase(slot);
    index_.erase(found);
    return nullptr;
  }
  slot->last_used = now;
  recency_.splice(recency_.begin(), recency_, slot);
  ++stats_.hits;
  return slot->entry;
}

template <class Entry>
void ExpiringLruCache<Entry>::set_limits(std::size_t max_bytes, Clock::duration ttl,
                                         Clock::time_point now) {
  max_bytes_ = max_bytes;
  ttl_ = ttl;
  drop_expired(now);
  evict_for(0);
}

}  // namespace ctxguard::cache
