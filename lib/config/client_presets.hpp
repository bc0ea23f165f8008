#pragma once
// Built-in limits for the MCP clients whose limits on a tool result are known: each cuts, fails
// or writes to a file past its own limit, in its own unit (docs/clients.md has the table and the
// sources). A preset applies to calls from a client whose clientInfo.name matches it: each of its
// limits tightens the one the file, the variables and the flags give (the stricter wins), and a
// `clients:` rule overrides it (docs/configuration.md, "Clients").

#include <span>
#include <string_view>

namespace ctxguard::config {

struct PresetSetting {
  std::string_view key;    // a setting_table() key
  std::string_view value;  // as a YAML file would write it
};

struct ClientPreset {
  std::string_view match;   // glob over clientInfo.name, as the client sends it
  std::string_view client;  // the client, in words
  std::span<const PresetSetting> settings;
  std::string_view source;  // where the figure comes from (docs/clients.md)
};

// The presets, in the order they are matched (the first match wins).
std::span<const ClientPreset> client_presets();

// Whether `key` is a client limit (maxChars, maxBytes, maxLines, maxJsonBytes): what a preset
// may set.
bool is_client_limit(std::string_view key);

}  // namespace ctxguard::config
