#include "support/text_diff.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

namespace ctxguard {

namespace {

struct Line {
  std::string_view text;   // without its line break
  bool ends_text = false;  // the last line, with no line break after it
};

std::vector<Line> lines_of(std::string_view text) {
  std::vector<Line> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) {
      lines.push_back(Line{text.substr(begin), true});
      break;
    }
    lines.push_back(Line{text.substr(begin, end - begin), false});
    begin = end + 1;
  }
  return lines;
}

bool same(const Line& a, const Line& b) { return a.text == b.text && a.ends_text == b.ends_text; }

enum class Op : std::uint8_t { kKeep, kRemove, kAdd };

// Past this many differing lines a diff is not worth finding: the texts are shown as one
// replaced by the other (and the search's memory, O(D^2), stays bounded).
constexpr std::ptrdiff_t kMaxEdits = 2000;

// The shortest edit script from `a` to `b`, in order: Myers' greedy forward search keeping each
// round's furthest reaching paths (round d: diagonals -d..d), then walked back.
std::vector<Op> edit_script(const std::vector<Line>& a, const std::vector<Line>& b) {
  const auto n = static_cast<std::ptrdiff_t>(a.size());
  const auto m = static_cast<std::ptrdiff_t>(b.size());
  // rounds[d][k + d]: the furthest x reached on diagonal k in round d.
  std::vector<std::vector<std::ptrdiff_t>> rounds;
  const auto reached = [&](std::ptrdiff_t d, std::ptrdiff_t k) {
    return rounds[static_cast<std::size_t>(d)][static_cast<std::size_t>(k + d)];
  };
  std::ptrdiff_t found = -1;
  for (std::ptrdiff_t d = 0; d <= std::min(n + m, kMaxEdits) && found < 0; ++d) {
    std::vector<std::ptrdiff_t> furthest(static_cast<std::size_t>(2 * d + 1), 0);
    for (std::ptrdiff_t k = -d; k <= d; k += 2) {
      std::ptrdiff_t x = 0;
      if (d > 0) {
        const bool down = k == -d || (k != d && reached(d - 1, k - 1) < reached(d - 1, k + 1));
        x = down ? reached(d - 1, k + 1) : reached(d - 1, k - 1) + 1;
      }
      std::ptrdiff_t y = x - k;
      while (x < n && y < m &&
             same(a[static_cast<std::size_t>(x)], b[static_cast<std::size_t>(y)])) {
        ++x;
        ++y;
      }
      furthest[static_cast<std::size_t>(k + d)] = x;
      if (x >= n && y >= m && found < 0) found = d;
    }
    rounds.push_back(std::move(furthest));
  }
  std::vector<Op> script;
  if (found < 0) {
    script.assign(a.size(), Op::kRemove);
    script.insert(script.end(), b.size(), Op::kAdd);
    return script;
  }
  std::ptrdiff_t x = n;
  std::ptrdiff_t y = m;
  for (std::ptrdiff_t d = found; d > 0; --d) {
    const std::ptrdiff_t k = x - y;
    const bool down = k == -d || (k != d && reached(d - 1, k - 1) < reached(d - 1, k + 1));
    const std::ptrdiff_t previous_k = down ? k + 1 : k - 1;
    const std::ptrdiff_t previous_x = reached(d - 1, previous_k);
    const std::ptrdiff_t previous_y = previous_x - previous_k;
    while (x > (down ? previous_x : previous_x + 1) && y > (down ? previous_y + 1 : previous_y)) {
      script.push_back(Op::kKeep);
      --x;
      --y;
    }
    script.push_back(down ? Op::kAdd : Op::kRemove);
    x = previous_x;
    y = previous_y;
  }
  while (x > 0 && y > 0) {
    script.push_back(Op::kKeep);
    --x;
    --y;
  }
  std::reverse(script.begin(), script.end());
  return script;
}

void append_line(std::string& out, char mark, const Line& line) {
  out += mark;
  out += line.text;
  out += '\n';
  if (line.ends_text) out += "\\ No newline at end of file\n";
}

// "a,b" as a hunk header gives a range: start line (1-based; the line before when empty), count.
std::string range(std::size_t first, std::size_t count) {
  if (count == 1) return std::to_string(first + 1);
  return fmt::format("{},{}", count == 0 ? first : first + 1, count);
}

}  // namespace

std::string unified_diff(std::string_view before, std::string_view after,
                         std::string_view before_name, std::string_view after_name,
                         std::size_t context) {
  const std::vector<Line> a = lines_of(before);
  const std::vector<Line> b = lines_of(after);
  const std::vector<Op> script = edit_script(a, b);
  if (std::all_of(script.begin(), script.end(), [](Op op) { return op == Op::kKeep; })) return {};

  std::string out = fmt::format("--- {}\n+++ {}\n", before_name, after_name);
  std::size_t i = 0;
  while (i < script.size()) {
    if (script[i] == Op::kKeep) {
      ++i;
      continue;
    }
    // A hunk: from `context` kept lines before this change to `context` after the last change
    // that is no more than 2 * context kept lines from the one before it.
    const std::size_t start = i - std::min(i, context);
    std::size_t end = i;
    std::size_t kept_run = 0;
    for (std::size_t j = i; j < script.size(); ++j) {
      if (script[j] != Op::kKeep) {
        end = j + 1;
        kept_run = 0;
      } else if (++kept_run > 2 * context) {
        break;
      }
    }
    end = std::min(script.size(), end + context);
    // Where the hunk starts in each text: the operations before it.
    std::size_t line_a = 0;
    std::size_t line_b = 0;
    for (std::size_t j = 0; j < start; ++j) {
      if (script[j] != Op::kAdd) ++line_a;
      if (script[j] != Op::kRemove) ++line_b;
    }
    std::size_t count_a = 0;
    std::size_t count_b = 0;
    for (std::size_t j = start; j < end; ++j) {
      if (script[j] != Op::kAdd) ++count_a;
      if (script[j] != Op::kRemove) ++count_b;
    }
    out += fmt::format("@@ -{} +{} @@\n", range(line_a, count_a), range(line_b, count_b));
    for (std::size_t j = start; j < end; ++j) {
      switch (script[j]) {
        case Op::kKeep:
          append_line(out, ' ', a[line_a++]);
          ++line_b;
          break;
        case Op::kRemove:
          append_line(out, '-', a[line_a++]);
          break;
        case Op::kAdd:
          append_line(out, '+', b[line_b++]);
          break;
      }
    }
    i = end;
  }
  return out;
}

}  // namespace ctxguard
