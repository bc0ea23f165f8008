#include "config/config_file.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace ctxguard::config {

namespace {

// Reads one setting (`key`: `node`) into `out`; problems go to `errors`, named `where`.
void read_setting(const std::string& key, const YAML::Node& node, const std::string& where,
                  std::vector<SettingValue>& out, std::vector<std::string>& errors) {
  const SettingSpec* spec = find_setting(key);
  if (spec == nullptr) {
    errors.push_back(fmt::format("{}: unknown setting.", where));
    return;
  }
  if (!node.IsScalar()) {
    errors.push_back(fmt::format("{}: must be a single value, not a list or a map.", where));
    return;
  }
  BudgetSettings scratch;  // the value is checked now, applied in precedence order later
  if (auto problem = parse_setting(*spec, node.Scalar(), where, scratch)) {
    errors.push_back(std::move(*problem));
    return;
  }
  out.push_back(SettingValue{spec, node.Scalar()});
}

void read_rule(const YAML::Node& node, const std::string& where, ConfigFile& file,
               std::vector<std::string>& errors) {
  if (!node.IsMap()) {
    errors.push_back(
        fmt::format("{}: must be a map with `match` and the settings to override.", where));
    return;
  }
  ToolRule rule;
  for (const auto& member : node) {
    const std::string key = member.first.as<std::string>();
    const std::string at = fmt::format("{}.{}", where, key);
    if (key == "match") {
      if (!member.second.IsScalar() || member.second.Scalar().empty()) {
        errors.push_back(fmt::format("{}: must be a tool name or glob such as \"read_*\".", at));
      } else {
        rule.glob = member.second.Scalar();
      }
    } else if (key == "fields") {
      if (!member.second.IsSequence() || member.second.size() == 0) {
        errors.push_back(fmt::format("{}: must be a list of field names, e.g. [id, status].", at));
        continue;
      }
      for (const auto& field : member.second) {
        if (!field.IsScalar() || field.Scalar().empty()) {
          errors.push_back(fmt::format("{}: every field must be a name such as guest.name.", at));
          break;
        }
        rule.fields.emplace_back(field.Scalar());
      }
    } else {
      read_setting(key, member.second, at, rule.overrides, errors);
    }
  }
  if (rule.glob.empty() && !node["match"]) {
    errors.push_back(
        fmt::format("{}: `match` is missing: which tools does this rule apply to?", where));
  }
  file.tools.push_back(std::move(rule));
}

}  // namespace

std::variant<ConfigFile, std::vector<std::string>> parse_config(std::string_view yaml) {
  std::vector<std::string> errors;
  ConfigFile file;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& error) {
    return std::vector<std::string>{fmt::format("line {}, column {}: {}", error.mark.line + 1,
                                                error.mark.column + 1, error.msg)};
  }
  if (root.IsNull()) return file;  // an empty file: defaults
  if (!root.IsMap()) return std::vector<std::string>{"the file must be a map of settings."};
  for (const auto& member : root) {
    const std::string key = member.first.as<std::string>();
    if (key == "mode") {
      const std::string mode = member.second.IsScalar() ? member.second.Scalar() : "";
      if (mode == "enforce") {
        file.mode = Mode::kEnforce;
      } else if (mode == "observe") {
        file.mode = Mode::kObserve;
      } else {
        errors.push_back(fmt::format("mode: {} is not allowed: it must be enforce or observe.",
                                     mode.empty() ? "that" : mode));
      }
    } else if (key == "tools") {
      if (!member.second.IsSequence()) {
        errors.push_back("tools: must be a list of rules, each with `match`.");
        continue;
      }
      for (std::size_t i = 0; i < member.second.size(); ++i) {
        read_rule(member.second[i], fmt::format("tools[{}]", i), file, errors);
      }
    } else {
      read_setting(key, member.second, key, file.settings, errors);
    }
  }
  if (!errors.empty()) return errors;
  return file;
}

}  // namespace ctxguard::config
