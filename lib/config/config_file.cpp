#include "config/config_file.hpp"

#include "support/file_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

namespace ctxguard::config {

namespace {

// Edits (insert, delete, replace; case ignored) turning `a` into `b`: spots a misspelt key.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      const std::size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

// Where a setting stands in the file: at the top level, or in a rule (tools[] or clients[]),
// which takes per-tool settings only.
enum class SettingPlace { kTopLevel, kRule };

// What to say after "unknown setting.": the key it most likely meant, or every key.
std::string unknown_key_hint(std::string_view key, SettingPlace place) {
  const bool in_rule = place == SettingPlace::kRule;
  std::vector<std::string_view> keys;
  for (const SettingSpec& spec : setting_table()) {
    if (!in_rule || spec.scope == SettingScope::kTool) keys.push_back(spec.key);
  }
  keys.emplace_back(in_rule ? "fields" : "tools");
  if (!in_rule) keys.emplace_back("clients");
  if (in_rule) keys.emplace_back("match");
  std::string_view nearest;
  std::size_t best = 3;  // more edits than this is a different word
  for (const std::string_view candidate : keys) {
    const std::size_t distance = edit_distance(key, candidate);
    if (distance < best) {
      best = distance;
      nearest = candidate;
    }
  }
  if (!nearest.empty()) return fmt::format(" Did you mean {}?", nearest);
  return fmt::format(" Known keys: {}.", fmt::join(keys, ", "));
}

// The name of a map key; a key that is a list or a map is legal YAML (`? [a, b]`) that yaml-cpp
// throws on when read as a string.
Checked<std::string> key_name(const YAML::Node& key, std::string_view where) {
  if (key.IsScalar() || key.IsNull()) return {boost::system::in_place_value, key.as<std::string>()};
  return Problem{fmt::format("{}line {}: a key must be a setting's name, not a list or a map.",
                             where, key.Mark().line + 1)};
}

// Reads one setting (`key`: `node`) into `out`; problems go to `errors`, named `where`.
void read_setting(const std::string& key, const YAML::Node& node, const std::string& where,
                  SettingPlace place, std::vector<SettingValue>& out,
                  std::vector<std::string>& errors) {
  const SettingSpec* spec = find_setting(key);
  if (spec == nullptr) {
    errors.push_back(fmt::format("{}: unknown setting.{}", where, unknown_key_hint(key, place)));
    return;
  }
  if (place == SettingPlace::kRule && spec->scope != SettingScope::kTool) {
    errors.push_back(fmt::format(
        "{}: applies to the whole process (one cache and one cursor lifetime for all tools), so "
        "it cannot be set per tool; set it at the top level.",
        where));
    return;
  }
  if (node.IsNull()) {
    errors.push_back(
        fmt::format("{}: no value given: it must be {}.", where, allowed_values(*spec)));
    return;
  }
  if (!node.IsScalar()) {
    errors.push_back(fmt::format("{}: must be a single value, not a list or a map.", where));
    return;
  }
  auto value = read_setting_value(*spec, node.Scalar(), where);
  if (!value) {
    errors.push_back(std::move(value.error().message));
    return;
  }
  out.push_back(*std::move(value));
}

// A rule's subject: a tools[] rule matches tool names and may carry `fields`; a clients[] rule
// matches client names (clientInfo.name).
enum class RuleOf { kTools, kClients };

void read_rule(const YAML::Node& node, const std::string& where, RuleOf of,
               std::vector<ToolRule>& rules, std::vector<std::string>& errors) {
  if (!node.IsMap()) {
    errors.push_back(
        fmt::format("{}: must be a map with `match` and the settings to override.", where));
    return;
  }
  ToolRule rule;
  std::set<std::string> seen;
  for (const auto& member : node) {
    const auto name = key_name(member.first, where + ": ");
    if (!name) {
      errors.push_back(name.error().message);
      continue;
    }
    const std::string& key = *name;
    const std::string at = fmt::format("{}.{}", where, key);
    if (!seen.insert(key).second) {
      errors.push_back(fmt::format("{}: given twice in one rule: which one is meant?", at));
      continue;
    }
    if (key == "match") {
      if (!member.second.IsScalar() || member.second.Scalar().empty()) {
        errors.push_back(
            of == RuleOf::kTools
                ? fmt::format("{}: must be a tool name or glob such as \"read_*\".", at)
                : fmt::format("{}: must be a client name (clientInfo.name) or glob "
                              "such as \"Visual Studio Code*\".",
                              at));
      } else {
        rule.glob = member.second.Scalar();
      }
    } else if (key == "fields" && of == RuleOf::kTools) {
      if (!member.second.IsSequence() || member.second.size() == 0) {
        errors.push_back(fmt::format("{}: must be a list of field names, e.g. [id, status].", at));
        continue;
      }
      for (const auto& field : member.second) {
        if (!field.IsScalar() || !is_field_path(field.Scalar())) {
          errors.push_back(
              fmt::format("{}: {} is not a field name: names are like id or "
                          "guest.name (dots reach into nested objects).",
                          at, field.IsScalar() ? field.Scalar() : "a list or map"));
          break;
        }
        rule.fields.emplace_back(field.Scalar());
      }
    } else {
      read_setting(key, member.second, at, SettingPlace::kRule, rule.overrides, errors);
    }
  }
  if (rule.glob.empty() && !node["match"]) {
    errors.push_back(fmt::format("{}: `match` is missing: which {} does this rule apply to?", where,
                                 of == RuleOf::kTools ? "tools" : "clients"));
  }
  rules.push_back(std::move(rule));
}

}  // namespace

bool is_field_path(std::string_view field) {
  return !field.empty() && field.front() != '.' && field.back() != '.' &&
         field.find("..") == std::string_view::npos;
}

CheckedAll<ConfigFile> read_config_file(const std::string& path) {
  const auto text = read_file_text(path, kMaxConfigBytes);
  if (!text) return Problems{{text.error().message}};
  auto parsed = parse_config(*text);
  if (!parsed) {
    Problems named = parsed.error();
    for (std::string& error : named.messages) error = fmt::format("{}: {}", path, error);
    return named;
  }
  return parsed;
}

CheckedAll<ConfigFile> parse_config(std::string_view yaml) {
  std::vector<std::string> errors;
  ConfigFile file;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& error) {
    return Problems{{fmt::format("line {}, column {}: {}", error.mark.line + 1,
                                 error.mark.column + 1, error.msg)}};
  }
  if (root.IsNull()) return file;  // an empty file: defaults
  if (!root.IsMap()) return Problems{{"the file must be a map of settings."}};
  std::set<std::string> seen;
  for (const auto& member : root) {
    const auto name = key_name(member.first, "");
    if (!name) {
      errors.push_back(name.error().message);
      continue;
    }
    const std::string& key = *name;
    if (!seen.insert(key).second) {
      errors.push_back(fmt::format("{}: given twice (line {}): which one is meant?", key,
                                   member.first.Mark().line + 1));
      continue;
    }
    if (key == "tools" || key == "clients") {
      if (member.second.IsNull()) continue;  // `tools:` with nothing under it: no rules
      if (!member.second.IsSequence()) {
        errors.push_back(fmt::format("{}: must be a list of rules, each with `match`.", key));
        continue;
      }
      const RuleOf of = key == "tools" ? RuleOf::kTools : RuleOf::kClients;
      for (std::size_t i = 0; i < member.second.size(); ++i) {
        read_rule(member.second[i], fmt::format("{}[{}]", key, i), of,
                  of == RuleOf::kTools ? file.tools : file.clients, errors);
      }
    } else {
      read_setting(key, member.second, key, SettingPlace::kTopLevel, file.settings, errors);
    }
  }
  if (!errors.empty()) return Problems{std::move(errors)};
  return file;
}

}  // namespace ctxguard::config
