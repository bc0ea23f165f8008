#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "budget/token_estimator.hpp"
#include "pipeline/text/text_chunk.hpp"
#include "support/text_scan.hpp"

using ctxguard::budget::estimate_tokens;
using ctxguard::pipeline::chunk_text;
using ctxguard::pipeline::LineIndex;
using ctxguard::pipeline::looks_like_log;
using ctxguard::pipeline::starts_log_entry;
using ctxguard::pipeline::TextChunk;
using ctxguard::text::is_continuation;

namespace {

std::string_view piece(std::string_view text, const TextChunk& chunk) {
  return text.substr(chunk.begin, chunk.end - chunk.begin);
}

// The invariants every chunking keeps: the chunks cover the text byte for byte in order, none is
// empty, their lines agree with the index, each is within budget (but for a single character
// that alone exceeds it), none starts inside a UTF-8 sequence or between \r and \n.
void check_chunks(std::string_view text, const std::vector<TextChunk>& chunks,
                  std::size_t max_tokens, const LineIndex& index) {
  std::string rebuilt;
  std::size_t expected_begin = 0;
  for (const TextChunk& chunk : chunks) {
    REQUIRE(chunk.begin == expected_begin);
    REQUIRE(chunk.end > chunk.begin);
    REQUIRE(chunk.end <= text.size());
    REQUIRE(chunk.first_line == index.line_of(chunk.begin));
    REQUIRE(chunk.last_line == index.line_of(chunk.end - 1));
    REQUIRE(index.line_begin(chunk.first_line) <= chunk.begin);
    REQUIRE(chunk.end <= index.line_end(chunk.last_line));
    if (estimate_tokens(piece(text, chunk)) > max_tokens) {
      // Only a character that alone exceeds the budget (or a CRLF, never split) may.
      const std::string_view over = piece(text, chunk);
      CAPTURE(over, max_tokens);
      REQUIRE((over == "\r\n" || std::none_of(over.begin() + 1, over.end(),
                                              [](char c) { return !is_continuation(c); })));
    }
    if (chunk.end < text.size()) {
      REQUIRE_FALSE(is_continuation(text[chunk.end]));
      REQUIRE_FALSE((text[chunk.end - 1] == '\r' && text[chunk.end] == '\n'));
    }
    rebuilt += piece(text, chunk);
    expected_begin = chunk.end;
  }
  REQUIRE(expected_begin == text.size());
  REQUIRE(rebuilt == text);
}

std::vector<TextChunk> chunk_checked(std::string_view text, std::size_t max_tokens) {
  const LineIndex index(text);
  std::vector<TextChunk> chunks = chunk_text(text, {.tokens = max_tokens}, index);
  check_chunks(text, chunks, max_tokens, index);
  return chunks;
}

constexpr std::string_view kWords[] = {
    "the",      "proxy",     "keeps",    "tool",     "results", "within",  "a",      "token",
    "budget",   "server",    "returns",  "large",    "listing", "of",      "files",  "and",
    "cursor",   "client",    "fetches",  "next",     "page",    "when",    "needed", "context",
    "window",   "model",     "request",  "response", "stream",  "schema",  "value",  "chunk",
    "boundary", "paragraph", "sentence", "line",     "reader",  "summary", "detail", "cache"};

std::string words(std::mt19937& random, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out += ' ';
    out += kWords[random() % std::size(kWords)];
  }
  return out;
}

std::string sentence(std::mt19937& random) {
  std::string out = words(random, 6 + random() % 12);
  out[0] = static_cast<char>(out[0] - 'a' + 'A');
  constexpr char kStops[] = {'.', '.', '.', '!', '?'};
  out += kStops[random() % std::size(kStops)];
  return out;
}

