#include "cache/expiring_lru_cache.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using Cache = ctxguard::cache::ExpiringLruCache<std::string>;
using Clock = Cache::Clock;
using namespace std::chrono_literals;

namespace {

const Clock::time_point kStart = Clock::time_point{} + 1000h;
constexpr Clock::duration kTtl = 10s;

std::shared_ptr<const std::string> text(std::string value) {
  return std::make_shared<const std::string>(std::move(value));
}

// Whether `id` is present, without refreshing it: a find at the same instant it was last used
// would refresh it, so the tests below probe at chosen times on purpose and check stats instead.
std::optional<std::string> value_of(Cache& cache, std::uint64_t id, Clock::time_point now) {
  auto entry = cache.find(id, now);
  if (!entry) return std::nullopt;
  return *entry;
}

}  // namespace

TEST_CASE("cache: ids start at 1 and increase, and find returns the stored entry") {
  Cache cache(1000, kTtl);
  const auto first = cache.insert(text("a"), 10, kStart);
  const auto second = cache.insert(text("b"), 10, kStart);
  CHECK(first == 1);
  CHECK(second == 2);
  CHECK(value_of(cache, first, kStart) == "a");
  CHECK(value_of(cache, second, kStart) == "b");
  CHECK(cache.stats().hits == 2);
}

TEST_CASE("cache: unknown ids and id 0 are misses") {
  Cache cache(1000, kTtl);
  cache.insert(text("a"), 10, kStart);
  CHECK(cache.find(0, kStart) == nullptr);
  CHECK(cache.find(2, kStart) == nullptr);
  CHECK(cache.find(~std::uint64_t{0}, kStart) == nullptr);
  CHECK(cache.stats().misses == 3);
  CHECK(cache.stats().hits == 0);
}

TEST_CASE("cache: an entry is alive exactly ttl after its last use and gone just after") {
  Cache cache(1000, kTtl);
  const auto at_boundary = cache.insert(text("a"), 10, kStart);
  CHECK(value_of(cache, at_boundary, kStart + kTtl) == "a");

  Cache other(1000, kTtl);
  const auto past_boundary = other.insert(text("b"), 10, kStart);
  CHECK(other.find(past_boundary, kStart + kTtl + 1ns) == nullptr);
  CHECK(other.stats().expirations == 1);
  CHECK(other.stats().misses == 1);
  CHECK(other.stats().entries == 0);
  CHECK(other.stats().bytes == 0);
}

TEST_CASE("cache: find refreshes the ttl") {
  Cache cache(1000, kTtl);
  const auto id = cache.insert(text("a"), 10, kStart);
  CHECK(value_of(cache, id, kStart + 8s) == "a");
  CHECK(value_of(cache, id, kStart + 16s) == "a");  // 16 s after insert, 8 s after last use
  CHECK(value_of(cache, id, kStart + 26s) == "a");  // exactly ttl after the last use
  CHECK(cache.find(id, kStart + 36s + 1ns) == nullptr);
  CHECK(cache.stats().hits == 3);
  CHECK(cache.stats().expirations == 1);
}

TEST_CASE("cache: expired entries are dropped lazily on insert, freeing their bytes") {
  Cache cache(100, kTtl);
  cache.insert(text("a"), 60, kStart);
  cache.insert(text("b"), 30, kStart + 5s);
  CHECK(cache.stats().bytes == 90);
  // At +12 s "a" has expired (12 s > ttl) but "b" has not: "a" goes as an expiration, so the
  // new entry fits without evicting "b".
  const auto c = cache.insert(text("c"), 60, kStart + 12s);
  CHECK(c == 3);
  CHECK(cache.stats().expirations == 1);
  CHECK(cache.stats().evictions == 0);
  CHECK(cache.stats().entries == 2);
  CHECK(cache.stats().bytes == 90);
  CHECK(value_of(cache, 2, kStart + 12s) == "b");
}

TEST_CASE("cache: the least recently used entries are evicted first") {
  Cache cache(300, kTtl);
  const auto a = cache.insert(text("a"), 100, kStart);
  const auto b = cache.insert(text("b"), 100, kStart);
  const auto c = cache.insert(text("c"), 100, kStart);
  const auto d = cache.insert(text("d"), 100, kStart);  // evicts a
  CHECK(cache.stats().evictions == 1);
  const auto e = cache.insert(text("e"), 200, kStart);  // evicts b and c
  CHECK(cache.stats().evictions == 3);
  CHECK(cache.find(a, kStart) == nullptr);
  CHECK(cache.find(b, kStart) == nullptr);
  CHECK(cache.find(c, kStart) == nullptr);
  CHECK(value_of(cache, d, kStart) == "d");
  CHECK(value_of(cache, e, kStart) == "e");
}

