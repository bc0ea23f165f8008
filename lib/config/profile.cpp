#include "config/profile.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/profile_layers.hpp"
#include "support/glob.hpp"

namespace ctxguard::config {

namespace {

constexpr std::size_t kDefaultHardCapRatio = 3;

const SettingSpec& spec_of(std::string_view key) { return *find_setting(key); }

}  // namespace

namespace layers {

std::size_t index_of(const SettingSpec& spec) {
  return static_cast<std::size_t>(&spec - setting_table().data());
}

void apply(const std::vector<SettingValue>& values, TunedSettings& tuned, std::vector<bool>& set) {
  for (const SettingValue& value : values) {
    value.spec->set(tuned, value.value);
    set[index_of(*value.spec)] = true;
  }
}

void derive(BudgetSettings& budget, const std::vector<bool>& set) {
  if (!set[index_of(spec_of("hardCap"))] && budget.hard_cap < budget.token_budget) {
    budget.hard_cap = std::min(budget.token_budget * kDefaultHardCapRatio, kTokensMax);
  }
  if (!set[index_of(spec_of("chunkSize"))] &&
      budget.summary.chunk_tokens > budget.token_budget / 2) {
    budget.summary.chunk_tokens = budget.token_budget / 2;
  }
}

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

}  // namespace layers

namespace {

using layers::apply;
using layers::derive;
using layers::index_of;
using layers::quoted;

std::string field_list(const std::vector<std::string>& fields) {
  std::vector<std::string> items;
  items.reserve(fields.size());
  for (const std::string& field : fields) items.push_back(quoted(field));
  return fmt::format("[{}]", fmt::join(items, ", "));
}

}  // namespace

std::string_view to_string(SettingSource source) {
  switch (source) {
    case SettingSource::kDefault:
      return "default";
    case SettingSource::kDerived:
      return "derived";
    case SettingSource::kFile:
      return "file";
    case SettingSource::kEnvironment:
      return "environment";
    case SettingSource::kCommandLine:
      return "command line";
  }
  return "?";
}

CheckedAll<ProfilePtr> Profile::build(const ConfigSources& sources, const Profile* running) {
  const auto table = setting_table();
  std::vector<std::string> errors = sources.problems;
  auto profile = std::make_shared<Profile>();
  profile->file_path_ = sources.file_path;
  profile->sources_.assign(table.size(), SettingSource::kDefault);

  TunedSettings global = sources.base;
  std::vector<bool> set(table.size(), false);
  // In precedence order: each source's values land over the last one's, and so do their marks.
  const auto apply_source = [&](const std::vector<SettingValue>& values, SettingSource source) {
    apply(values, global, set);
    for (const SettingValue& value : values) profile->sources_[index_of(*value.spec)] = source;
  };
  if (sources.file) apply_source(sources.file->settings, SettingSource::kFile);
  apply_source(sources.environment, SettingSource::kEnvironment);
  apply_source(sources.command_line, SettingSource::kCommandLine);

  if (running != nullptr) {
    for (const SettingSpec& spec : table) {
      if (spec.scope != SettingScope::kStartup) continue;
      const TunedSettings old = running->tuned();
      if (spec.get(global) == spec.get(old)) continue;
      profile->notes_.push_back(fmt::format(
          "{}: {} -> {} takes effect at the next start; {} stays in force", spec.key,
          format_setting(spec, old), format_setting(spec, global), format_setting(spec, old)));
      spec.set(global, spec.get(old));
    }
  }

  // Rules start from the values the sources gave, before anything is derived from them: a rule
  // with its own budget derives its own cap and chunk size.
  const TunedSettings underived = global;
  derive(global.budget, set);
  for (const SettingSpec& spec : table) {
    if (spec.get(global) != spec.get(underived)) {
      profile->sources_[index_of(spec)] = SettingSource::kDerived;
    }
  }
  for (const SettingConflict& conflict : check_setting_rules(global.budget, "")) {
    errors.push_back(profile->explain(conflict));
  }
  profile->global_ = Resolved{"*", global.budget, planning_budget(global.budget), {}, {}};
  profile->process_ = global.process;

  if (sources.file) {
    profile->rules_ = resolve_tool_rules(sources.file->tools, underived, set, &errors);
  }
  profile->build_client_scopes(sources, &errors);
  if (!errors.empty()) return Problems{std::move(errors)};
  return ProfilePtr(std::move(profile));
}

std::vector<Profile::Resolved> Profile::resolve_tool_rules(const std::vector<ToolRule>& tools,
                                                           const TunedSettings& underived,
                                                           const std::vector<bool>& set,
                                                           std::vector<std::string>* errors) {
  std::vector<Resolved> rules;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const ToolRule& rule = tools[i];
    const std::string where = fmt::format("tools[{}]", i);
    TunedSettings tuned = underived;
    std::vector<bool> rule_set = set;
    Resolved resolved;
    apply(rule.overrides, tuned, rule_set);
    BudgetSettings& budget = tuned.budget;
    for (const SettingValue& value : rule.overrides) resolved.keys.push_back(value.spec->key);
    derive(budget, rule_set);
    if (!rule.fields.empty()) {
      // After any --project rules: a flag outranks the file.
      budget.summary.projections.push_back(ProjectionRule{rule.glob, rule.fields});
    }
    // A conflict the rule does not take part in is the globals' (reported above, if at all).
    if (errors != nullptr) report_own_conflicts(budget, where, resolved.keys, *errors);
    resolved.glob = rule.glob;
    resolved.configured = budget;
    resolved.planning = planning_budget(budget);
    resolved.fields = rule.fields;
    rules.push_back(std::move(resolved));
  }
  return rules;
}

