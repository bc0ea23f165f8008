#pragma once
// Tool-name globs, as configuration writes them: `*` matches any run of characters, `?` one.

#include <string_view>

namespace ctxguard {

bool glob_matches(std::string_view glob, std::string_view name);

}  // namespace ctxguard