// Markdown: headings, paragraphs of wrapped sentences, lists; paragraphs well under 200 tokens.
std::string markdown(std::mt19937& random, std::size_t bytes) {
  std::string out;
  int section = 0;
  while (out.size() < bytes) {
    out += "## Section " + std::to_string(++section) + "\n\n";
    const std::size_t paragraphs = 2 + random() % 4;
    for (std::size_t p = 0; p < paragraphs; ++p) {
      if (random() % 5 == 0) {
        for (std::size_t item = 0; item < 2 + random() % 4; ++item) {
          out += "- " + words(random, 4 + random() % 8) + "\n";
        }
      } else {
        std::string line;
        for (std::size_t s = 0; s < 2 + random() % 4; ++s) {
          line += sentence(random);
          if (line.size() > 70) {
            out += line + "\n";
            line.clear();
          } else {
            line += ' ';
          }
        }
        if (!line.empty()) line.pop_back();
        out += line.empty() ? "" : line + "\n";
      }
      out += "\n";
    }
  }
  return out;
}

// One log entry per element; `text` is their concatenation.
struct GeneratedLog {
  std::string text;
  std::vector<std::size_t> entry_begins;
};

std::string timestamp(std::mt19937& random, std::size_t second) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "2024-05-01 %02zu:%02zu:%02zu.%03u", (second / 3600) % 24,
                (second / 60) % 60, second % 60, static_cast<unsigned>(random() % 1000));
  return buffer;
}

GeneratedLog application_log(std::mt19937& random, std::size_t bytes) {
  constexpr std::string_view kLevels[] = {"INFO ", "INFO ", "INFO ", "DEBUG", "WARN "};
  constexpr std::string_view kClasses[] = {
      "com.example.orders.OrderService", "com.example.http.RequestHandler",
      "org.springframework.web.servlet.DispatcherServlet", "com.zaxxer.hikari.pool.HikariPool"};
  GeneratedLog log;
  for (std::size_t second = 0; log.text.size() < bytes; ++second) {
    log.entry_begins.push_back(log.text.size());
    const std::size_t kind = random() % 20;
    if (kind == 0) {  // a Java exception with a stack trace and a cause
      log.text += timestamp(random, second) + " ERROR [http-nio-8080-exec-" +
                  std::to_string(random() % 10) + "] " + std::string(kClasses[random() % 4]) +
                  " - Request failed\n";
      log.text += "java.lang.IllegalStateException: order " + std::to_string(random() % 100000) +
                  " is in state CANCELLED\n";
      const std::size_t frames = 10 + random() % 21;
      for (std::size_t f = 0; f < frames; ++f) {
        log.text += "\tat " + std::string(kClasses[random() % 4]) + ".method" + std::to_string(f) +
                    "(Source.java:" + std::to_string(random() % 900) + ")\n";
      }
      log.text += "Caused by: java.sql.SQLException: connection reset\n";
      log.text +=
          "\tat com.zaxxer.hikari.pool.ProxyConnection.checkException(ProxyConnection.java:"
          "182)\n";
      log.text += "\t... " + std::to_string(frames) + " more\n";
    } else if (kind == 1) {  // a Python traceback
      log.text += "[" + timestamp(random, second) + "] ERROR in worker: task failed\n";
      log.text += "Traceback (most recent call last):\n";
      const std::size_t frames = 3 + random() % 8;
      for (std::size_t f = 0; f < frames; ++f) {
        log.text += "  File \"/app/worker/tasks.py\", line " + std::to_string(random() % 500) +
                    ", in handler_" + std::to_string(f) + "\n";
        log.text += "    result = process(item, retries=" + std::to_string(f) + ")\n";
      }
      log.text += "ValueError: invalid literal for int() with base 10: 'abc'\n";
    } else if (kind == 2) {  // a message with indented continuation lines
      log.text += timestamp(random, second) + " INFO  config loaded:\n";
      for (std::size_t k = 0; k < 2 + random() % 4; ++k) {
        log.text += "    " + words(random, 2) + " = " + std::to_string(random() % 1000) + "\n";
      }
    } else {
      log.text += timestamp(random, second) + " " + std::string(kLevels[random() % 5]) + " [" +
                  "main] " + std::string(kClasses[random() % 4]) + " - " +
                  words(random, 4 + random() % 14) + "\n";
    }
  }
  return log;
}

}  // namespace

