#pragma once
// The reloadable configuration, resolved: built-in defaults, then the
// YAML file, then environment variables, then command-line flags, and over all of them the first
// per-tool rule whose glob matches the tool.
//
// A Profile is immutable once built and shared by pointer: a reload builds a new one and swaps
// the pointer, so a call keeps the profile it started with to its end while new calls get the
// new one, without locks on the message path.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_file.hpp"
#include "config/setting_table.hpp"
#include "config/settings.hpp"

namespace ctxguard::config {

// Where a global setting's value came from, for the effective configuration and reload logs.
enum class SettingSource { kDefault, kDerived, kFile, kEnvironment, kCommandLine };

std::string_view to_string(SettingSource source);

// What each source says, before anything is resolved.
struct ConfigSources {
  // Built-in defaults plus what only flags set (fetch tool prefix, cursor secret, spill
  // directory, --project rules).
  TunedSettings base;
  std::optional<std::string> file_path;  // for messages and the dump
  std::optional<ConfigFile> file;
  std::vector<SettingValue> environment;   // CTXGUARD_* variables, as found at start-up
  std::vector<SettingValue> command_line;  // flags given explicitly
  // Bad values among the variables and flags, reported with the file's problems (build fails).
  std::vector<std::string> problems;
};

class Profile;
using ProfilePtr = std::shared_ptr<const Profile>;

class Profile {
 public:
  // Resolves `sources`: the profile, or every problem found (each names its key path or source,
  // the value and what is allowed). With `running`, settings read only at start-up keep its
  // values, and notes() says which ones the sources tried to change.
  static CheckedAll<ProfilePtr> build(const ConfigSources& sources,
                                      const Profile* running = nullptr);

  // A profile of `budget` and `process` alone, no file or rules (tests, tools). Throws
  // std::invalid_argument when `budget` breaks a rule between settings.
  static ProfilePtr of(const BudgetSettings& budget, const ProcessSettings& process = {});

  // The settings the pipeline uses for calls of `tool`: the first matching rule's, else the
  // global ones; the estimator margin already applied (planning_budget).
  const BudgetSettings& for_tool(std::string_view tool) const;
  // The same settings as configured (no margin applied): the budget reported to users.
  const BudgetSettings& configured_for_tool(std::string_view tool) const;

  // The settings for calls of `tool` from `client` (its clientInfo.name; empty when it gave
  // none): as for_tool, with the client's built-in preset under the user's sources and its
  // first matching `clients:` rule over them (docs/configuration.md, "Clients"). A client no
  // preset or rule matches gets for_tool's settings.
  const BudgetSettings& for_call(std::string_view client, std::string_view tool) const;
  const BudgetSettings& configured_for_call(std::string_view client, std::string_view tool) const;

  // The settings for resources/read answers: the global ones (rules match tool names only).
  const BudgetSettings& for_resources() const;

  // The global settings as configured (no margin applied).
  const BudgetSettings& global() const { return global_.configured; }

  // The settings the whole process shares (the cache, cursors, tools/list).
  const ProcessSettings& process() const { return process_; }

  // Puts the global settings, the tools' and the process's, into `settings`.
  void copy_globals_to(Settings& settings) const {
    settings.budget = global_.configured;
    settings.process = process_;
  }

  // Whether ctxguard rewrites anything: some tool is in enforce mode (for some client). When not,
  // tools/list and the instructions go out untouched too.
  bool enforces_any() const;
  // One set of settings as configured, and the tools it is for: a tools[] rule's glob, or ""
  // for the global settings of a client scope.
  struct ScopedSettings {
    std::string_view glob;
    const BudgetSettings* configured = nullptr;
  };
  // The tools[] rules, in order (the first match wins).
  std::vector<ScopedSettings> tool_rules() const;
  // Every client scope's global settings, each followed by its tools[] rules.
  std::vector<ScopedSettings> client_scope_settings() const;
  // The largest maxPageSize of any tool (what ctxguard_fetch's schema allows).
  std::size_t largest_max_page_size() const;
  // The largest hardCap of any tool (the most any ctxguard_fetch answer takes).
  std::size_t largest_hard_cap() const;
  // The observe mode of `tool`.
  bool observes(std::string_view tool) const { return for_tool(tool).observe; }

