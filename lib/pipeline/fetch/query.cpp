#include "pipeline/fetch/query.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>

#include "support/double_chars.hpp"
#include "support/text_scan.hpp"

namespace ctxguard::pipeline {

namespace {

namespace json = boost::json;

// ASCII-only folding (text::lower): UTF-8 bytes (all >= 0x80) map to themselves, so non-ASCII
// text is compared byte for byte and a multi-byte character can never be split into a false match.
using text::lower;

std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lower(c);
  return out;
}

// `needle` is already lowered; `text` is folded as it is compared.
bool equals_folded(std::string_view text, std::string_view needle) {
  if (text.size() != needle.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (lower(text[i]) != needle[i]) return false;
  }
  return true;
}

// Candidates for the first byte, then the rest compared in place. Measured on values like the
// bench's (ids, names, e-mails, dates, a sentence): std::find_if, which libstdc++ unrolls, is
// ~1.5x faster than a plain byte loop or std::search with a folding predicate when the first
// byte is a letter; when it has no case, glibc's vectorised memchr is faster still.
bool contains_folded(std::string_view text, std::string_view needle) {
  if (needle.empty()) return true;
  if (needle.size() > text.size()) return false;
  const char first = needle.front();
  const bool has_case = first >= 'a' && first <= 'z';
  const char* const end = text.data() + (text.size() - needle.size()) + 1;  // last start + 1
  for (const char* p = text.data();; ++p) {
    if (has_case) {
      p = std::find_if(p, end, [first](char c) { return lower(c) == first; });
      if (p == end) return false;
    } else {
      p = static_cast<const char*>(std::memchr(p, first, static_cast<std::size_t>(end - p)));
      if (p == nullptr) return false;
    }
    std::size_t i = 1;
    while (i < needle.size() && lower(p[i]) == needle[i]) ++i;
    if (i == needle.size()) return true;
  }
}

// The JSON text write_json_scalar gives a number, boolean or null, without allocating; a string's
// text is its decoded value (what the model reads, not the escaped form).
class ScalarText {
 public:
  std::string_view of(const json::value& scalar) {
    switch (scalar.kind()) {
      case json::kind::string:
        return scalar.get_string();
      case json::kind::bool_:
        return scalar.get_bool() ? "true" : "false";
      case json::kind::null:
        return "null";
      case json::kind::int64:
        return written(
            std::to_chars(buffer_.data(), buffer_.data() + buffer_.size(), scalar.get_int64()));
      case json::kind::uint64:
        return written(
            std::to_chars(buffer_.data(), buffer_.data() + buffer_.size(), scalar.get_uint64()));
      case json::kind::double_:
        return of_double(scalar.get_double());
      case json::kind::array:
      case json::kind::object:
        break;
    }
    return {};
  }

 private:
  std::string_view written(std::to_chars_result result) {
    return {buffer_.data(), static_cast<std::size_t>(result.ptr - buffer_.data())};
  }

  // Mirrors write_double in json_writer.cpp (the query tests pin the two together).
  std::string_view of_double(double number) {
    if (std::isinf(number)) return number > 0 ? "1e999" : "-1e999";
    if (std::isnan(number)) return "null";
    const std::string_view text =
        format_double(number, std::span(buffer_).first<kMaxDoubleChars>());
    if (text.find_first_of(".e") != std::string_view::npos) return text;
    buffer_[text.size()] = '.';
    buffer_[text.size() + 1] = '0';
    return {buffer_.data(), text.size() + 2};
  }

  std::array<char, 40> buffer_{};
};

bool is_number(const json::value& value) {
  return value.is_int64() || value.is_uint64() || value.is_double();
}

// Which scalar kinds a needle can occur in at all: most words contain letters no number's text
// has, and skipping the number formatting is most of the cost of a miss over numeric fields.
struct Needle {
  std::string_view text;
  bool in_numbers = true;
};

Needle make_needle(std::string_view text) {
  Needle needle{text, true};
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e')) {
      needle.in_numbers = false;
      break;
    }
  }
  return needle;
}

