#pragma once
// The server's tools as it listed them last, in its order (docs/protocol.md 4.2):
// ctxguard_fetch {"tool": NAME} reads a definition here, and in `toolList: lazy` the search and
// call tools stand on it. Definitions are kept as the server sent them.
//
// A listing may come in pages: each page's tools are added (a tool listed again replaces its
// earlier definition), and when the last page of a listing has come, the tools that listing did
// not name are gone. A listing the client stops paging through keeps what it has seen.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace ctxguard::mcp {

class ToolCatalog {
 public:
  struct Tool {
    std::string name;
    boost::json::object definition;
    std::vector<std::string> name_words;         // lowercase, split at _ - . / and camelCase
    std::vector<std::string> description_words;  // lowercase
    std::size_t listing = 0;                     // the listing that named it last
  };

  // Adds one page of a listing; `first_page`: a new listing starts; `last_page`: it ends.
  void add_page(const boost::json::array& tools, bool first_page, bool last_page);

  const Tool* find(std::string_view name) const;
  const std::vector<Tool>& tools() const { return tools_; }
  std::size_t size() const { return tools_.size(); }

  // The tools `query`'s words find, best first: a word finds a tool when one of the tool's words
  // starts with it or it starts with one (of three letters or more); more words found rank
  // higher, and a word in the name counts three times one in the description. Tools none of the
  // words find are left out; an empty query finds none.
  std::vector<const Tool*> search(std::string_view query) const;

 private:
  std::vector<Tool> tools_;
  std::unordered_map<std::string, std::size_t> index_;  // name -> position in tools_
  std::size_t listing_ = 0;
};

}  // namespace ctxguard::mcp