// ---- LineIndex -------------------------------------------------------------------------------

TEST_CASE("text chunk: an empty text has no lines") {
  const LineIndex index("");
  REQUIRE(index.lines() == 0);
  REQUIRE(index.line_of(0) == 1);
}

TEST_CASE("text chunk: a text without a line break is one line") {
  const LineIndex index("a");
  REQUIRE(index.lines() == 1);
  REQUIRE(index.line_begin(1) == 0);
  REQUIRE(index.line_end(1) == 1);
  REQUIRE(index.line_of(0) == 1);
  REQUIRE(index.line_of(1) == 2);
}

TEST_CASE("text chunk: a final line break ends the last line without starting another") {
  const LineIndex index("a\n");
  REQUIRE(index.lines() == 1);
  REQUIRE(index.line_end(1) == 2);
  REQUIRE(index.line_of(1) == 1);  // the '\n' belongs to its line
  REQUIRE(index.line_of(2) == 2);
}

TEST_CASE("text chunk: a last line without a line break counts") {
  const LineIndex index("a\nb");
  REQUIRE(index.lines() == 2);
  REQUIRE(index.line_begin(1) == 0);
  REQUIRE(index.line_end(1) == 2);
  REQUIRE(index.line_begin(2) == 2);
  REQUIRE(index.line_end(2) == 3);
  REQUIRE(index.line_of(0) == 1);
  REQUIRE(index.line_of(1) == 1);
  REQUIRE(index.line_of(2) == 2);
  REQUIRE(index.line_of(3) == 3);
}

TEST_CASE("text chunk: a CRLF line holds both bytes of its break") {
  const std::string_view text = "one\r\ntwo\r\n\r\nthree";
  const LineIndex index(text);
  REQUIRE(index.lines() == 4);
  REQUIRE(text.substr(index.line_begin(1), index.line_end(1) - index.line_begin(1)) == "one\r\n");
  REQUIRE(text.substr(index.line_begin(3), index.line_end(3) - index.line_begin(3)) == "\r\n");
  REQUIRE(text.substr(index.line_begin(4)) == "three");
  REQUIRE(index.line_of(3) == 1);  // '\r'
  REQUIRE(index.line_of(4) == 1);  // '\n'
  REQUIRE(index.line_of(5) == 2);
  REQUIRE(index.line_of(text.size() - 1) == 4);
}

TEST_CASE("text chunk: line_of agrees with line_begin and line_end at every byte") {
  const std::string_view text = "\n\nab\ncd\r\n\nlast";
  const LineIndex index(text);
  REQUIRE(index.lines() == 6);
  for (std::size_t line = 1; line <= index.lines(); ++line) {
    REQUIRE(index.line_begin(line) < index.line_end(line));
    if (line > 1) REQUIRE(index.line_begin(line) == index.line_end(line - 1));
    for (std::size_t at = index.line_begin(line); at < index.line_end(line); ++at) {
      REQUIRE(index.line_of(at) == line);
    }
  }
  REQUIRE(index.line_end(index.lines()) == text.size());
  REQUIRE(index.memory_bytes() >= index.lines() * sizeof(std::size_t));
}

// ---- log detection ---------------------------------------------------------------------------