bool anywhere(const json::value& value, const Needle& needle) {
  switch (value.kind()) {
    case json::kind::string:
      return contains_folded(value.get_string(), needle.text);
    case json::kind::object:
      for (const json::key_value_pair& member : value.get_object()) {
        if (anywhere(member.value(), needle)) return true;
      }
      return false;
    case json::kind::array:
      for (const json::value& element : value.get_array()) {
        if (anywhere(element, needle)) return true;
      }
      return false;
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      if (!needle.in_numbers) return false;
      [[fallthrough]];
    case json::kind::bool_:
    case json::kind::null: {
      ScalarText text;
      return contains_folded(text.of(value), needle.text);
    }
  }
  return false;
}

// Calls `visit` on every value the path reaches from `value` until one returns true. Arrays,
// met on the way or at the end, fan out to their elements (arrays of arrays too).
template <class Visit>
bool reach(const json::value& value, std::span<const std::string> path, const Visit& visit) {
  if (const json::array* array = value.if_array()) {
    for (const json::value& element : *array) {
      if (reach(element, path, visit)) return true;
    }
    return false;
  }
  if (path.empty()) return visit(value);
  const json::object* object = value.if_object();
  if (object == nullptr) return false;
  const json::value* child = object->if_contains(path.front());
  if (child == nullptr) return false;
  return reach(*child, path.subspan(1), visit);
}

bool scalar_equals(const json::value& value, std::string_view needle) {
  if (value.is_object()) return false;
  // A number's text starts with a digit or '-': skip formatting when the needle cannot be one.
  if (is_number(value) &&
      !(needle.front() == '-' || (needle.front() >= '0' && needle.front() <= '9'))) {
    return false;
  }
  ScalarText text;
  return equals_folded(text.of(value), needle);
}

bool term_matches(const Query::Term& term, const json::value& item) {
  if (term.op == Query::Op::kAnywhere) return anywhere(item, make_needle(term.value));
  // Field terms look into objects only: other items have no fields, so nothing is reached.
  const bool is_object = item.is_object();
  switch (term.op) {
    case Query::Op::kEquals:
      return is_object && reach(item, term.field, [&](const json::value& value) {
               return scalar_equals(value, term.value);
             });
    case Query::Op::kNotEquals:
      return !is_object || !reach(item, term.field, [&](const json::value& value) {
        return scalar_equals(value, term.value);
      });
    case Query::Op::kContains: {
      const Needle needle = make_needle(term.value);
      // An object reached contains the text when any scalar inside it does.
      return is_object && reach(item, term.field,
                                [&](const json::value& value) { return anywhere(value, needle); });
    }
    case Query::Op::kAnywhere:
      break;
  }
  return false;
}

// The term as quoted in an error message, on one line.
std::string quoted_term(std::string_view raw) {
  std::string out = "\"";
  for (const char c : raw) out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  out += '"';
  return out;
}

// Reads one term of a query from `text` at `at` (past the spaces before it): field steps and an
// operator then a value, or a bare word or phrase. Quotes group; \" and \\ escape inside them.
class TermReader {
 public:
  TermReader(std::string_view text, std::size_t& at) : text_(text), i_(at), start_(at) {}

