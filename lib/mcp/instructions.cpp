#include "mcp/instructions.hpp"

#include <fmt/format.h>

namespace ctxguard::mcp {

std::string instructions_paragraph(std::string_view fetch_tool, const ListingNotes& notes) {
  std::string paragraph;
  if (notes.mode == config::ToolListMode::kLazy) {
    paragraph = fmt::format(
        "This server's tools are not listed, to save context: find them with `{}` (by words) "
        "and run them with `{}`. ",
        notes.search_tool, notes.call_tool);
  }
  paragraph += fmt::format(
      "Tool results pass through ctxguard, which keeps each one within a token budget. A long "
      "result may come back shortened, with a `_ctxguard` object saying what was cut. To read "
      "more, call `{0}` with `cursor` set to `_ctxguard.nextCursor`; it answers from a cache, "
      "without running the tool again. Add `limit` for fewer items per page or `fields` to keep "
      "only some keys. A cursor expires after a while: then call the original tool again.",
      fetch_tool);
  if (notes.mode == config::ToolListMode::kCompact) {
    paragraph += fmt::format(
        " A tool description ending in \"…\" is shortened: `{}` with {{\"tool\": NAME}} gives "
        "it in full.",
        fetch_tool);
  }
  if (!notes.shared_guidance.empty()) {
    paragraph += "\n\nSaid once here instead of in each tool's description:";
    for (const std::string& sentence : notes.shared_guidance) paragraph += " " + sentence;
  }
  if (!notes.shared_parameters.empty()) {
    paragraph += "\n\nParameters described once here instead of in each tool's input schema:";
    for (const SharedParameter& parameter : notes.shared_parameters) {
      paragraph += fmt::format(" `{}`: {}", parameter.name, parameter.description);
    }
  }
  return paragraph;
}

bool add_instructions(boost::json::object& result, std::string_view fetch_tool,
                      const ListingNotes& notes) {
  std::string text = instructions_paragraph(fetch_tool, notes);
  if (boost::json::value* existing = result.if_contains("instructions")) {
    const boost::json::string* own = existing->if_string();
    if (own == nullptr) return false;
    if (!own->empty()) {
      text += "\n\n";
      text.append(own->data(), own->size());
    }
  }
  result["instructions"] = text;
  return true;
}

}  // namespace ctxguard::mcp