TEST_CASE("text chunk: timestamps and levels start log entries") {
  REQUIRE(starts_log_entry("2024-05-01 12:30:45 started"));
  REQUIRE(starts_log_entry("2024-05-01T12:30:45.123Z INFO started"));
  REQUIRE(starts_log_entry("2024/05/01 12:30:45 started"));
  REQUIRE(starts_log_entry("12:30:45.123 [main] started"));
  REQUIRE(starts_log_entry("9:30:45 started"));
  REQUIRE(starts_log_entry("May  1 12:30:45 host sshd[42]: accepted"));
  REQUIRE(starts_log_entry("Dec 24 23:59:59 host cron: done"));
  REQUIRE(starts_log_entry("[2024-05-01 12:30:45] production.ERROR: boom"));
  REQUIRE(starts_log_entry("<13>May  1 12:30:45 host app: hello"));
  REQUIRE(starts_log_entry("<165>1 2024-05-01T12:30:45Z host app - - - hello"));
  REQUIRE(starts_log_entry("ERROR something failed"));
  REQUIRE(starts_log_entry("WARNING: disk almost full"));
  REQUIRE(starts_log_entry("WARN disk almost full"));
  REQUIRE(starts_log_entry("[INFO] Building module"));
  REQUIRE(starts_log_entry("[DEBUG]"));
  REQUIRE(starts_log_entry("FATAL"));
  REQUIRE(starts_log_entry("CRITICAL:root:out of memory"));
  REQUIRE(starts_log_entry("TRACE entering"));
  REQUIRE(starts_log_entry("NOTICE: server restarted"));
}

TEST_CASE("text chunk: one list of log levels, read in any case where a level is a word") {
  using ctxguard::pipeline::log_level;
  CHECK(log_level("warning") == "WARN");
  CHECK(log_level("WARN") == "WARN");
  CHECK(log_level("Notice") == "NOTICE");
  CHECK(log_level("critical") == "CRITICAL");
  CHECK(log_level("ERRORS").empty());
  CHECK(log_level("INF").empty());
  // At the start of a line a level is written in capitals: "Notice: ..." is prose.
  CHECK_FALSE(starts_log_entry("Notice: the office is closed"));
  CHECK_FALSE(starts_log_entry("Error handling is described below"));
  // The lines know whether their text is a log, once for the chunker, the digest and a search.
  std::string log;
  for (int i = 0; i < 20; ++i) log += "NOTICE  worker " + std::to_string(i) + " ready\n";
  CHECK(LineIndex(log).is_log());
  CHECK_FALSE(LineIndex("# Title\n\nSome prose.\n").is_log());
}

TEST_CASE("text chunk: continuation lines and ordinary text start no log entry") {
  REQUIRE_FALSE(starts_log_entry(""));
  REQUIRE_FALSE(starts_log_entry("\tat com.example.Foo.bar(Foo.java:12)"));
  REQUIRE_FALSE(starts_log_entry("    at Object.<anonymous> (/app/index.js:3:9)"));
  REQUIRE_FALSE(starts_log_entry("Caused by: java.io.IOException: reset"));
  REQUIRE_FALSE(starts_log_entry("\t... 12 more"));
  REQUIRE_FALSE(starts_log_entry("Traceback (most recent call last):"));
  REQUIRE_FALSE(starts_log_entry("  File \"/app/x.py\", line 3, in <module>"));
  REQUIRE_FALSE(starts_log_entry("ValueError: bad value"));
  REQUIRE_FALSE(starts_log_entry(" 2024-05-01 indented"));
  REQUIRE_FALSE(starts_log_entry("INFORMATION about the release"));
  REQUIRE_FALSE(starts_log_entry("ERRORS were found"));
  REQUIRE_FALSE(starts_log_entry("Information is power"));
  REQUIRE_FALSE(starts_log_entry("2024-13-01 not a month"));
  REQUIRE_FALSE(starts_log_entry("20240-05-01"));
  REQUIRE_FALSE(starts_log_entry("12:30 is not a time with seconds"));
  REQUIRE_FALSE(starts_log_entry("25:00:00 is no hour"));
  REQUIRE_FALSE(starts_log_entry("Mayor 12:30:45"));
  REQUIRE_FALSE(starts_log_entry("<13 unclosed"));
  REQUIRE_FALSE(starts_log_entry("# Heading"));
  REQUIRE_FALSE(starts_log_entry("{\"time\":\"2024-05-01T12:30:45Z\"}"));
}

