#pragma once
// The YAML configuration file: global settings, the mode, and an ordered
// list of per-tool rules. Parsing checks everything and reports every problem with its key path;
// a file with any problem is refused whole (the caller keeps what it had).
//
//   mode: enforce            # or observe: forward answers untouched, log what would change
//   tokenBudget: 4000        # any key of setting_table.hpp
//   tools:                   # first match wins
//     - match: "read_*"
//       chunkSize: 4000
//     - match: list_bookings
//       pageSize: 100
//       fields: [id, status, guest.name]
//   clients:                 # by clientInfo.name; first match wins, over the built-in presets
//     - match: "Visual Studio Code*"
//       maxChars: 8000

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/setting_table.hpp"
#include "config/settings.hpp"

namespace ctxguard::config {

struct ToolRule {
  std::string glob;                     // '*' and '?' wildcards over the tool name
  std::vector<SettingValue> overrides;  // applied over the global settings
  std::vector<std::string> fields;      // the projection map for these tools (empty: automatic)
};

struct ConfigFile {
  std::vector<SettingValue> settings;  // the global settings the file sets, `mode` included
  std::vector<ToolRule> tools;
  std::vector<ToolRule> clients;  // `glob` over client names; no `fields`
};

// Every problem of `yaml`, or the file. Problems name the key path ("tools[1].pageSize"), the
// value and what is allowed.
CheckedAll<ConfigFile> parse_config(std::string_view yaml);

// A configuration file is a few KB; anything past this is a mistake (a log, a binary).
inline constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

// Reads and parses the file at `path`; problems are prefixed with the path ("ctxguard.yaml:
// tools[1].pageSize: ..."), unreadable and oversized files included.
CheckedAll<ConfigFile> read_config_file(const std::string& path);

// Whether `field` is a field name or a dotted path into nested objects ("guest.name").
bool is_field_path(std::string_view field);

}  // namespace ctxguard::config
