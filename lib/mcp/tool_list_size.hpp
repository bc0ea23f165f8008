#pragma once
// What a server's tools take in the model's context before it reads a single result: the size of
// a tools/list (all its pages) and of the instructions (docs/protocol.md section 4.1). Measured on
// every listing, in both directions: as the server sent it and as the client got it.

#include <cstddef>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

namespace ctxguard::mcp {

struct ToolSize {
  std::string name;
  std::size_t tokens = 0;
};

// The tools of a listing, page by page.
class ToolListSize {
 public:
  // The costliest tools kept, most first.
  static constexpr std::size_t kLargestTools = 5;

  // Adds a page (a tools/list result): each tool's estimated tokens and bytes, as minified JSON.
  void add_page(const boost::json::object& result);

  std::size_t tools() const { return tools_; }
  std::size_t bytes() const { return bytes_; }
  std::size_t tokens() const { return tokens_; }
  const std::vector<ToolSize>& largest() const { return largest_; }

 private:
  std::size_t tools_ = 0;
  std::size_t bytes_ = 0;
  std::size_t tokens_ = 0;
  std::vector<ToolSize> largest_;
};

}  // namespace ctxguard::mcp