void Profile::report_own_conflicts(const BudgetSettings& budget, std::string_view where,
                                   const std::vector<std::string_view>& keys,
                                   std::vector<std::string>& errors) {
  for (SettingConflict& conflict : check_setting_rules(budget, where)) {
    const bool own = std::any_of(keys.begin(), keys.end(), [&conflict](std::string_view key) {
      return key == conflict.key || key == conflict.other;
    });
    if (own) errors.push_back(conflict.message + '.');
  }
}

ProfilePtr Profile::of(const BudgetSettings& budget, const ProcessSettings& process) {
  ConfigSources sources;
  sources.base = {budget, process};
  auto built = build(sources);
  if (!built) throw std::invalid_argument(built.error().messages.front());
  return *std::move(built);
}

std::string Profile::explain(const SettingConflict& conflict) const {
  const auto origin = [this](std::string_view key) -> std::string {
    const SettingSpec& spec = spec_of(key);
    switch (sources_[index_of(spec)]) {
      case SettingSource::kDefault:
        return fmt::format("{}: the default", key);
      case SettingSource::kDerived:
        return fmt::format("{}: follows tokenBudget", key);
      case SettingSource::kFile:
        return fmt::format("{}: from {}", key, file_path_ ? *file_path_ : "the file");
      case SettingSource::kEnvironment:
        return fmt::format("{}: from {}", key, spec.env);
      case SettingSource::kCommandLine:
        return fmt::format("{}: from --{}", key, spec.flag);
    }
    return std::string(key);
  };
  if (conflict.key == conflict.other) {
    return fmt::format("{} ({}).", conflict.message, origin(conflict.key));
  }
  return fmt::format("{} ({}; {}).", conflict.message, origin(conflict.key),
                     origin(conflict.other));
}

const BudgetSettings& Profile::for_resources() const { return global_.planning; }

const Profile::Resolved& Profile::resolve(std::string_view client, std::string_view tool) const {
  const Resolved* global = &global_;
  const std::vector<Resolved>* rules = &rules_;
  if (const ClientScope* scope = scope_of(client)) {
    global = &scope->global;
    rules = &scope->rules;
  }
  for (const Resolved& rule : *rules) {
    if (glob_matches(rule.glob, tool)) return rule;
  }
  return *global;
}

const BudgetSettings& Profile::for_tool(std::string_view tool) const {
  return resolve({}, tool).planning;
}

const BudgetSettings& Profile::configured_for_tool(std::string_view tool) const {
  return resolve({}, tool).configured;
}

const BudgetSettings& Profile::for_call(std::string_view client, std::string_view tool) const {
  return resolve(client, tool).planning;
}

const BudgetSettings& Profile::configured_for_call(std::string_view client,
                                                   std::string_view tool) const {
  return resolve(client, tool).configured;
}

bool Profile::enforces_any() const {
  const auto enforces = [](const Resolved& global, const std::vector<Resolved>& rules) {
    return !global.configured.observe ||
           std::any_of(rules.begin(), rules.end(),
                       [](const Resolved& rule) { return !rule.configured.observe; });
  };
  // A client's rule may enforce where the global settings observe.
  return enforces(global_, rules_) || std::any_of(client_scopes_.begin(), client_scopes_.end(),
                                                  [&enforces](const ClientScope& scope) {
                                                    return enforces(scope.global, scope.rules);
                                                  });
}

std::vector<Profile::ScopedSettings> Profile::tool_rules() const {
  std::vector<ScopedSettings> list;
  for (const Resolved& rule : rules_) list.push_back({rule.glob, &rule.configured});
  return list;
}

std::vector<Profile::ScopedSettings> Profile::client_scope_settings() const {
  std::vector<ScopedSettings> list;
  for (const ClientScope& scope : client_scopes_) {
    list.push_back({"", &scope.global.configured});
    for (const Resolved& rule : scope.rules) list.push_back({rule.glob, &rule.configured});
  }
  return list;
}

std::size_t Profile::largest_max_page_size() const {
  std::size_t largest = global_.configured.max_page_size;
  for (const Resolved& rule : rules_) largest = std::max(largest, rule.configured.max_page_size);
  return largest;
}

std::size_t Profile::largest_hard_cap() const {
  std::size_t largest = global_.configured.hard_cap;
  for (const Resolved& rule : rules_) largest = std::max(largest, rule.configured.hard_cap);
  return largest;
}

