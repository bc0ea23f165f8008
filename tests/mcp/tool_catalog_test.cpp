#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "mcp/tool_catalog.hpp"
#include "support/text_scan.hpp"

namespace json = boost::json;
using ctxguard::mcp::ToolCatalog;
using ctxguard::text::words_of;

namespace {

json::object tool(const char* name, const char* description) {
  return json::object{{"name", name}, {"description", description}};
}

std::vector<std::string> names(const std::vector<const ToolCatalog::Tool*>& found) {
  std::vector<std::string> out;
  for (const auto* each : found) out.push_back(each->name);
  return out;
}

}  // namespace

TEST_CASE("words: lowercase, split at punctuation, at camelCase and after acronyms") {
  CHECK(words_of("listContacts crm_get-ID v2.0") ==
        std::vector<std::string>{"list", "contacts", "crm", "get", "id", "v2", "0"});
  CHECK(words_of("HTTPStatus v2Name") == std::vector<std::string>{"http", "status", "v2", "name"});
  // Words of other scripts stay whole; ASCII punctuation still separates them.
  CHECK(words_of("検索ツール, Grüße") == std::vector<std::string>{"検索ツール", "grüße"});
  CHECK(words_of("").empty());
}

TEST_CASE("catalog: pages add up; the last page of a listing drops what it did not name") {
  ToolCatalog catalog;
  catalog.add_page(json::array{tool("a", "first"), tool("b", "second")}, true, false);
  CHECK(catalog.size() == 2);
  catalog.add_page(json::array{tool("c", "third"), json::value(5), json::object{}}, false, true);
  CHECK(catalog.size() == 3);
  REQUIRE(catalog.find("c") != nullptr);
  CHECK(catalog.find("c")->definition.at("description") == "third");

  catalog.add_page(json::array{tool("b", "second, changed")}, true, true);
  CHECK(catalog.size() == 1);
  CHECK(catalog.find("a") == nullptr);
  CHECK(catalog.find("b")->definition.at("description") == "second, changed");
}

TEST_CASE("catalog search: names count more than descriptions; more words found rank first") {
  ToolCatalog catalog;
  catalog.add_page(json::array{tool("crm_list_contacts", "Lists the contacts."),
                               tool("billing_create_invoice", "Creates an invoice for a contact."),
                               tool("crm_create_contact", "Creates a contact."),
                               tool("storage_upload", "Uploads a file.")},
                   true, true);
  CHECK(names(catalog.search("create contact")) ==
        std::vector<std::string>{"crm_create_contact", "billing_create_invoice",
                                 "crm_list_contacts"});
  CHECK(names(catalog.search("contacts")).front() == "crm_list_contacts");
  CHECK(names(catalog.search("upload")) == std::vector<std::string>{"storage_upload"});
  CHECK(catalog.search("nothing matches").empty());
  CHECK(catalog.search("  ").empty());
  CHECK(catalog.search("up").empty());  // a word under three letters finds only itself
}