TEST_CASE("text chunk: an application log looks like a log") {
  std::mt19937 random(1);
  REQUIRE(looks_like_log(application_log(random, 20000).text));
  REQUIRE(looks_like_log("May  1 12:30:45 host a: x\nMay  1 12:30:46 host a: y\n"));
  // Mostly stack trace, still a log: 2 entries of 10 non-empty lines is 20%.
  std::string traced = "2024-05-01 12:30:45 ERROR failed\n";
  for (int i = 0; i < 8; ++i) traced += "\tat com.example.Frame.call(Frame.java:1)\n";
  traced += "\n\n2024-05-01 12:30:46 INFO recovered\n";
  REQUIRE(looks_like_log(traced));
}

TEST_CASE("text chunk: markdown, prose and JSON do not look like logs") {
  std::mt19937 random(2);
  REQUIRE_FALSE(looks_like_log(markdown(random, 20000)));
  std::string prose;
  for (int i = 0; i < 200; ++i) prose += sentence(random) + (i % 5 == 4 ? "\n\n" : " ");
  REQUIRE_FALSE(looks_like_log(prose));
  std::string json = "[\n";
  for (int i = 0; i < 100; ++i) {
    json += "  {\"time\": \"2024-05-01T12:30:45Z\", \"level\": \"INFO\", \"msg\": \"ok\"},\n";
  }
  json += "]\n";
  REQUIRE_FALSE(looks_like_log(json));
  REQUIRE_FALSE(looks_like_log(""));
  REQUIRE_FALSE(looks_like_log("ERROR once\n"));  // one entry is not a log
  // Two entries among many lines are under 20%.
  std::string sparse = "ERROR a\nINFO b\n";
  for (int i = 0; i < 20; ++i) sparse += "plain line " + std::to_string(i) + "\n";
  REQUIRE_FALSE(looks_like_log(sparse));
}

// ---- chunking --------------------------------------------------------------------------------

TEST_CASE("text chunk: an empty text gives no chunk") {
  const LineIndex index("");
  REQUIRE(chunk_text("", {.tokens = 100}, index).empty());
}

TEST_CASE("text chunk: a text that fits is one chunk") {
  const std::string_view text = "first line\nsecond line\n\nthird paragraph";
  const auto chunks = chunk_checked(text, 1000);
  REQUIRE(chunks.size() == 1);
  REQUIRE(chunks[0].begin == 0);
  REQUIRE(chunks[0].end == text.size());
  REQUIRE(chunks[0].first_line == 1);
  REQUIRE(chunks[0].last_line == 4);
  // Exactly at the limit still fits.
  REQUIRE(chunk_checked(text, estimate_tokens(text)).size() == 1);
  REQUIRE(chunk_checked(text, estimate_tokens(text) - 1).size() == 2);
}

TEST_CASE("text chunk: a log entry that fits a chunk is never split") {
  std::mt19937 random(3);
  const GeneratedLog log = application_log(random, 300000);
  REQUIRE(looks_like_log(log.text));
  for (const std::size_t max_tokens : {150, 400, 1000, 2000}) {
    CAPTURE(max_tokens);
    const auto chunks = chunk_checked(log.text, max_tokens);
    std::size_t split_entries = 0;
    for (const TextChunk& chunk : chunks) {
      if (chunk.end == log.text.size()) continue;
      const auto next =
          std::upper_bound(log.entry_begins.begin(), log.entry_begins.end(), chunk.end);
      const std::size_t entry_begin = *(next - 1);
      const std::size_t entry_end = next == log.entry_begins.end() ? log.text.size() : *next;
      if (entry_begin == chunk.end) continue;  // the boundary is before an entry
      // Inside an entry: only one that alone exceeds a chunk, and cut after a line break.
      ++split_entries;
      CAPTURE(log.text.substr(entry_begin, entry_end - entry_begin));
      REQUIRE(estimate_tokens(std::string_view(log.text).substr(
                  entry_begin, entry_end - entry_begin)) > max_tokens);
      REQUIRE(log.text[chunk.end - 1] == '\n');
    }
    if (max_tokens >= 1000) REQUIRE(split_entries == 0);
  }
}

