#pragma once
// `ctxguard_fetch {cursor, query}`: finding items or lines in a cached result without paging.
//
// A query is up to 16 terms separated by spaces; an item (or line) matches when every term does.
//   word           the word appears (ASCII case-insensitive) in any scalar value of the item, at
//                  any depth (strings as they read, numbers/booleans/null as their JSON text)
//   field=value    the field's value equals `value` (strings ASCII case-insensitively; other
//                  scalars by their JSON text: count=3, done=true, x=null)
//   field~text     the field's value contains `text` (ASCII case-insensitive)
//   field!=value   the field is missing or its value does not equal `value`
// `field` is a key, dotted for nested objects ("guest.name"); when it leads to an array, any
// element matching is enough. Double quotes group a term with spaces: status="in progress",
// "connection refused". Over text, every term is a plain substring of the line (field syntax is
// read as text). Pure, allocation-free matching (the query is lowered once), no exceptions
// except std::bad_alloc.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "support/error.hpp"

namespace ctxguard::pipeline {

inline constexpr std::size_t kMaxQueryBytes = 1024;
inline constexpr std::size_t kMaxQueryTerms = 16;

class Query {
 public:
  enum class Op { kAnywhere, kEquals, kNotEquals, kContains };
  struct Term {
    Op op = Op::kAnywhere;
    std::vector<std::string> field;  // the dotted path, split; empty for kAnywhere
    std::string value;               // lowered (ASCII)
    std::string text;                // the term as written (for line matching), lowered
  };

  // The query, or a one-line message the model can act on ("The query is empty.", "A quote is
  // not closed in the query.", longer than kMaxQueryBytes, more than kMaxQueryTerms terms, a
  // term with an empty field or value such as "=x").
  static Checked<Query> parse(std::string_view text);

  bool matches(const boost::json::value& item) const;
  bool matches_line(std::string_view line) const;

  const std::vector<Term>& terms() const { return terms_; }

 private:
  std::vector<Term> terms_;
};

}  // namespace ctxguard::pipeline
