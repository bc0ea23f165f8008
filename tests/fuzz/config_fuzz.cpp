// Fuzz target: the YAML configuration file (config::parse_config) and the profile built from it
// (config::Profile::build): what a reload reads from a file anyone may have edited.
//
// Input: the YAML text.
// Invariants:
//   - parse_config returns its problems, never throws (config_file.hpp: every problem of the
//     file, or the file); so does Profile::build;
//   - a refused file has at least one problem, none of them empty;
//   - an accepted file's settings are in their ranges (setting_table.hpp), and the profile built
//     from it breaks no rule between settings, globally or for any rule's tools;
//   - the profile's effective configuration (describe()) reads back with parse_config, as
//     profile.hpp promises.

#include <string>
#include <variant>
#include <vector>

#include "config/config_file.hpp"
#include "config/profile.hpp"
#include "config/setting_table.hpp"
#include "fuzz_support.hpp"

namespace {

using ctxguard::config::BudgetSettings;
using ctxguard::config::ConfigFile;
using ctxguard::config::ConfigSources;
using ctxguard::config::Profile;
using ctxguard::config::ProfilePtr;
using ctxguard::config::SettingKind;
using ctxguard::fuzz::excerpt;
using ctxguard::fuzz::require;

void require_problems(const std::vector<std::string>& problems, std::string_view what) {
  require(!problems.empty(), "a refusal names at least one problem", what);
  for (const std::string& problem : problems) {
    require(!problem.empty(), "each problem says something", what);
  }
}

void require_in_ranges(const ctxguard::config::TunedSettings& tuned, std::string_view what) {
  for (const auto& spec : ctxguard::config::setting_table()) {
    const std::uint64_t scale = spec.kind == SettingKind::kSeconds ? 1000 : 1;
    const std::uint64_t value = spec.get(tuned);
    require(value >= spec.min * scale && value <= spec.max * scale, "settings are in range",
            std::string(what) + ": " + std::string(spec.key) + " = " + std::to_string(value));
  }
  const auto conflicts = ctxguard::config::check_setting_rules(tuned.budget, "");
  require(conflicts.empty(), "an accepted profile breaks no rule between settings",
          std::string(what) + ": " + (conflicts.empty() ? "" : conflicts.front().message));
}

void check_file(const ConfigFile& file, std::string_view yaml) {
  for (const auto& value : file.settings) {
    require(value.spec != nullptr, "every setting read names its spec", excerpt(yaml));
  }
  ConfigSources sources;
  sources.file = file;
  auto built = Profile::build(sources);
  if (!built) {
    require_problems(built.error().messages, "Profile::build");
    return;
  }
  const ProfilePtr& profile = *built;
  require_in_ranges({profile->global(), profile->process()}, "global");
  for (const auto& rule : file.tools) {
    // The rule's own glob names tools it matches (the first matching rule may be an earlier one).
    require_in_ranges({profile->configured_for_tool(rule.glob), profile->process()},
                      "rule " + rule.glob);
  }
  const std::string described = profile->describe();
  const auto reread = ctxguard::config::parse_config(described);
  if (!reread) {
    ctxguard::fuzz::invariant_broken("the effective configuration reads back",
                                     reread.error().messages.front() + "\n" + described);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  try {
    auto parsed = ctxguard::config::parse_config(yaml);
    if (!parsed) {
      require_problems(parsed.error().messages, excerpt(yaml));
    } else {
      check_file(*parsed, yaml);
    }
  } catch (const std::exception& error) {
    ctxguard::fuzz::invariant_broken("parse_config and Profile::build report problems as values",
                                     std::string(error.what()) + " on: " + excerpt(yaml));
  }
  return 0;
}