TEST_CASE("cache: find makes an entry the most recently used") {
  Cache cache(300, kTtl);
  const auto a = cache.insert(text("a"), 100, kStart);
  const auto b = cache.insert(text("b"), 100, kStart + 1s);
  const auto c = cache.insert(text("c"), 100, kStart + 2s);
  REQUIRE(cache.find(a, kStart + 3s) != nullptr);
  cache.insert(text("d"), 100, kStart + 4s);  // b is now the least recently used
  CHECK(cache.find(b, kStart + 4s) == nullptr);
  CHECK(value_of(cache, a, kStart + 4s) == "a");
  CHECK(value_of(cache, c, kStart + 4s) == "c");
}

TEST_CASE("cache: stats account for every charged byte") {
  Cache cache(1000, kTtl);
  cache.insert(text("a"), 300, kStart);
  cache.insert(text("b"), 200, kStart);
  cache.insert(text("empty"), 0, kStart);
  CHECK(cache.stats().entries == 3);
  CHECK(cache.stats().bytes == 500);
  cache.insert(text("c"), 700, kStart);  // evicts a (300) only: 200 + 0 + 700 fits
  CHECK(cache.stats().entries == 3);
  CHECK(cache.stats().bytes == 900);
  CHECK(cache.stats().evictions == 1);
  cache.find(1, kStart + kTtl + 1ns);  // everything has expired
  CHECK(cache.stats().entries == 0);
  CHECK(cache.stats().bytes == 0);
  CHECK(cache.stats().expirations == 3);
}

TEST_CASE("cache: an entry larger than max_bytes is rejected and evicts nothing") {
  Cache cache(100, kTtl);
  const auto a = cache.insert(text("a"), 60, kStart);
  CHECK(cache.insert(text("huge"), 101, kStart) == 0);
  CHECK(cache.stats().rejected == 1);
  CHECK(cache.stats().evictions == 0);
  CHECK(cache.stats().entries == 1);
  CHECK(cache.stats().bytes == 60);
  CHECK(value_of(cache, a, kStart) == "a");
  // Exactly max_bytes fits, at the cost of everything else.
  const auto full = cache.insert(text("full"), 100, kStart);
  CHECK(full == 2);
  CHECK(cache.stats().evictions == 1);
  CHECK(cache.stats().bytes == 100);
}

TEST_CASE("cache: a zero max_bytes stores only zero-byte entries") {
  Cache cache(0, kTtl);
  CHECK(cache.insert(text("a"), 1, kStart) == 0);
  const auto empty = cache.insert(text("empty"), 0, kStart);
  CHECK(empty == 1);
  CHECK(value_of(cache, empty, kStart) == "empty");
}

TEST_CASE("cache: shrinking max_bytes evicts least recently used entries at once") {
  Cache cache(1000, kTtl);
  const auto a = cache.insert(text("a"), 300, kStart);
  const auto b = cache.insert(text("b"), 300, kStart);
  const auto c = cache.insert(text("c"), 300, kStart);
  cache.set_limits(650, kTtl, kStart);
  CHECK(cache.stats().evictions == 1);
  CHECK(cache.stats().bytes == 600);
  cache.set_limits(300, kTtl, kStart);
  CHECK(cache.stats().evictions == 2);
  CHECK(cache.stats().bytes == 300);
  CHECK(cache.find(a, kStart) == nullptr);
  CHECK(cache.find(b, kStart) == nullptr);
  CHECK(value_of(cache, c, kStart) == "c");
  // Growing again evicts nothing and lets bigger entries in.
  cache.set_limits(2000, kTtl, kStart);
  CHECK(cache.stats().evictions == 2);
  CHECK(cache.insert(text("d"), 1500, kStart) == 4);
}

TEST_CASE("cache: shortening the ttl expires entries at once") {
  Cache cache(1000, kTtl);
  const auto old_entry = cache.insert(text("old"), 10, kStart);
  const auto new_entry = cache.insert(text("new"), 10, kStart + 5s);
  cache.set_limits(1000, 3s, kStart + 6s);
  CHECK(cache.stats().expirations == 1);
  CHECK(cache.stats().entries == 1);
  CHECK(cache.find(old_entry, kStart + 6s) == nullptr);
  CHECK(value_of(cache, new_entry, kStart + 6s) == "new");
  CHECK(cache.find(new_entry, kStart + 9s + 1ns) == nullptr);
}

