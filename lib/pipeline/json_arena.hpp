#pragma once
// A monotonic memory resource that knows how many bytes it holds, so a cached result can be
// charged what it really costs (a parsed JSON document takes several times its text).

#include <cstddef>
#include <limits>

#include <boost/json/memory_resource.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/storage_ptr.hpp>

#include "support/json_reader.hpp"

namespace ctxguard::pipeline {

class JsonArena final : public boost::json::memory_resource {
 public:
  // Past `max_bytes` an allocation throws ctxguard::JsonMemoryLimit (parse_json's kJsonTooLarge):
  // a result is parsed to be kept in the cache, and one larger than the cache is not kept.
  explicit JsonArena(std::size_t max_bytes = std::numeric_limits<std::size_t>::max())
      : blocks_(max_bytes) {}

  // Bytes obtained from the system so far (blocks, not the values inside them).
  std::size_t bytes() const noexcept { return blocks_.bytes(); }

  // A value built on `storage()` must be destroyed before the arena: keep the shared_ptr
  // next to the value, declared before it.
  boost::json::storage_ptr storage() noexcept { return boost::json::storage_ptr(this); }

 private:
  void* do_allocate(std::size_t n, std::size_t align) override {
    return monotonic_.allocate(n, align);
  }
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  bool do_is_equal(const memory_resource& other) const noexcept override { return this == &other; }

  BoundedHeapResource blocks_;  // must outlive monotonic_
  boost::json::monotonic_resource monotonic_{64 << 10, &blocks_};
};

}  // namespace ctxguard::pipeline
