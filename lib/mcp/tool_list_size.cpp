#include "mcp/tool_list_size.hpp"

#include <algorithm>

#include <boost/json/array.hpp>

#include "budget/token_estimator.hpp"

namespace ctxguard::mcp {

namespace json = boost::json;

void ToolListSize::add_page(const json::object& result) {
  const json::value* tools = result.if_contains("tools");
  const json::array* list = tools != nullptr ? tools->if_array() : nullptr;
  if (list == nullptr) return;
  for (const json::value& tool : *list) {
    budget::TokenCounter counter;
    counter.add_json(tool);
    ++tools_;
    tokens_ += counter.tokens();
    bytes_ += counter.bytes();
    const json::object* object = tool.if_object();
    const json::value* name = object != nullptr ? object->if_contains("name") : nullptr;
    ToolSize size{.name = name != nullptr && name->is_string() ? std::string(name->get_string())
                                                               : std::string("?"),
                  .tokens = counter.tokens()};
    // Kept sorted, most first; equal sizes in the server's order.
    const auto at =
        std::upper_bound(largest_.begin(), largest_.end(), size,
                         [](const ToolSize& a, const ToolSize& b) { return a.tokens > b.tokens; });
    if (static_cast<std::size_t>(at - largest_.begin()) >= kLargestTools) continue;
    largest_.insert(at, std::move(size));
    if (largest_.size() > kLargestTools) largest_.pop_back();
  }
}

}  // namespace ctxguard::mcp