TEST_CASE("text chunk: log chunks are well filled when entries are small") {
  std::mt19937 random(4);
  const GeneratedLog log = application_log(random, 200000);
  const auto chunks = chunk_checked(log.text, 2000);
  REQUIRE(chunks.size() > 10);
  std::size_t tokens = 0;
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
    tokens += estimate_tokens(piece(log.text, chunks[i]));
  }
  REQUIRE(static_cast<double>(tokens) / static_cast<double>(chunks.size() - 1) >= 0.8 * 2000);
}

TEST_CASE("text chunk: markdown is cut between paragraphs") {
  std::mt19937 random(5);
  const std::string text = markdown(random, 60000);
  for (const std::size_t max_tokens : {400, 1200}) {
    CAPTURE(max_tokens);
    const auto chunks = chunk_checked(text, max_tokens);
    REQUIRE(chunks.size() > 5);
    for (const TextChunk& chunk : chunks) {
      if (chunk.end == text.size()) continue;
      // After a blank line: the next chunk starts a paragraph, a list or a heading.
      REQUIRE(text.substr(chunk.end - 2, 2) == "\n\n");
    }
  }
}

TEST_CASE("text chunk: a paragraph in the latter half beats a later line break") {
  std::mt19937 random(6);
  std::string paragraph;
  for (int i = 0; i < 12; ++i) paragraph += words(random, 10) + "\n";
  const std::size_t max_tokens = estimate_tokens(paragraph) * 3 / 2;
  std::string text = paragraph + "\n";
  for (int i = 0; i < 40; ++i) text += words(random, 10) + "\n";
  const auto chunks = chunk_checked(text, max_tokens);
  REQUIRE(chunks.size() > 1);
  REQUIRE(chunks[0].end == paragraph.size() + 1);
  // Lines only, no paragraph: the last line break that fits.
  REQUIRE(text[chunks[1].end - 1] == '\n');
  REQUIRE(estimate_tokens(piece(text, chunks[1])) > max_tokens * 3 / 4);
}

TEST_CASE("text chunk: a CRLF line break is never split") {
  std::mt19937 random(7);
  std::string text;
  while (text.size() < 30000) {
    const std::size_t length = random() % 40;
    for (std::size_t i = 0; i < length; ++i) text += static_cast<char>('a' + random() % 26);
    text += random() % 4 == 0 ? "\r\n\r\n" : "\r\n";
  }
  for (std::size_t max_tokens = 1; max_tokens <= 40; max_tokens += 3) {
    CAPTURE(max_tokens);
    const auto chunks = chunk_checked(text, max_tokens);
    for (const TextChunk& chunk : chunks) {
      REQUIRE(text[chunk.begin] != '\n');  // a chunk never starts between \r and \n
    }
  }
}

TEST_CASE("text chunk: a single line longer than a chunk is cut at word boundaries") {
  std::mt19937 random(8);
  std::string text;
  while (text.size() < 100000) text += words(random, 1) + (random() % 9 == 0 ? ", " : " ");
  text += "end";
  const auto chunks = chunk_checked(text, 500);
  REQUIRE(chunks.size() > 10);
  std::size_t tokens = 0;
  for (const TextChunk& chunk : chunks) {
    if (chunk.end == text.size()) continue;
    REQUIRE(text[chunk.end - 1] == ' ');
    REQUIRE(text[chunk.end] != ' ');
    tokens += estimate_tokens(piece(text, chunk));
  }
  REQUIRE(tokens >= (chunks.size() - 1) * 500 * 9 / 10);
}

TEST_CASE("text chunk: a long line of sentences is cut after a sentence end") {
  std::mt19937 random(9);
  std::string text;
  while (text.size() < 50000) text += sentence(random) + " ";
  const auto chunks = chunk_checked(text, 600);
  for (const TextChunk& chunk : chunks) {
    if (chunk.end == text.size()) continue;
    const char stop = text[chunk.end - 2];
    REQUIRE((stop == '.' || stop == '!' || stop == '?'));
    REQUIRE(estimate_tokens(piece(text, chunk)) > 300);
  }
}