std::string Profile::describe() const {
  const auto table = setting_table();
  std::string out = fmt::format("# ctxguard effective configuration ({})\n",
                                file_path_ ? "file " + *file_path_ : "no file");
  std::size_t width = 0;
  for (const SettingSpec& spec : table) {
    width = std::max(width, spec.key.size() + format_setting(spec, tuned()).size());
  }
  for (const SettingSpec& spec : table) {
    const std::string value = format_setting(spec, tuned());
    out += fmt::format("{}: {}{}  # {}\n", spec.key, value,
                       std::string(width - spec.key.size() - value.size(), ' '),
                       to_string(sources_[index_of(spec)]));
  }
  out += describe_clients();
  if (rules_.empty()) return out + "tools: []\n";
  out += "tools:  # first match wins\n";
  for (const Resolved& rule : rules_) {
    out += fmt::format("  - match: {}\n", quoted(rule.glob));
    for (const std::string_view key : rule.keys) {
      out += fmt::format("    {}: {}\n", key,
                         format_setting(spec_of(key), {rule.configured, process_}));
    }
    // What derive() gave the rule: read back, the global value (now set) would apply instead.
    for (const std::string_view key : {"hardCap", "chunkSize"}) {
      if (std::find(rule.keys.begin(), rule.keys.end(), key) != rule.keys.end()) continue;
      const std::string value = format_setting(spec_of(key), {rule.configured, process_});
      if (value != format_setting(spec_of(key), tuned())) {
        out += fmt::format("    {}: {}  # derived\n", key, value);
      }
    }
    if (!rule.fields.empty()) out += fmt::format("    fields: {}\n", field_list(rule.fields));
  }
  return out;
}

std::vector<std::string> Profile::changes_from(const Profile& older) const {
  std::vector<std::string> changes;
  for (const SettingSpec& spec : setting_table()) {
    const std::string before = format_setting(spec, older.tuned());
    const std::string after = format_setting(spec, tuned());
    if (before != after) changes.push_back(fmt::format("{}: {} -> {}", spec.key, before, after));
  }
  // Rules by glob: one present in both compares the keys either version overrides.
  const auto find_rule = [](const std::vector<Resolved>& rules, std::string_view glob) {
    const auto found = std::find_if(rules.begin(), rules.end(),
                                    [glob](const Resolved& rule) { return rule.glob == glob; });
    return found != rules.end() ? &*found : nullptr;
  };
  for (const Resolved& rule : rules_) {
    const Resolved* old = find_rule(older.rules_, rule.glob);
    if (old == nullptr) {
      changes.push_back(fmt::format("tools {}: added", quoted(rule.glob)));
      continue;
    }
    std::vector<std::string_view> keys = rule.keys;
    keys.insert(keys.end(), old->keys.begin(), old->keys.end());
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (const std::string_view key : keys) {
      const std::string before = format_setting(spec_of(key), {old->configured, older.process_});
      const std::string after = format_setting(spec_of(key), {rule.configured, process_});
      if (before != after) {
        changes.push_back(
            fmt::format("tools {}.{}: {} -> {}", quoted(rule.glob), key, before, after));
      }
    }
    if (rule.fields != old->fields) {
      changes.push_back(fmt::format("tools {}.fields: {} -> {}", quoted(rule.glob),
                                    field_list(old->fields), field_list(rule.fields)));
    }
  }
  for (const Resolved& rule : older.rules_) {
    if (find_rule(rules_, rule.glob) == nullptr) {
      changes.push_back(fmt::format("tools {}: removed", quoted(rule.glob)));
    }
  }
  bool reordered = false;
  std::vector<std::string_view> order;
  for (const Resolved& rule : rules_) {
    if (find_rule(older.rules_, rule.glob) != nullptr) order.push_back(rule.glob);
  }
  std::size_t next = 0;
  for (const Resolved& rule : older.rules_) {
    if (find_rule(rules_, rule.glob) == nullptr) continue;
    if (order[next++] != rule.glob) reordered = true;
  }
  if (reordered) changes.emplace_back("tools: the order of the rules changed");
  const auto client_rules = [](const Profile& profile) {
    std::vector<std::string> lines;
    for (const ClientLayer& rule : profile.client_rules_) {
      std::string line = quoted(rule.glob);
      for (const SettingValue& value : rule.values) {
        line += fmt::format(" {}={}", value.spec->key, value.text);
      }
      lines.push_back(std::move(line));
    }
    return lines;
  };
  const std::vector<std::string> before = client_rules(older);
  const std::vector<std::string> after = client_rules(*this);
  if (before != after) {
    changes.push_back(
        fmt::format("clients: [{}] -> [{}]", fmt::join(before, "; "), fmt::join(after, "; ")));
  }
  return changes;
}

CheckedAll<ProfilePtr> load_profile(ConfigSources& sources, const Profile* running) {
  sources.file.reset();
  if (sources.file_path) {
    auto file = read_config_file(*sources.file_path);
    if (!file) {
      Problems problems{sources.problems};
      const Problems found = file.error();
      problems.messages.insert(problems.messages.end(), found.messages.begin(),
                               found.messages.end());
      return problems;
    }
    sources.file = *std::move(file);
  }
  return Profile::build(sources, running);
}

}  // namespace ctxguard::config
