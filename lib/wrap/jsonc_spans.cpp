#include "wrap/jsonc_spans.hpp"

#include "support/json_reader.hpp"

namespace ctxguard::wrap {

namespace {

constexpr int kMaxDepth = 1024;

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  std::optional<JsonSpans> document() {
    JsonSpans root;
    if (!value(root, 0)) return std::nullopt;
    skip_blanks();
    if (at_ != text_.size()) return std::nullopt;
    return root;
  }

 private:
  // Whitespace and comments: `// ...` to the end of the line, `/* ... */`.
  void skip_blanks() {
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++at_;
      } else if (text_.substr(at_, 2) == "//") {
        at_ = std::min(text_.find('\n', at_), text_.size());
      } else if (text_.substr(at_, 2) == "/*") {
        const std::size_t close = text_.find("*/", at_ + 2);
        at_ = close == std::string_view::npos ? text_.size() : close + 2;
      } else {
        return;
      }
    }
  }

  bool string(TextSpan& span) {
    if (at_ >= text_.size() || text_[at_] != '"') return false;
    span.begin = at_++;
    while (at_ < text_.size() && text_[at_] != '"') at_ += text_[at_] == '\\' ? 2 : 1;
    if (at_ >= text_.size()) return false;
    span.end = ++at_;
    return true;
  }

  bool value(JsonSpans& out, int depth) {
    if (depth > kMaxDepth) return false;
    skip_blanks();
    if (at_ >= text_.size()) return false;
    out.span.begin = at_;
    const char c = text_[at_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') return string(out.span);
    while (at_ < text_.size() &&
           std::string_view(",]} \t\r\n/").find(text_[at_]) == std::string_view::npos) {
      ++at_;
    }
    out.span.end = at_;
    return out.span.end > out.span.begin;
  }

  bool object(JsonSpans& out, int depth) {
    out.is_object = true;
    ++at_;
    for (;;) {
      skip_blanks();
      if (at_ < text_.size() && text_[at_] == '}') break;
      JsonSpans::Member member;
      if (!string(member.key_span)) return false;
      const auto key = parse_json(
          text_.substr(member.key_span.begin, member.key_span.end - member.key_span.begin));
      if (!key || !key->is_string()) return false;
      member.key = key->get_string();
      skip_blanks();
      if (at_ >= text_.size() || text_[at_] != ':') return false;
      ++at_;
      if (!value(member.value, depth + 1)) return false;
      out.members.push_back(std::move(member));
      if (!separator('}')) return false;
    }
    out.span.end = ++at_;
    return true;
  }

  bool array(JsonSpans& out, int depth) {
    out.is_array = true;
    ++at_;
    for (;;) {
      skip_blanks();
      if (at_ < text_.size() && text_[at_] == ']') break;
      JsonSpans element;
      if (!value(element, depth + 1)) return false;
      out.elements.push_back(std::move(element));
      if (!separator(']')) return false;
    }
    out.span.end = ++at_;
    return true;
  }

  // After a member or an element: a comma, or the closing bracket (left for the caller).
  bool separator(char close) {
    skip_blanks();
    if (at_ >= text_.size()) return false;
    if (text_[at_] == ',') {
      ++at_;
      return true;
    }
    return text_[at_] == close;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace

const JsonSpans::Member* JsonSpans::member(std::string_view key) const {
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if (it->key == key) return &*it;
  }
  return nullptr;
}

std::optional<JsonSpans> scan_json_spans(std::string_view text) { return Scanner(text).document(); }

}  // namespace ctxguard::wrap
