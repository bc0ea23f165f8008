#include <catch2/catch.hpp>

#include <string>

#include "support/text_diff.hpp"

using ctxguard::unified_diff;

TEST_CASE("text diff: equal texts have no diff") {
  CHECK(unified_diff("a\nb\n", "a\nb\n", "x", "y").empty());
  CHECK(unified_diff("", "", "x", "y").empty());
}

TEST_CASE("text diff: a changed line with three lines of context, as diff -u prints it") {
  const std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  const std::string after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  CHECK(unified_diff(before, after, "a.json", "b.json") ==
        "--- a.json\n+++ b.json\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST_CASE("text diff: changes far apart make two hunks, near ones one") {
  std::string before;
  for (int i = 1; i <= 20; ++i) before += std::to_string(i) + "\n";
  std::string far = before;
  far.replace(far.find("2\n"), 2, "two\n");
  far.replace(far.find("19\n"), 3, "nineteen\n");
  const std::string two_hunks = unified_diff(before, far, "a", "b");
  CHECK(two_hunks.find("@@ -1,5 +1,5 @@") != std::string::npos);
  CHECK(two_hunks.find("@@ -16,5 +16,5 @@") != std::string::npos);
  std::string near = before;
  near.replace(near.find("5\n"), 2, "five\n");
  near.replace(near.find("9\n"), 2, "nine\n");
  const std::string one_hunk = unified_diff(before, near, "a", "b");
  CHECK(one_hunk.find("@@ -2,11 +2,11 @@") != std::string::npos);
  const auto hunks = [](const std::string& diff) {
    std::size_t count = 0;
    for (std::size_t at = diff.find("\n@@ "); at != std::string::npos;
         at = diff.find("\n@@ ", at + 1))
      ++count;
    return count;
  };
  CHECK(hunks(two_hunks) == 2);
  CHECK(hunks(one_hunk) == 1);
}

TEST_CASE("text diff: lines added, removed, a file created, and no final line break") {
  CHECK(unified_diff("a\nc\n", "a\nb\nc\n", "x", "y") ==
        "--- x\n+++ y\n@@ -1,2 +1,3 @@\n a\n+b\n c\n");
  CHECK(unified_diff("a\nb\nc\n", "a\nc\n", "x", "y") ==
        "--- x\n+++ y\n@@ -1,3 +1,2 @@\n a\n-b\n c\n");
  CHECK(unified_diff("", "new\n", "x", "y") == "--- x\n+++ y\n@@ -0,0 +1 @@\n+new\n");
  CHECK(unified_diff("a\n", "a", "x", "y") ==
        "--- x\n+++ y\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n");
}

TEST_CASE("text diff: every diff of random edits turns the old text into the new") {
  // Applying the hunks must give the new text back: checked by rebuilding it from the diff.
  std::uint32_t state = 7;
  const auto next = [&] { return state = state * 1664525U + 1013904223U; };
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> lines;
    for (int i = 0; i < 30; ++i) lines.push_back("line " + std::to_string(next() % 8));
    std::vector<std::string> edited = lines;
    for (int edit = 0; edit < 6; ++edit) {
      const std::size_t at = next() % (edited.size() + 1);
      if (next() % 2 == 0 && at < edited.size()) {
        edited.erase(edited.begin() + static_cast<std::ptrdiff_t>(at));
      } else {
        edited.insert(edited.begin() + static_cast<std::ptrdiff_t>(at),
                      "new " + std::to_string(next() % 5));
      }
    }
    std::string before;
    std::string after;
    for (const std::string& line : lines) before += line + "\n";
    for (const std::string& line : edited) after += line + "\n";
    const std::string diff = unified_diff(before, after, "a", "b", 1000);
    // With unlimited context there is one hunk holding every line: its ' ' and '+' lines are
    // the new text, its ' ' and '-' lines the old.
    std::string rebuilt_new;
    std::string rebuilt_old;
    std::size_t begin = diff.find("@@", diff.find("@@") + 2) + 3;
    while (begin < diff.size()) {
      const std::size_t end = diff.find('\n', begin);
      const std::string line = diff.substr(begin, end - begin);
      if (line[0] != '-') rebuilt_new += line.substr(1) + "\n";
      if (line[0] != '+') rebuilt_old += line.substr(1) + "\n";
      begin = end + 1;
    }
    if (before == after) continue;
    REQUIRE(rebuilt_new == after);
    REQUIRE(rebuilt_old == before);
  }
}