  Checked<Query::Term> read() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (in_quotes_) {
        read_quoted(c);
        continue;
      }
      if (text::is_blank_byte(c)) break;
      if (c == '"' && quote_may_open_) {
        in_quotes_ = true;
        quote_may_open_ = false;
        ++i_;
        continue;
      }
      quote_may_open_ = false;
      if (!has_op_ && read_operator(c)) continue;
      written_ += c;
      part_ += c;
      ++i_;
    }
    return finish();
  }

 private:
  void read_quoted(char c) {
    if (c == '\\' && i_ + 1 < text_.size() && (text_[i_ + 1] == '"' || text_[i_ + 1] == '\\')) {
      written_ += text_[i_ + 1];
      part_ += text_[i_ + 1];
      i_ += 2;
    } else if (c == '"') {
      in_quotes_ = false;
      ++i_;
    } else {
      written_ += c;
      part_ += c;
      ++i_;
    }
  }

  // An operator (=, !=, ~) or a field path step (.); false when `c` is neither.
  bool read_operator(char c) {
    std::size_t op_size = 1;
    std::optional<Query::Op> op;
    if (c == '!' && i_ + 1 < text_.size() && text_[i_ + 1] == '=') {
      op = Query::Op::kNotEquals;
      op_size = 2;
    } else if (c == '=') {
      op = Query::Op::kEquals;
    } else if (c == '~') {
      op = Query::Op::kContains;
    } else if (c != '.') {
      return false;
    }
    // A field step, or the last one before the operator; a bare word simply keeps its dot in
    // `written_`.
    empty_segment_ = empty_segment_ || part_.empty();
    term_.field.push_back(std::move(part_));
    part_.clear();
    quote_may_open_ = true;
    if (op) {
      term_.op = *op;
      has_op_ = true;
    }
    written_.append(text_.substr(i_, op_size));
    i_ += op_size;
    return true;
  }

  Checked<Query::Term> finish() {
    if (in_quotes_) {
      return Problem{
          "A quote is not closed in the query: close it, and write \\\" for a quote inside "
          "quotes."};
    }
    const auto raw = [this] { return quoted_term(text_.substr(start_, i_ - start_)); };
    if (has_op_) {
      if (empty_segment_ || part_.empty()) {
        return Problem{"The term " + raw() +
                       " has an empty field or value: write field=value, field~text or "
                       "field!=value, or put the term in double quotes to look for it as text."};
      }
      term_.value = lowered(part_);
    } else {
      if (written_.empty()) {
        return Problem{
            "The term " + raw() +
            " is empty: put a word or phrase between the quotes, or leave the term out."};
      }
      term_.field.clear();
      term_.value = lowered(written_);
    }
    term_.text = lowered(written_);
    return std::move(term_);
  }

  std::string_view text_;
  std::size_t& i_;
  std::size_t start_;
  Query::Term term_;
  std::string written_;  // the term without its quote marks, for line matching and words
  std::string part_;     // the current field segment, then the value
  bool in_quotes_ = false;
  bool quote_may_open_ = true;  // at the start of the term, a field segment or the value
  bool has_op_ = false;
  bool empty_segment_ = false;
};

}  // namespace

Checked<Query> Query::parse(std::string_view text) {
  if (text.size() > kMaxQueryBytes) {
    return Problem{"The query is longer than " + std::to_string(kMaxQueryBytes) +
                   " bytes: shorten it to the few words or field terms that matter."};
  }
  Query query;
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && text::is_blank_byte(text[i])) ++i;
    if (i == text.size()) break;
    if (query.terms_.size() == kMaxQueryTerms) {
      return Problem{"The query has more than " + std::to_string(kMaxQueryTerms) +
                     " terms: use at most " + std::to_string(kMaxQueryTerms) +
                     " (a phrase in double quotes counts as one term)."};
    }
    auto term = TermReader(text, i).read();
    if (!term) return term.error();
    query.terms_.push_back(*std::move(term));
  }
  if (query.terms_.empty()) {
    return Problem{"The query is empty: give one or more words or field=value terms."};
  }
  return query;
}

bool Query::matches(const boost::json::value& item) const {
  for (const Term& term : terms_) {
    if (!term_matches(term, item)) return false;
  }
  return true;
}

bool Query::matches_line(std::string_view line) const {
  for (const Term& term : terms_) {
    if (!contains_folded(line, term.text)) return false;
  }
  return true;
}

}  // namespace ctxguard::pipeline
