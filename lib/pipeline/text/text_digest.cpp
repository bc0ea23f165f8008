#include "pipeline/text/text_digest.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/json/array.hpp>

#include "budget/token_estimator.hpp"
#include "pipeline/cached_result.hpp"
#include "pipeline/text/log_entry.hpp"
#include "support/json_writer.hpp"
#include "support/text_scan.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;
using text::is_digit;

namespace {

constexpr std::size_t kTopMessages = 5;
constexpr std::size_t kMaxTemplates = 4096;  // distinct templates counted; later new ones are not
constexpr std::size_t kTemplateChars = 90;
constexpr std::size_t kHeadingChars = 80;
constexpr std::size_t kLongestLines = 3;
constexpr std::size_t kHeadTokens = 8;  // where an entry's timestamp and level are looked for

// The lines of `text` without their line breaks ("\r\n" too), each with its 1-based number; no
// empty line after a final line break.
template <typename Visit>
void for_each_line(std::string_view text, const Visit& visit) {
  std::size_t number = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    visit(line, ++number);
    begin = end + 1;
  }
}

// The tokens of a line, split at spaces and tabs.
void tokens_of(std::string_view line, std::size_t most, std::vector<std::string_view>& tokens) {
  tokens.clear();
  std::size_t i = 0;
  while (i < line.size() && tokens.size() < most) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
}

std::string_view unbracketed(std::string_view token) {
  while (!token.empty() && (token.front() == '[' || token.front() == '<' || token.front() == '(')) {
    token.remove_prefix(1);
  }
  while (!token.empty() && (token.back() == ']' || token.back() == '>' || token.back() == ')' ||
                            token.back() == ':' || token.back() == ',')) {
    token.remove_suffix(1);
  }
  return token;
}

bool has_digit(std::string_view token) { return std::any_of(token.begin(), token.end(), is_digit); }

// A token of a timestamp: it starts with a digit and has no letters but T and Z (2024-05-01,
// 12:30:45,123, 2024-05-01T12:30:45.000Z), or is a month's abbreviation (RFC 3164).
bool is_time_token(std::string_view token, bool first) {
  if (first && is_month_abbreviation(token)) return true;
  if (token.empty() || token.front() < '0' || token.front() > '9') return false;
  return std::all_of(token.begin(), token.end(),
                     [](char c) { return !text::is_letter(c) || c == 'T' || c == 'Z'; });
}

bool is_hex_id(std::string_view token) {
  return token.size() >= 8 && has_digit(token) &&
         std::all_of(token.begin(), token.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
                  c == '-';
         });
}

// A message's template, written into a fixed buffer: a line's template is built for every entry
// of a log, so it never allocates. Holds at most kTemplateChars bytes; what goes past is dropped.
class TemplateBuffer {
 public:
  void clear() { size_ = 0; }
  bool full() const { return size_ >= kTemplateChars; }
  void append(std::string_view text) {
    const std::size_t room = kTemplateChars - std::min(size_, kTemplateChars);
    const std::size_t take = std::min(room, text.size());
    std::copy_n(text.data(), take, bytes_.data() + size_);
    size_ += take;
  }
  // `token` with what varies from entry to entry masked as "<*>": an id of 8 or more hex digits
  // (a hash, a UUID) whole, and every run of digits (with the . , : between them: 3.14,
  // 12:30:45).
  void append_masked(std::string_view token) {
    if (token.size() >= 8 && is_hex_id(unbracketed(token))) {
      append(kMask);
      return;
    }
    // Byte by byte into the buffer: this runs for every byte of every entry's message.
    const char* in = token.data();
    const char* const end = in + token.size();
    char* out = bytes_.data() + size_;
    char* const limit = bytes_.data() + kTemplateChars;
    while (in < end && out < limit) {
      if (!is_digit(*in)) {
        *out++ = *in++;
        continue;
      }
      ++in;
      while (in < end && (is_digit(*in) || ((*in == '.' || *in == ',' || *in == ':') &&
                                            in + 1 < end && is_digit(in[1])))) {
        ++in;
      }
      for (const char mask : kMask) {
        if (out < limit) *out++ = mask;
      }
    }
    size_ = static_cast<std::size_t>(out - bytes_.data());
  }
  // The template, never ending inside a UTF-8 sequence.
  std::string_view view() const {
    const std::string_view written(bytes_.data(), size_);
    return full() ? written.substr(0, text::whole_characters(written)) : written;
  }

