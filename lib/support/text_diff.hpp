#pragma once
// A unified diff of two texts, line by line, as `diff -u` prints it: what `ctxguard wrap
// --dry-run` shows of a change before making it. Myers' O((N+M)D) algorithm ("An O(ND)
// Difference Algorithm and Its Variations", 1986), so a large file with a few changed lines
// (a ~/.claude.json of thousands of lines) costs little.

#include <string>
#include <string_view>

namespace ctxguard {

// "--- OLD_NAME\n+++ NEW_NAME\n@@ -a,b +c,d @@\n" hunks with `context` unchanged lines around
// each change; empty when the texts are equal. A text without a final line break gets
// "\ No newline at end of file" after its last line, as diff prints it.
std::string unified_diff(std::string_view before, std::string_view after,
                         std::string_view before_name, std::string_view after_name,
                         std::size_t context = 3);

}  // namespace ctxguard
