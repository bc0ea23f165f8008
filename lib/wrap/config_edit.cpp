#include "wrap/config_edit.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "support/text_scan.hpp"
#include "wrap/config_formats.hpp"
#include "wrap/text_edit.hpp"

namespace ctxguard::wrap {

namespace {

// What to do with each entry, in the file's order, and the outcome to report.
struct Plan {
  std::vector<std::pair<std::size_t, Launch>> writes;  // entry index, new launch
  std::vector<ServerOutcome> outcomes;
};

Checked<Plan> plan_edit(const std::vector<Entry>& entries, const EditRequest& request) {
  for (const std::string& wanted : request.servers) {
    const bool present = std::any_of(entries.begin(), entries.end(),
                                     [&](const Entry& entry) { return entry.name == wanted; });
    if (!present) {
      std::string names;
      for (const Entry& entry : entries) names += (names.empty() ? "" : ", ") + entry.name;
      return Problem{fmt::format("there is no server \"{}\" (the file has: {})", wanted,
                                 names.empty() ? "none" : names)};
    }
  }
  Plan plan;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = entries[i];
    if (!request.servers.empty() && std::find(request.servers.begin(), request.servers.end(),
                                              entry.name) == request.servers.end()) {
      continue;
    }
    ServerOutcome outcome{.name = entry.name, .action = Action::kNoCommand, .url = {}};
    if (!entry.url.empty()) {
      outcome.action = Action::kRemote;
      outcome.url = entry.url;
    } else if (entry.launch) {
      Decision decision = request.mode == Mode::kWrap ? decide_wrap(*entry.launch, request.wrap)
                                                      : decide_unwrap(*entry.launch);
      outcome.action = decision.action;
      if (decision.launch) plan.writes.emplace_back(i, std::move(*decision.launch));
    }
    plan.outcomes.push_back(std::move(outcome));
  }
  return plan;
}

// Whether a launch written back keeps an `args` member: always, but for an unwrapped server left
// with no arguments whose original (the backup's) had none either.
bool keeps_args(const Launch& launch, Mode mode, bool original_had_args) {
  return !launch.args.empty() || mode == Mode::kWrap || original_had_args;
}

// Whether two texts differ in blanks only. An unwrapped file that means what its backup meant
// and differs from it in blanks only (an empty array's line breaks), or has no comments at all
// (an older ctxguard wrote it without them), gets the backup's text back.
bool same_but_blanks(std::string_view a, std::string_view b) {
  const auto next = [](std::string_view text, std::size_t at) {
    while (at < text.size() && text::is_blank_byte(text[at])) ++at;
    return at;
  };
  std::size_t i = next(a, 0);
  std::size_t j = next(b, 0);
  while (i < a.size() && j < b.size() && a[i] == b[j]) {
    i = next(a, i + 1);
    j = next(b, j + 1);
  }
  return i == a.size() && j == b.size();
}

// `text` edited as `request` says, in the format `File` reads (config_formats.hpp).
template <typename File>
Checked<EditResult> edit_file(std::string_view text, const ConfigLayout& layout,
                              const EditRequest& request, std::optional<std::string_view> backup) {
  auto read = File::read(text, layout);
  if (!read) return read.error();
  File& file = *read;
  EditResult result{.text = std::string(text),
                    .servers_key = file.servers_key(),
                    .servers = {},
                    .changed = false};
  const std::vector<Entry>& entries = file.entries();
  auto planned = plan_edit(entries, request);
  if (!planned) return planned.error();
  Plan& plan = *planned;
  result.servers = std::move(plan.outcomes);
  if (plan.writes.empty()) return result;

  std::optional<File> original;
  if (backup) {
    auto read_backup = File::read(*backup, layout);
    if (read_backup) original = *std::move(read_backup);
  }
  // The servers' launches edited where they stand in the text, then written into what the file
  // means.
  std::vector<Replacement> edits;
  for (const auto& [index, launch] : plan.writes) {
    const std::optional<LaunchText> at = file.launch_text(text, index);
    if (!at) return Problem{"the servers could not be located in the text"};
    const Entry& entry = entries[index];
    const bool keep_args =
        keeps_args(launch, request.mode, original.has_value() && original->has_args(entry.name));
    for (Replacement& edit : launch_edits(text, *at, *entry.launch, launch, keep_args,
                                          File::write_string, result.comments_lost)) {
      edits.push_back(std::move(edit));
    }
    file.write_launch(index, launch, keep_args);
  }
  result.changed = true;
  result.text = apply_replacements(text, std::move(edits));
  // What the text now says must be what the edit means; a file it is not is never written.
  auto reread = File::read(result.text, layout);
  if (!reread || !reread->means_the_same(file)) {
    return Problem{"the servers could not be edited in place"};
  }
  if (request.mode == Mode::kUnwrap && original && original->means_the_same(file) &&
      (!File::has_comments(result.text) || same_but_blanks(result.text, *backup))) {
    result.text = std::string(*backup);
  }
  return result;
}

}  // namespace

Checked<EditResult> edit_config(std::string_view text, const ConfigLayout& layout,
                                const EditRequest& request,
                                std::optional<std::string_view> backup) {
  return layout.format == ConfigFormat::kJson
             ? edit_file<JsonConfig>(text, layout, request, backup)
             : edit_file<TomlConfig>(text, layout, request, backup);
}

}  // namespace ctxguard::wrap