 private:
  static constexpr std::string_view kMask = "<*>";
  std::array<char, kTemplateChars> bytes_{};
  std::size_t size_ = 0;
};

struct Message {
  std::size_t count = 0;
  std::size_t first_line = 0;
};

// Hashes and compares std::string keys by std::string_view, so that a lookup builds no string.
struct TemplateHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const {
    return std::hash<std::string_view>{}(text);
  }
};

// The timestamp at the start of an entry (its first `count` tokens, unbracketed, joined by one
// space), from the line's head as it stands.
std::string timestamp_of(std::string_view head, std::size_t count) {
  std::vector<std::string_view> tokens;
  tokens_of(head, count, tokens);
  std::string time;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) time += ' ';
    time += unbracketed(tokens[i]);
  }
  return time;
}

}  // namespace

// The log form of a digest, line by line (in text_digest.hpp for LogLinesDigest).
struct LogDigest {
  std::size_t entries = 0;
  // The first and the last timestamp: where they stand, formatted once at the end.
  std::string_view first_time, last_time;
  std::size_t first_time_tokens = 0, last_time_tokens = 0;
  std::vector<std::pair<std::string_view, std::size_t>> levels;  // in order of first appearance
  std::unordered_map<std::string, Message, TemplateHash, std::equal_to<>> messages;
  // Reused from line to line.
  std::vector<std::string_view> tokens;
  TemplateBuffer shape;

  void add(std::string_view line, std::size_t number) {
    if (!starts_log_entry(line)) return;
    ++entries;
    // The timestamp and the level are in the first tokens; the message is read only as far as
    // its template goes.
    tokens_of(line, kHeadTokens, tokens);
    std::size_t at = 0;
    while (at < tokens.size() && at < 4 && is_time_token(unbracketed(tokens[at]), at == 0)) ++at;
    if (at > 0) {
      const std::string_view last = tokens[at - 1];
      const std::string_view head =
          line.substr(0, static_cast<std::size_t>(last.data() + last.size() - line.data()));
      if (first_time.empty()) {
        first_time = head;
        first_time_tokens = at;
      }
      last_time = head;
      last_time_tokens = at;
    }
    for (std::size_t i = at; i < tokens.size() && i < at + 3; ++i) {
      const std::string_view level = log_level(unbracketed(tokens[i]));
      if (level.empty()) continue;
      count_level(level);
      at = i + 1;
      break;
    }
    shape.clear();
    const std::size_t rest = at < tokens.size()
                                 ? static_cast<std::size_t>(tokens[at].data() - line.data())
                                 : line.size();
    bool first_word = true;
    for (std::size_t i = rest; i < line.size() && !shape.full();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      const std::size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      if (i == start) break;
      if (!first_word) shape.append(" ");
      first_word = false;
      shape.append_masked(line.substr(start, i - start));
    }
    const std::string_view key = shape.view();
    const auto found = messages.find(key);
    if (found != messages.end()) {
      ++found->second.count;
    } else if (messages.size() < kMaxTemplates) {
      messages.emplace(std::string(key), Message{1, number});
    }
  }

  void count_level(std::string_view level) {
    for (auto& [name, count] : levels) {
      if (name == level) {
        ++count;
        return;
      }
    }
    levels.emplace_back(level, 1);
  }

