#include "mcp/tool_catalog.hpp"

#include "support/text_scan.hpp"

#include <algorithm>
#include <cctype>

#include "support/json_pointer.hpp"

namespace ctxguard::mcp {

namespace json = boost::json;

namespace {

constexpr std::size_t kShortestStem = 3;
constexpr std::size_t kNameWeight = 3;

// Whether query word `word` finds `token`: one starts with the other, the shorter at least three
// letters long ("contact" finds "contacts"), or they are equal.
bool finds(std::string_view word, std::string_view token) {
  if (word == token) return true;
  const std::string_view shorter = word.size() < token.size() ? word : token;
  const std::string_view longer = word.size() < token.size() ? token : word;
  return shorter.size() >= kShortestStem && longer.starts_with(shorter);
}

bool finds_any(std::string_view word, const std::vector<std::string>& tokens) {
  return std::any_of(tokens.begin(), tokens.end(),
                     [word](const std::string& token) { return finds(word, token); });
}

}  // namespace

void ToolCatalog::add_page(const json::array& tools, bool first_page, bool last_page) {
  if (first_page) ++listing_;
  for (const json::value& value : tools) {
    const json::object* definition = value.if_object();
    if (definition == nullptr) continue;
    const std::string_view name = string_member(*definition, "name").value_or("");
    if (name.empty()) continue;
    Tool tool{std::string(name), *definition, text::words_of(name),
              text::words_of(string_member(*definition, "description").value_or("")), listing_};
    const auto [found, added] = index_.try_emplace(tool.name, tools_.size());
    if (added) {
      tools_.push_back(std::move(tool));
    } else {
      tools_[found->second] = std::move(tool);
    }
  }
  if (!last_page) return;
  std::erase_if(tools_, [this](const Tool& tool) { return tool.listing != listing_; });
  index_.clear();
  for (std::size_t i = 0; i < tools_.size(); ++i) index_.emplace(tools_[i].name, i);
}

const ToolCatalog::Tool* ToolCatalog::find(std::string_view name) const {
  const auto found = index_.find(std::string(name));
  return found != index_.end() ? &tools_[found->second] : nullptr;
}

std::vector<const ToolCatalog::Tool*> ToolCatalog::search(std::string_view query) const {
  std::vector<std::string> words = text::words_of(query);
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  struct Scored {
    const Tool* tool;
    std::size_t words_found;
    std::size_t score;
  };
  std::vector<Scored> found;
  for (const Tool& tool : tools_) {
    Scored scored{&tool, 0, 0};
    for (const std::string& word : words) {
      if (finds_any(word, tool.name_words)) {
        ++scored.words_found;
        scored.score += kNameWeight;
      } else if (finds_any(word, tool.description_words)) {
        ++scored.words_found;
        scored.score += 1;
      }
    }
    if (scored.words_found > 0) found.push_back(scored);
  }
  // Stable: among equals, the server's order.
  std::stable_sort(found.begin(), found.end(), [](const Scored& a, const Scored& b) {
    return a.words_found != b.words_found ? a.words_found > b.words_found : a.score > b.score;
  });
  std::vector<const Tool*> tools;
  tools.reserve(found.size());
  for (const Scored& scored : found) tools.push_back(scored.tool);
  return tools;
}

}  // namespace ctxguard::mcp