TEST_CASE("cache: a handed-out entry stays valid after it is evicted or expires") {
  Cache cache(100, kTtl);
  const auto id = cache.insert(text("kept by the caller"), 100, kStart);
  const auto held = cache.find(id, kStart);
  REQUIRE(held != nullptr);
  cache.insert(text("evicts it"), 100, kStart);
  CHECK(cache.find(id, kStart) == nullptr);
  CHECK(*held == "kept by the caller");
  CHECK(held.use_count() == 1);

  const auto second = cache.insert(text("expires"), 10, kStart);
  const auto also_held = cache.find(second, kStart);
  CHECK(cache.find(second, kStart + kTtl + 1s) == nullptr);
  CHECK(*also_held == "expires");
}

TEST_CASE("cache: ids are never reused after eviction, expiry or rejection") {
  Cache cache(100, kTtl);
  std::uint64_t last = 0;
  auto now = kStart;
  for (int round = 0; round < 200; ++round) {
    const std::size_t bytes = static_cast<std::size_t>(round % 7) * 20;  // 120 is rejected
    const auto id = cache.insert(text("x"), bytes, now);
    if (bytes > 100) {
      CHECK(id == 0);
    } else {
      CHECK(id == last + 1);
      last = id;
    }
    now += (round % 5 == 0) ? kTtl + 1s : 1s;
  }
  CHECK(cache.stats().rejected > 0);
  CHECK(cache.stats().evictions > 0);
  CHECK(cache.stats().expirations > 0);
}

TEST_CASE("cache: a stale entry is never served, even when time went backwards for others") {
  Cache cache(1000, kTtl);
  cache.insert(text("later"), 10, kStart + 20s);
  const auto earlier = cache.insert(text("earlier"), 10, kStart);  // a clock that stepped back
  // The cold end ("later") is fresh, so the lazy sweep stops there; "earlier" is still stale.
  CHECK(cache.find(earlier, kStart + 15s) == nullptr);
  CHECK(cache.stats().expirations == 1);
  CHECK(cache.stats().entries == 1);
  CHECK(cache.stats().bytes == 10);
}

namespace {

// The obvious, slow cache: a vector in recency order, full scans everywhere.
class ReferenceCache {
 public:
  struct Item {
    std::uint64_t id = 0;
    std::size_t bytes = 0;
    Clock::time_point last_used{};
  };

  ReferenceCache(std::size_t max_bytes, Clock::duration ttl) : max_bytes_(max_bytes), ttl_(ttl) {}

  std::uint64_t insert(std::size_t bytes, Clock::time_point now) {
    expire(now);
    if (bytes > max_bytes_) {
      ++stats.rejected;
      return 0;
    }
    while (total() + bytes > max_bytes_) evict();
    items_.insert(items_.begin(), Item{next_id_, bytes, now});
    return next_id_++;
  }

  bool find(std::uint64_t id, Clock::time_point now) {
    expire(now);
    auto found = std::find_if(items_.begin(), items_.end(), [&](auto& i) { return i.id == id; });
    if (found == items_.end()) {
      ++stats.misses;
      return false;
    }
    Item item = *found;
    item.last_used = now;
    items_.erase(found);
    items_.insert(items_.begin(), item);
    ++stats.hits;
    return true;
  }

  void set_limits(std::size_t max_bytes, Clock::duration ttl, Clock::time_point now) {
    max_bytes_ = max_bytes;
    ttl_ = ttl;
    expire(now);
    while (total() > max_bytes_) evict();
  }

  std::size_t total() const {
    std::size_t sum = 0;
    for (const auto& item : items_) sum += item.bytes;
    return sum;
  }
  std::size_t size() const { return items_.size(); }

  ctxguard::cache::CacheStats stats;

 private:
  void expire(Clock::time_point now) {
    const auto before = items_.size();
    std::erase_if(items_, [&](const Item& item) { return now - item.last_used > ttl_; });
    stats.expirations += before - items_.size();
  }
  void evict() {
    items_.pop_back();
    ++stats.evictions;
  }

  std::size_t max_bytes_;
  Clock::duration ttl_;
  std::uint64_t next_id_ = 1;
  std::vector<Item> items_;
};

}  // namespace

