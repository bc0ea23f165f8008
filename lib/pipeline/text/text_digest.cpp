#include "pipeline/text/text_digest.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/json/array.hpp>

#include "pipeline/text/log_entry.hpp"
#include "support/json_writer.hpp"
#include "support/text_scan.hpp"

namespace ctxguard::pipeline {

namespace json = boost::json;

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

bool has_digit(std::string_view token) {
  return std::any_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A token of a timestamp: it starts with a digit and has no letters but T and Z (2024-05-01,
// 12:30:45,123, 2024-05-01T12:30:45.000Z), or is a month's abbreviation (RFC 3164).
bool is_time_token(std::string_view token, bool first) {
  static constexpr std::array<std::string_view, 12> kMonths{
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (first && std::find(kMonths.begin(), kMonths.end(), token) != kMonths.end()) return true;
  if (token.empty() || token.front() < '0' || token.front() > '9') return false;
  return std::all_of(token.begin(), token.end(),
                     [](char c) { return !text::is_letter(c) || c == 'T' || c == 'Z'; });
}

// The level a token names, upper case ("WARNING" and "warn" are WARN), or empty.
std::string_view level_of(std::string_view token) {
  static constexpr std::array<std::string_view, 9> kLevels{
      "TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR", "FATAL", "CRITICAL"};
  if (token.size() < 4 || token.size() > 8) return {};
  std::string upper(token);
  for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  const auto found = std::find(kLevels.begin(), kLevels.end(), upper);
  if (found == kLevels.end()) return {};
  return *found == "WARNING" ? std::string_view("WARN") : *found;
}

bool is_hex_id(std::string_view token) {
  return token.size() >= 8 && has_digit(token) &&
         std::all_of(token.begin(), token.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
                  c == '-';
         });
}

// `token` with what varies from entry to entry masked as "<*>": an id of 8 or more hex digits
// (a hash, a UUID) whole, and every run of digits (with the . , : between them: 3.14, 12:30:45).
void append_masked(std::string& out, std::string_view token) {
  if (is_hex_id(unbracketed(token))) {
    out += "<*>";
    return;
  }
  for (std::size_t i = 0; i < token.size();) {
    if (token[i] < '0' || token[i] > '9') {
      out += token[i++];
      continue;
    }
    while (i < token.size() &&
           ((token[i] >= '0' && token[i] <= '9') ||
            ((token[i] == '.' || token[i] == ',' || token[i] == ':') && i + 1 < token.size() &&
             token[i + 1] >= '0' && token[i + 1] <= '9'))) {
      ++i;
    }
    out += "<*>";
  }
}

struct Message {
  std::size_t count = 0;
  std::size_t first_line = 0;
};

struct LogDigest {
  std::size_t entries = 0;
  std::string first_time, last_time;
  std::vector<std::pair<std::string, std::size_t>> levels;  // in order of first appearance
  std::unordered_map<std::string, Message> messages;
  // Reused from line to line.
  std::vector<std::string_view> tokens;
  std::string shape;

  void add(std::string_view line, std::size_t number) {
    if (!starts_log_entry(line)) return;
    ++entries;
    // The timestamp and the level are in the first tokens; the message is read only as far as
    // its template goes.
    tokens_of(line, kHeadTokens, tokens);
    std::size_t at = 0;
    while (at < tokens.size() && at < 4 && is_time_token(unbracketed(tokens[at]), at == 0)) ++at;
    if (at > 0) {
      // Written into the one buffer the last timestamp keeps.
      last_time.clear();
      for (std::size_t i = 0; i < at; ++i) {
        if (i > 0) last_time += ' ';
        last_time += unbracketed(tokens[i]);
      }
      if (first_time.empty()) first_time = last_time;
    }
    for (std::size_t i = at; i < tokens.size() && i < at + 3; ++i) {
      const std::string_view level = level_of(unbracketed(tokens[i]));
      if (level.empty()) continue;
      count_level(level);
      at = i + 1;
      break;
    }
    shape.clear();
    const std::size_t rest = at < tokens.size()
                                 ? static_cast<std::size_t>(tokens[at].data() - line.data())
                                 : line.size();
    for (std::size_t i = rest; i < line.size() && shape.size() < kTemplateChars;) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      const std::size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      if (i == start) break;
      if (!shape.empty()) shape += ' ';
      append_masked(shape, line.substr(start, i - start));
    }
    if (shape.size() > kTemplateChars) shape.resize(text::prefix_bytes(shape, kTemplateChars));
    const auto found = messages.find(shape);
    if (found != messages.end()) {
      ++found->second.count;
    } else if (messages.size() < kMaxTemplates) {
      messages.emplace(shape, Message{1, number});
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
    if (!first_time.empty()) out["span"] = json::object{{"first", first_time}, {"last", last_time}};
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

// "## Heading" (1 to 6 '#', then a space): the heading's text, or empty.
bool is_heading(std::string_view line) {
  std::size_t hashes = 0;
  while (hashes < line.size() && line[hashes] == '#') ++hashes;
  return hashes >= 1 && hashes <= 6 && hashes < line.size() && line[hashes] == ' ';
}

json::object markdown_digest(std::string_view text) {
  json::array outline;
  std::size_t written = 0;
  bool in_fence = false;
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    if (line.starts_with("```") || line.starts_with("~~~")) in_fence = !in_fence;
    if (in_fence || !is_heading(line) || written > kTextDigestChars - 200) return;
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

json::object digest_of(std::string_view text) {
  std::size_t headings = 0;
  bool in_fence = false;
  const bool log = looks_like_log(text);
  LogDigest log_digest;
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    if (log) {
      log_digest.add(line, number);
      return;
    }
    if (line.starts_with("```") || line.starts_with("~~~")) in_fence = !in_fence;
    if (!in_fence && is_heading(line)) ++headings;
  });
  if (log) return log_digest.to_json();
  if (headings >= 2) return markdown_digest(text);
  return plain_digest(text);
}

}  // namespace

json::object digest_text(std::string_view text) {
  json::object digest = digest_of(text);
  bound(digest);
  return digest;
}

}  // namespace ctxguard::pipeline
