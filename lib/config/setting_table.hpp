#pragma once
// Every tunable setting, once: its YAML key, CLI flag, environment variable, range, help and
// scope, and where it lives in TunedSettings (a tool's policy or the process's). The YAML file, the
// environment and the command line all parse values through parse_setting, so a value means the
// same from every source and is refused with the same message; --help and docs/configuration.md
// list this table. Settings that a per-tool rule may override are all of these.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/settings.hpp"
#include "support/error.hpp"

namespace ctxguard::config {

enum class SettingKind {
  kCount,    // a whole number in [min, max]
  kBytes,    // a whole number of bytes, with an optional K, M or G suffix (binary units)
  kSeconds,  // a number of seconds, fractions allowed, in [min, max]
  kSwitch,   // true or false (also on/off, yes/no, 1/0)
  kChoice,   // one of the spec's `choices`, stored as its index
};

// Where a setting may be set, and whether a reload can change it.
enum class SettingScope {
  kTool,     // globally and in per-tool rules; a reload applies it to the next calls
  kProcess,  // globally only (one cache for all tools); a reload applies it
  kStartup,  // globally only; a reload keeps the running value and says so
};

struct SettingSpec {
  std::string_view key;   // YAML key, camelCase: "tokenBudget"
  std::string_view flag;  // CLI flag without dashes: "token-budget"
  std::string_view env;   // environment variable: "CTXGUARD_TOKEN_BUDGET"
  SettingKind kind = SettingKind::kCount;
  SettingScope scope = SettingScope::kTool;
  std::uint64_t min = 0;
  std::uint64_t max = 0;
  std::string_view help;
  // The setting's value in `tuned`, as a number (switches 0/1, seconds in milliseconds): a
  // member of tuned.budget for kTool, of tuned.process for the other scopes.
  std::uint64_t (*get)(const TunedSettings& tuned) = nullptr;
  void (*set)(TunedSettings& tuned, std::uint64_t value) = nullptr;
  std::span<const std::string_view> choices = {};  // kChoice: the names, in stored order
};

// All settings, in the order --help and the docs list them.
std::span<const SettingSpec> setting_table();

// The spec for a YAML key, or nullptr.
const SettingSpec* find_setting(std::string_view key);

// What values `spec` accepts, in words ("a whole number from 1 to 100000").
std::string allowed_values(const SettingSpec& spec);

// One setting a source sets: checked when read (read_setting_value), applied in precedence order
// later with spec->set.
struct SettingValue {
  const SettingSpec* spec = nullptr;
  std::string text;         // as the source wrote it
  std::uint64_t value = 0;  // as spec->set takes it
};

// `text` read as `spec` says: the value, or the problem named with `where` (as parse_setting).
Checked<SettingValue> read_setting_value(const SettingSpec& spec, std::string_view text,
                                         std::string_view where);

// Parses `text` as `spec` says and stores it in `tuned`. A bad value is a problem naming `where`
// (e.g. "tokenBudget", "CTXGUARD_TOKEN_BUDGET", "tools[2].pageSize"), the value and what is
// allowed; `tuned` is unchanged then.
Checked<> parse_setting(const SettingSpec& spec, std::string_view text, std::string_view where,
                        TunedSettings& tuned);

// The value as the docs and the effective-config dump write it ("4000", "256M", "600s", "true",
// "observe").
std::string format_setting(const SettingSpec& spec, const TunedSettings& tuned);

// A rule between two settings that their values break.
struct SettingConflict {
  std::string message;     // "tools[1].pageSize: 500 is above maxPageSize 200" (no stop)
  std::string_view key;    // the setting named first ("pageSize")
  std::string_view other;  // the one it conflicts with ("maxPageSize"), or the same key
};

// Rules between settings (pageSize <= maxPageSize, chunkSize <= tokenBudget <= hardCap); every
// broken one, named with `where` as a prefix ("" for the global settings).
std::vector<SettingConflict> check_setting_rules(const BudgetSettings& budget,
                                                 std::string_view where);

}  // namespace ctxguard::config
