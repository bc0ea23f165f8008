#pragma once
// How Profile layers settings, shared by profile.cpp and profile_clients.cpp (internal to
// lib/config).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "config/setting_table.hpp"
#include "config/settings.hpp"

namespace ctxguard::config::layers {

// The position of `spec` in setting_table(): the index of its "set" mark.
std::size_t index_of(const SettingSpec& spec);

// Applies `values` (checked when they were read) over `tuned`, marking what they set.
void apply(const std::vector<SettingValue>& values, TunedSettings& tuned, std::vector<bool>& set);

// The defaults that follow other settings, for those no source set: a budget raised past the
// default cap keeps the 1:3 ratio (the user asked for more room, not for an error), and a budget
// lowered below twice the chunk size halves it (a chunk and its metadata fit in one answer).
void derive(BudgetSettings& budget, const std::vector<bool>& set);

// `text` as a double-quoted YAML scalar.
std::string quoted(std::string_view text);

}  // namespace ctxguard::config::layers