  // The effective configuration as YAML that parse_config reads back, each global value with
  // its source as a comment.
  std::string describe() const;

  // What differs from `older`, one line per change ("tokenBudget: 4000 -> 8000").
  std::vector<std::string> changes_from(const Profile& older) const;

  // Values a reload could not apply (start-up settings), one line each.
  const std::vector<std::string>& notes() const { return notes_; }

  const std::optional<std::string>& file_path() const { return file_path_; }

 private:
  struct Resolved {
    std::string glob;                    // "*" for the global settings
    BudgetSettings configured;           // as the sources say
    BudgetSettings planning;             // planning_budget(configured)
    std::vector<std::string_view> keys;  // the keys a rule overrides
    std::vector<std::string> fields;     // a rule's projection map
  };

  // Settings a client adds: a built-in preset or a `clients:` rule.
  struct ClientLayer {
    std::string glob;    // over client names
    std::string origin;  // "clients[0]", "preset \"Cline\"": for messages
    std::vector<SettingValue> values;
  };
  static constexpr std::size_t kNoLayer = static_cast<std::size_t>(-1);
  // The settings of calls from clients that select one preset and one rule (either may be none).
  struct ClientScope {
    std::size_t preset = kNoLayer;
    std::size_t rule = kNoLayer;
    Resolved global;
    std::vector<Resolved> rules;  // tools[], resolved over this scope's global settings
  };

  // A conflict among the global settings, with where each value came from.
  std::string explain(const SettingConflict& conflict) const;
  // The `clients:` section of describe(), and the presets as comments.
  std::string describe_clients() const;
  // The first rule matching `tool` in the scope of `client`, or that scope's global settings.
  const Resolved& resolve(std::string_view client, std::string_view tool) const;
  // The scope `client` selects; nullptr for none (an unknown client, or none given).
  const ClientScope* scope_of(std::string_view client) const;

  // tools[] resolved over `underived` (whose settings `set` marks as given); conflicts the rules
  // take part in go to `errors` when given.
  static std::vector<Resolved> resolve_tool_rules(const std::vector<ToolRule>& tools,
                                                  const TunedSettings& underived,
                                                  const std::vector<bool>& set,
                                                  std::vector<std::string>* errors);
  // The presets, the file's client rules and every scope they can select.
  void build_client_scopes(const ConfigSources& sources, std::vector<std::string>* errors);
  void resolve_client_scope(const ConfigSources& sources, const ClientLayer* preset,
                            const ClientLayer* rule, ClientScope& scope,
                            std::vector<std::string>* errors) const;
  // The conflicts of `budget` that one of `keys` takes part in, named with `where`.
  static void report_own_conflicts(const BudgetSettings& budget, std::string_view where,
                                   const std::vector<std::string_view>& keys,
                                   std::vector<std::string>& errors);

  // The global settings the setting table shows: the global policy and the process's.
  TunedSettings tuned() const { return {global_.configured, process_}; }

  Resolved global_;
  ProcessSettings process_;
  std::vector<SettingSource> sources_;  // of each global setting, in setting_table() order
  std::vector<Resolved> rules_;
  std::vector<ClientLayer> presets_;
  std::vector<ClientLayer> client_rules_;
  std::vector<ClientScope> client_scopes_;
  std::vector<std::string> notes_;
  std::optional<std::string> file_path_;
};

// Reads the file sources.file_path names (when it names one) into sources.file, then builds the
// profile. Problems name the file.
CheckedAll<ProfilePtr> load_profile(ConfigSources& sources, const Profile* running = nullptr);

}  // namespace ctxguard::config