  json::object to_json() const {
    json::object out{{"kind", "log"}, {"entries", entries}};
    if (!first_time.empty()) {
      out["span"] = json::object{{"first", timestamp_of(first_time, first_time_tokens)},
                                 {"last", timestamp_of(last_time, last_time_tokens)}};
    }
    json::object level_counts;
    for (const auto& [name, count] : levels) level_counts[name] = count;
    if (!level_counts.empty()) out["levels"] = std::move(level_counts);
    std::vector<std::pair<const std::string*, Message>> top;
    for (const auto& [text, message] : messages) top.emplace_back(&text, message);
    std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
      return a.second.count != b.second.count ? a.second.count > b.second.count
                                              : a.second.first_line < b.second.first_line;
    });
    json::array shown;
    for (std::size_t i = 0; i < top.size() && i < kTopMessages; ++i) {
      shown.push_back(json::object{{"template", *top[i].first},
                                   {"count", top[i].second.count},
                                   {"firstLine", top[i].second.first_line}});
    }
    out["messages"] = std::move(shown);
    return out;
  }
};

namespace {

json::object markdown_digest(std::string_view text) {
  json::array outline;
  std::size_t written = 0;
  bool in_fence = false;
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    if (line.starts_with("```") || line.starts_with("~~~")) in_fence = !in_fence;
    if (in_fence || !text::is_markdown_heading(line) || written > kTextDigestChars - 200) return;
    const std::string heading(line.substr(0, text::prefix_bytes(line, kHeadingChars)));
    written += heading.size() + 24;
    outline.push_back(json::object{{"line", number}, {"heading", heading}});
  });
  return json::object{{"kind", "markdown"}, {"outline", std::move(outline)}};
}

json::object plain_digest(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> longest;  // chars, line
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    const std::size_t chars = text::char_count(line);
    longest.emplace_back(chars, number);
    std::sort(longest.begin(), longest.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    if (longest.size() > kLongestLines) longest.pop_back();
  });
  json::array shown;
  for (const auto& [chars, line] : longest) {
    shown.push_back(json::object{{"line", line}, {"chars", chars}});
  }
  return json::object{{"kind", "text"}, {"longestLines", std::move(shown)}};
}

// Drops entries from the end of the digest's list until it is within kTextDigestChars.
void bound(json::object& digest) {
  for (const std::string_view list : {"messages", "outline", "longestLines"}) {
    json::value* entries = digest.if_contains(list);
    if (entries == nullptr || !entries->is_array()) continue;
    while (!entries->get_array().empty() && to_json(digest).size() > kTextDigestChars) {
      entries->get_array().pop_back();
    }
  }
}

json::object digest_of(std::string_view text, bool log) {
  std::size_t headings = 0;
  bool in_fence = false;
  LogDigest log_digest;
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    if (log) {
      log_digest.add(line, number);
      return;
    }
    if (line.starts_with("```") || line.starts_with("~~~")) in_fence = !in_fence;
    if (!in_fence && text::is_markdown_heading(line)) ++headings;
  });
  if (log) return log_digest.to_json();
  if (headings >= 2) return markdown_digest(text);
  return plain_digest(text);
}

}  // namespace

json::object digest_text(std::string_view text, const LineIndex& lines) {
  json::object digest = digest_of(text, lines.is_log());
  bound(digest);
  return digest;
}

LogLinesDigest::LogLinesDigest() : digest_(std::make_unique<LogDigest>()) {}
LogLinesDigest::~LogLinesDigest() = default;

void LogLinesDigest::add(std::string_view line, std::size_t number) { digest_->add(line, number); }

json::object LogLinesDigest::finish() const {
  json::object digest = digest_->to_json();
  bound(digest);
  return digest;
}

DigestRoom digest_room(const json::object& digest, std::string_view hint) {
  const std::string written = to_json(digest);
  return DigestRoom{
      .tokens = budget::estimate_tokens(written) + kDigestKeyTokens + budget::estimate_tokens(hint),
      .chars = written.size() + hint.size()};
}

}  // namespace ctxguard::pipeline
