#include "config/profile.hpp"

// The client scopes of a Profile: the built-in presets and the file's `clients:` rules, every
// combination a client's name can select resolved once, and how a name selects one
// (docs/configuration.md section 4.3).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/client_presets.hpp"
#include "config/profile_layers.hpp"
#include "support/glob.hpp"

namespace ctxguard::config {

namespace {

using layers::apply;
using layers::derive;
using layers::quoted;

}  // namespace

void Profile::build_client_scopes(const ConfigSources& sources, std::vector<std::string>* errors) {
  // The layers a client may add: the built-in presets (under the user's sources) and the file's
  // `clients:` rules (over them), each read like any setting.
  std::vector<ClientLayer> presets;
  for (const ClientPreset& preset : client_presets()) {
    ClientLayer& layer = presets.emplace_back();
    layer.glob = std::string(preset.match);
    layer.origin = fmt::format("preset {}", quoted(preset.match));
    for (const PresetSetting& setting : preset.settings) {
      // A preset sets limits only (it tightens them, see resolve_client_scope).
      if (!is_client_limit(setting.key)) {
        errors->push_back(fmt::format("{}: {} is not a client limit", layer.origin, setting.key));
        continue;
      }
      auto value = read_setting_value(*find_setting(setting.key), setting.value, layer.origin);
      if (!value) {
        errors->push_back(std::move(value.error().message));
        continue;
      }
      layer.values.push_back(*std::move(value));
    }
  }
  std::vector<ClientLayer> rules;
  if (sources.file) {
    for (std::size_t i = 0; i < sources.file->clients.size(); ++i) {
      const ToolRule& rule = sources.file->clients[i];
      rules.push_back({rule.glob, fmt::format("clients[{}]", i), rule.overrides});
    }
  }
  // Every combination a client name can select: its preset (or none) and its rule (or none).
  for (std::size_t preset = 0; preset <= presets.size(); ++preset) {
    for (std::size_t rule = 0; rule <= rules.size(); ++rule) {
      if (preset == presets.size() && rule == rules.size()) continue;  // the global scope
      ClientScope& scope = client_scopes_.emplace_back();
      scope.preset = preset < presets.size() ? preset : kNoLayer;
      scope.rule = rule < rules.size() ? rule : kNoLayer;
      resolve_client_scope(sources, preset < presets.size() ? &presets[preset] : nullptr,
                           rule < rules.size() ? &rules[rule] : nullptr, scope,
                           preset == presets.size() || rule == rules.size() ? errors : nullptr);
    }
  }
  presets_ = std::move(presets);
  client_rules_ = std::move(rules);
}

void Profile::resolve_client_scope(const ConfigSources& sources, const ClientLayer* preset,
                                   const ClientLayer* rule, ClientScope& scope,
                                   std::vector<std::string>* errors) const {
  const auto table = setting_table();
  // The process's settings (tuned.process) are the global ones whatever the client: only
  // tuned.budget is kept.
  TunedSettings tuned = sources.base;
  std::vector<bool> set(table.size(), false);
  std::vector<std::string_view> keys;  // what the client's layers set
  if (sources.file) apply(sources.file->settings, tuned, set);
  apply(sources.environment, tuned, set);
  apply(sources.command_line, tuned, set);
  // A preset's limits tighten what the sources say, never loosen it: a limit the user set lower
  // stays, and a file that spells out `maxChars: 0` (no limit) still gets the client's.
  if (preset != nullptr) {
    for (const SettingValue& value : preset->values) {
      const std::uint64_t current = value.spec->get(tuned);
      if (current == 0 || value.value < current) value.spec->set(tuned, value.value);
    }
  }
  if (rule != nullptr) apply(rule->values, tuned, set);
  for (const ClientLayer* layer : {preset, rule}) {
    if (layer == nullptr) continue;
    for (const SettingValue& value : layer->values) keys.push_back(value.spec->key);
  }
  const TunedSettings underived = tuned;
  BudgetSettings& budget = tuned.budget;
  derive(budget, set);
  if (errors != nullptr) {
    const ClientLayer* named = rule != nullptr ? rule : preset;
    report_own_conflicts(budget, named->origin, keys, *errors);
  }
  scope.global = Resolved{"*", budget, planning_budget(budget), keys, {}};
  if (sources.file) scope.rules = resolve_tool_rules(sources.file->tools, underived, set, nullptr);
}

const Profile::ClientScope* Profile::scope_of(std::string_view client) const {
  if (client.empty()) return nullptr;
  const auto first_match = [client](const std::vector<ClientLayer>& layers) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (glob_matches(layers[i].glob, client)) return i;
    }
    return kNoLayer;
  };
  const std::size_t preset = first_match(presets_);
  const std::size_t rule = first_match(client_rules_);
  if (preset == kNoLayer && rule == kNoLayer) return nullptr;  // an unknown client
  for (const ClientScope& scope : client_scopes_) {
    if (scope.preset == preset && scope.rule == rule) return &scope;
  }
  return nullptr;
}

std::string Profile::describe_clients() const {
  std::string out;
  if (client_rules_.empty()) {
    out += "clients: []\n";
  } else {
    out += "clients:  # by clientInfo.name, first match wins; over every setting above\n";
    for (const ClientLayer& rule : client_rules_) {
      out += fmt::format("  - match: {}\n", quoted(rule.glob));
      for (const SettingValue& value : rule.values) {
        out += fmt::format("    {}: {}\n", value.spec->key, value.text);
      }
    }
  }
  out +=
      "# built-in client presets (docs/clients.md): each limit the stricter of the preset's and\n"
      "# the one above; a `clients:` rule overrides both\n";
  for (const ClientPreset& preset : client_presets()) {
    std::vector<std::string> settings;
    for (const PresetSetting& setting : preset.settings) {
      settings.push_back(fmt::format("{}: {}", setting.key, setting.value));
    }
    out += fmt::format("#   {} ({}): {}\n", quoted(preset.match), preset.client,
                       fmt::join(settings, ", "));
  }
  return out;
}

}  // namespace ctxguard::config