TEST_CASE("cache: a random operation sequence matches a simple reference model") {
  for (const unsigned seed : {1u, 2u, 3u, 42u, 20240611u}) {
    CAPTURE(seed);
    std::mt19937 random(seed);
    const auto pick = [&](std::uint64_t low, std::uint64_t high) {
      return std::uniform_int_distribution<std::uint64_t>(low, high)(random);
    };
    Cache cache(1000, kTtl);
    ReferenceCache model(1000, kTtl);
    auto now = kStart;
    std::uint64_t issued = 0;

    for (int step = 0; step < 5000; ++step) {
      CAPTURE(step);
      now += std::chrono::milliseconds(pick(0, 1500));
      const auto operation = pick(0, 99);
      if (operation < 45) {
        const auto bytes = static_cast<std::size_t>(pick(0, 400));
        const std::uint64_t id = cache.insert(text(std::to_string(issued + 1)), bytes, now);
        REQUIRE(id == model.insert(bytes, now));
        if (id != 0) issued = id;
      } else if (operation < 97) {
        // Mostly recent ids (likely alive), sometimes any id ever issued, 0 or the next one.
        const std::uint64_t oldest = pick(0, 3) != 0 && issued > 8 ? issued - 8 : 0;
        const std::uint64_t id = pick(oldest, issued + 1);
        const auto entry = cache.find(id, now);
        REQUIRE((entry != nullptr) == model.find(id, now));
        if (entry) REQUIRE(*entry == std::to_string(id));
      } else {
        const auto max_bytes = static_cast<std::size_t>(pick(0, 2000));
        const auto ttl = std::chrono::milliseconds(pick(0, 20'000));
        cache.set_limits(max_bytes, ttl, now);
        model.set_limits(max_bytes, ttl, now);
      }
      const auto& stats = cache.stats();
      REQUIRE(stats.entries == model.size());
      REQUIRE(stats.bytes == model.total());
      REQUIRE(stats.hits == model.stats.hits);
      REQUIRE(stats.misses == model.stats.misses);
      REQUIRE(stats.evictions == model.stats.evictions);
      REQUIRE(stats.expirations == model.stats.expirations);
      REQUIRE(stats.rejected == model.stats.rejected);
    }
    CHECK(cache.stats().hits > 100);
    CHECK(cache.stats().evictions > 100);
    CHECK(cache.stats().expirations > 100);
    CHECK(cache.stats().rejected > 10);
  }
}

TEST_CASE("cache: a reserved id is found only once committed, and evicts nothing before") {
  Cache cache(100, kTtl);
  const auto a = cache.insert(text("a"), 80, kStart);
  const auto reserved = cache.reserve(50);
  CHECK(reserved == a + 1);
  CHECK_FALSE(cache.find(reserved, kStart));
  CHECK(cache.stats().entries == 1);  // a is still there: reserving evicts nothing
  CHECK(cache.stats().evictions == 0);
  // Inserts and reservations draw from one sequence of ids.
  const auto b = cache.insert(text("b"), 10, kStart);
  CHECK(b == reserved + 1);
  REQUIRE(cache.commit(reserved, text("r"), 50, kStart));
  CHECK(value_of(cache, reserved, kStart) == "r");
  CHECK(cache.stats().evictions == 1);  // a (80) made room for the committed 50
  CHECK(cache.stats().bytes == 60);
}

TEST_CASE("cache: a reservation too large is refused and counted; commits are checked") {
  Cache cache(100, kTtl);
  CHECK(cache.reserve(101) == 0);
  CHECK(cache.stats().rejected == 1);
  const auto id = cache.reserve(40);
  CHECK_FALSE(cache.commit(id + 1, text("never reserved"), 10, kStart));
  CHECK_FALSE(cache.commit(0, text("no id"), 10, kStart));
  REQUIRE(cache.commit(id, text("x"), 40, kStart));
  CHECK_FALSE(cache.commit(id, text("twice"), 40, kStart));
  CHECK(cache.stats().entries == 1);
  CHECK(value_of(cache, id, kStart) == "x");
  // Limits lowered between the two steps: the commit is refused like an insert would be.
  const auto late = cache.reserve(60);
  cache.set_limits(50, kTtl, kStart);
  CHECK_FALSE(cache.commit(late, text("late"), 60, kStart));
  CHECK(cache.stats().rejected == 2);
}

TEST_CASE("cache: an id reserved and never committed costs nothing") {
  Cache cache(100, kTtl);
  for (int i = 0; i < 1000; ++i) cache.reserve(100);
  CHECK(cache.stats().entries == 0);
  CHECK(cache.stats().bytes == 0);
  const auto a = cache.insert(text("a"), 100, kStart);
  CHECK(a == 1001);
  CHECK(value_of(cache, a, kStart) == "a");
}