TEST_CASE("text chunk: CJK and emoji text is never cut inside a character") {
  std::mt19937 random(10);
  constexpr std::string_view kPieces[] = {"東京", "日本", "首都", "人口", "数据", "서울",
                                          "😀",    "🚀",    "é",    "Ω",    "文件", "目录"};
  std::string text;
  while (text.size() < 40000) text += kPieces[random() % std::size(kPieces)];
  for (const std::size_t max_tokens : {1, 2, 3, 7, 50, 333}) {
    CAPTURE(max_tokens);
    chunk_checked(text, max_tokens);
  }
  // With full stops, CJK sentences are kept whole.
  std::string sentences;
  while (sentences.size() < 40000) {
    for (int i = 0; i < 20; ++i) sentences += kPieces[random() % 4];
    sentences += "。";
  }
  const auto chunks = chunk_checked(sentences, 400);
  for (const TextChunk& chunk : chunks) {
    if (chunk.end < sentences.size()) {
      REQUIRE(sentences.substr(chunk.end - 3, 3) == "。");
    }
  }
}

TEST_CASE("text chunk: a line without any boundary is cut at character boundaries") {
  std::string text;
  std::mt19937 random(11);
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  while (text.size() < 200000) text += kAlphabet[random() % kAlphabet.size()];
  const auto chunks = chunk_checked(text, 1000);
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
    // As full as a character more would not be.
    const std::string_view longer =
        std::string_view(text).substr(chunks[i].begin, chunks[i].end - chunks[i].begin + 1);
    REQUIRE(estimate_tokens(longer) > 1000);
  }
}

TEST_CASE("text chunk: a Markdown heading is a paragraph boundary without a blank line") {
  std::mt19937 random(13);
  std::string section;
  for (int i = 0; i < 8; ++i) section += words(random, 12) + "\n";
  const std::size_t max_tokens = estimate_tokens(section) * 3 / 2;
  std::string text;
  for (int i = 0; i < 6; ++i) text += "# Part " + std::to_string(i) + "\n" + section;
  const auto chunks = chunk_checked(text, max_tokens);
  REQUIRE(chunks.size() > 2);
  for (const TextChunk& chunk : chunks) {
    if (chunk.end < text.size()) REQUIRE(text.substr(chunk.end, 7) == "# Part ");
  }
}

TEST_CASE("text chunk: a sentence end may carry a closing quote or bracket") {
  std::mt19937 random(14);
  std::string text;
  while (text.size() < 20000) {
    text += "He said \"" + sentence(random) + "\" (" + sentence(random) + ") ";
  }
  const auto chunks = chunk_checked(text, 300);
  for (const TextChunk& chunk : chunks) {
    if (chunk.end == text.size()) continue;
    const std::string_view ending = std::string_view(text).substr(chunk.end - 3, 3);
    CAPTURE(ending);
    REQUIRE(((ending[1] == '"' || ending[1] == ')') && ending[2] == ' '));
  }
}

TEST_CASE("text chunk: degenerate texts are chunked within budget") {
  std::string trace = "2024-05-01 12:30:45 ERROR one entry with a long trace\n";
  while (trace.size() < 100000) trace += "\tat com.example.Frame.call(Frame.java:1)\n";
  std::string cjk_stops;
  while (cjk_stops.size() < 100000) cjk_stops += "。";
  const std::string texts[] = {std::string(100000, '\n'),
                               std::string(100000, ' '),
                               std::string(100000, '.'),
                               std::string(100000, 'x'),
                               cjk_stops,
                               trace};
  std::string crlf;
  while (crlf.size() < 100000) crlf += "\r\n";
  for (const std::size_t max_tokens : {1, 50, 700}) {
    CAPTURE(max_tokens);
    for (const std::string& text : texts) chunk_checked(text, max_tokens);
    chunk_checked(crlf, max_tokens);
    // The lone entry is cut after its lines.
    for (const TextChunk& chunk : chunk_checked(trace, max_tokens)) {
      if (max_tokens > 1) REQUIRE(trace[chunk.end - 1] == '\n');
    }
  }
}

TEST_CASE("text chunk: a character over the budget is a chunk of its own") {
  const std::string_view text = "😀😀\r\n😀";
  const LineIndex index(text);
  const auto chunks = chunk_text(text, {.tokens = 0}, index);
  REQUIRE(chunks.size() == 4);
  REQUIRE(piece(text, chunks[0]) == "😀");
  REQUIRE(piece(text, chunks[2]) == "\r\n");
  REQUIRE(chunks[3].end == text.size());
}

TEST_CASE("text chunk: chunks of prose and markdown are at least 70% full on average") {
  std::mt19937 random(12);
  std::string prose;
  while (prose.size() < 100000) {
    std::string paragraph;
    for (std::size_t s = 0; s < 3 + random() % 6; ++s) paragraph += sentence(random) + " ";
    paragraph.back() = '\n';
    prose += paragraph + "\n";
  }
  const std::string md = markdown(random, 100000);
  for (const std::string* text : std::vector<const std::string*>{&prose, &md}) {
    for (const std::size_t max_tokens : {200, 500, 1000, 2000, 3000}) {
      CAPTURE(max_tokens);
      const auto chunks = chunk_checked(*text, max_tokens);
      REQUIRE(chunks.size() > 2);
      std::size_t tokens = 0;
      for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
        tokens += estimate_tokens(piece(*text, chunks[i]));
      }
      const double fill =
          static_cast<double>(tokens) / static_cast<double>((chunks.size() - 1) * max_tokens);
      CAPTURE(fill);
      REQUIRE(fill >= 0.7);
    }
  }
}

namespace {

// Random lines of every kind the chunker distinguishes.
std::string random_text(std::mt19937& random) {
  constexpr std::string_view kUnicode[] = {"東京", "😀", "é", "Ω", "。", "데이터", "ü"};
  std::string text;
  const std::size_t lines = random() % 400;
  const bool crlf = random() % 3 == 0;
  const bool log = random() % 2 == 0;
  for (std::size_t line = 0; line < lines; ++line) {
    switch (random() % 12) {
      case 0:
        break;  // blank line
      case 1:
        text += "   ";
        break;
      case 2:
        text += "\tat com.example.Frame.call(Frame.java:" + std::to_string(random() % 99) + ")";
        break;
      case 3:
        for (std::size_t i = 0; i < random() % 3000; ++i) {
          text += static_cast<char>('a' + random() % 26);
        }
        break;
      case 4:
        for (std::size_t i = 0; i < random() % 400; ++i) {
          text += kUnicode[random() % std::size(kUnicode)];
        }
        break;
      case 5:
        for (std::size_t s = 0; s < random() % 60; ++s) text += sentence(random) + " ";
        break;
      case 6:
        text += "# " + words(random, 3);
        break;
      case 7:
        text += "x\r";  // a lone \r is no line break
        break;
      default:
        if (log) {
          text += "2024-05-01 12:30:" + std::to_string(10 + random() % 50) + " INFO " +
                  words(random, random() % 30);
        } else {
          text += words(random, random() % 30);
        }
        break;
    }
    text += crlf ? "\r\n" : "\n";
  }
  if (random() % 2 == 0) text += words(random, random() % 10);  // no final line break
  return text;
}

}  // namespace

TEST_CASE("text chunk: random texts are covered exactly by chunks within budget") {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    std::mt19937 random(seed);
    const std::string text = random_text(random);
    const std::size_t max_tokens = 50 + random() % 2951;
    CAPTURE(max_tokens, text.size());
    const auto chunks = chunk_checked(text, max_tokens);
    REQUIRE(chunks.empty() == text.empty());
    if (estimate_tokens(text) <= max_tokens) REQUIRE(chunks.size() <= 1);
  }
}
