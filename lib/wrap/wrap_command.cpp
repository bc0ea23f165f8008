#include "wrap/wrap_command.hpp"

#include <cerrno>
#include <cstring>
#include <optional>
#include <ostream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "config/command_line.hpp"
#include "support/file_text.hpp"
#include "support/platform_file.hpp"
#include "support/text_diff.hpp"

namespace ctxguard::wrap {

namespace fs = std::filesystem;

namespace {

struct WrapOptions {
  bool help = false;
  bool dry_run = false;
  std::optional<std::string> client;
  std::optional<fs::path> project;
  std::optional<fs::path> config_file;
  std::vector<std::string> servers;
  std::optional<std::string> ctxguard;
  std::optional<std::vector<std::string>> ctxguard_options;  // what follows `--`
};

std::string_view command_name(Mode mode) { return mode == Mode::kWrap ? "wrap" : "unwrap"; }

// Checks the options to pass to ctxguard as ctxguard would read them, without the environment.
Checked<> check_ctxguard_options(const std::vector<std::string>& options) {
  std::vector<const char*> argv{"ctxguard"};
  for (const std::string& option : options) argv.push_back(option.c_str());
  argv.push_back("--");
  argv.push_back("server");
  const auto parsed =
      config::parse_command_line(std::span<const char* const>(argv.data(), argv.size()),
                                 [](const char* /*name*/) -> const char* { return nullptr; });
  if (!parsed) return parsed.error();
  return {};
}

Checked<WrapOptions> parse(Mode mode, std::span<const char* const> args) {
  WrapOptions options;
  const auto usage = [](std::string message) { return Problem{std::move(message)}; };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--") {
      if (mode == Mode::kUnwrap) return usage("unwrap takes no ctxguard options after --");
      options.ctxguard_options.emplace(args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                       args.end());
      break;
    }
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      continue;
    }
    if (arg == "--dry-run") {
      options.dry_run = true;
      continue;
    }
    std::optional<std::string> value;
    if (const std::size_t equals = arg.find('=');
        arg.starts_with("--") && equals != std::string::npos) {
      value = arg.substr(equals + 1);
      arg.resize(equals);
    }
    const bool takes_value = arg == "--client" || arg == "--project" || arg == "--config-file" ||
                             arg == "--server" || (arg == "--ctxguard" && mode == Mode::kWrap);
    if (!takes_value) return usage(fmt::format("unknown option {}", arg));
    if (!value) {
      if (i + 1 >= args.size()) return usage(fmt::format("{} needs a value", arg));
      value = args[++i];
    }
    if (value->empty()) return usage(fmt::format("{} needs a value", arg));
    if (arg == "--client") options.client = *value;
    if (arg == "--project") options.project = fs::path(*value);
    if (arg == "--config-file") options.config_file = fs::path(*value);
    if (arg == "--server") options.servers.push_back(*value);
    if (arg == "--ctxguard") options.ctxguard = *value;
  }
  if (options.help) return options;
  if (options.client.has_value() == options.config_file.has_value()) {
    return usage("name the file: --client NAME (" + std::string(client_names()) +
                 ") or --config-file PATH");
  }
  if (options.project && !options.client) return usage("--project goes with --client");
  if (options.client && !client_named(*options.client)) {
    return usage(
        fmt::format("unknown client \"{}\": it is one of {}", *options.client, client_names()));
  }
  if (options.ctxguard_options) {
    if (auto checked = check_ctxguard_options(*options.ctxguard_options); !checked) {
      return usage("the ctxguard options after -- are not valid: " + checked.error().message);
    }
  }
  return options;
}

// The whole text of `path` (a client's file, or its backup), or why not.
Checked<std::string> read_text(const fs::path& path) {
  // Claude Code's ~/.claude.json keeps history as well as servers: allow it room.
  constexpr std::size_t kMaxClientFileBytes = std::size_t{64} << 20;
  return read_file_text(path.string(), kMaxClientFileBytes);
}

// Writes `text` to `path` through a temporary file in the same directory that replaces it in
// one step, with the mode and owner of `like` (the file it replaces; a new file is owner-only).
Checked<> write_atomically(const fs::path& path, std::string_view text, const fs::path& like) {
  const auto failed = [&](std::string_view what, const std::error_code& error) {
    return Problem{fmt::format("{}: {} ({})", path.string(), what, error.message())};
  };
  fs::path temporary;
  auto file = platform::create_temporary(fs::path(path) += ".ctxguard", temporary);
  if (!file) return failed("cannot write next to it", file.error());
  const auto discard = [&](std::string_view what, const std::error_code& error) {
    file->close();
    platform::remove_file(temporary);
    return failed(what, error);
  };
  if (const auto error = file->write(text)) return discard("cannot write", error);
  std::error_code exists_error;
  const auto error =
      fs::exists(like, exists_error) ? file->copy_permissions_of(like) : file->restrict_to_owner();
  if (error) return discard("cannot set its mode", error);
  if (const auto flushed = file->flush_to_disk()) return discard("cannot write", flushed);
  if (const auto closed = file->close()) return discard("cannot write", closed);
  if (const auto replaced = platform::replace_file(temporary, path)) {
    return discard("cannot replace it", replaced);
  }
  return {};
}

void report(std::ostream& out, const EditResult& result, const std::string& path) {
  if (result.servers.empty()) {
    out << fmt::format("{}: no servers under \"{}\"\n", path, result.servers_key);
    return;
  }
  for (const ServerOutcome& server : result.servers) {
    out << fmt::format("  {}: {}{}\n", server.name, describe(server.action),
                       server.url.empty() ? "" : ", " + server.url);
  }
}

}  // namespace

std::string backup_path_of(const std::string& path) { return path + ".ctxguard-backup"; }

std::string wrap_help_text(Mode mode) {
  const bool wrap = mode == Mode::kWrap;
  std::string text =
      wrap ? "ctxguard wrap: put ctxguard in front of a client's stdio MCP servers.\n\n"
             "usage: ctxguard wrap (--client NAME [--project DIR] | --config-file PATH)\n"
             "                     [--server NAME]... [--ctxguard PATH] [--dry-run]\n"
             "                     [-- CTXGUARD_OPTION...]\n\n"
             "Each server {command: C, args: A} becomes {command: CTXGUARD, args: [OPTIONS..., "
             "\"--\",\nC, A...]}; env, cwd and every other key stay. Servers reached by URL are "
             "left alone.\nA wrapped server is not wrapped twice: wrapping again sets the "
             "ctxguard path and, when\noptions follow --, the options (`--` alone clears them). "
             "Before the first change the\nfile is copied to FILE.ctxguard-backup; every write "
             "replaces the file atomically.\n\n"
           : "ctxguard unwrap: start a client's MCP servers directly again.\n\n"
             "usage: ctxguard unwrap (--client NAME [--project DIR] | --config-file PATH)\n"
             "                       [--server NAME]... [--dry-run]\n\n"
             "Every server `ctxguard wrap` put ctxguard in front of gets its own command and\n"
             "arguments back; when nothing else changed since, the file is written back exactly\n"
             "as it was before the first wrap (from FILE.ctxguard-backup).\n\n";
  text += fmt::format("  --client NAME        the client's file: {}\n", client_names());
  text +=
      "  --project DIR        the client's project file in DIR instead of the user's\n"
      "  --config-file PATH   this file (JSON or TOML, told by its name and content)\n"
      "  --server NAME        only this server (repeatable); default: every one\n";
  if (wrap) text += "  --ctxguard PATH      the ctxguard to run (default: this one)\n";
  text +=
      "  --dry-run            print the change as a diff; write nothing\n\n"
      "Exit status: 0 (also when there is nothing to change), 2 for a usage error or a\n"
      "file that cannot be read, parsed or written (it is left as it was).\n";
  if (wrap) {
    text +=
        "\nExamples:\n"
        "  ctxguard wrap --client claude-desktop\n"
        "  ctxguard wrap --client codex -- --token-budget 8000\n"
        "  ctxguard wrap --client claude-code --project . --server filesystem --dry-run\n"
        "  ctxguard unwrap --client claude-desktop\n";
  }
  return text;
}

namespace {

// The file to edit, read, with its layout and the backup of its original text (if kept).
struct ConfigFile {
  fs::path path;
  ConfigLayout layout;
  std::string text;
  std::optional<std::string> backup;
};

Checked<ConfigFile> open_config(Mode mode, const WrapOptions& options, const WrapContext& context) {
  ConfigFile file;
  if (options.client) {
    auto location =
        client_config(*client_named(*options.client), context.platform, options.project);
    if (!location) return location.error();
    file.path = location->path;
    file.layout = location->layout;
  } else {
    file.path = *options.config_file;
  }
  if (!fs::exists(file.path)) {
    return Problem{
        fmt::format("{} does not exist: no servers to {}", file.path.string(), command_name(mode))};
  }
  auto text = read_text(file.path);
  if (!text) return text.error();
  file.text = *std::move(text);
  if (options.config_file) file.layout = layout_of(file.path, file.text);
  const std::string backup_path = backup_path_of(file.path.string());
  if (fs::exists(backup_path)) {
    if (auto held = read_text(backup_path)) file.backup = *std::move(held);
  }
  return file;
}

// Writes the edited text (the original to the backup first, when none is kept yet); a problem
// leaves the file as it was.
Checked<> write_edit(const ConfigFile& file, const std::string& text, std::ostream& out) {
  if (!file.backup) {
    const std::string backup_path = backup_path_of(file.path.string());
    if (auto written = write_atomically(backup_path, file.text, file.path); !written) {
      return written;
    }
    out << "kept the original as " << backup_path << "\n";
  }
  if (auto written = write_atomically(file.path, text, file.path); !written) return written;
  out << "wrote " << file.path.string() << "\n";
  return {};
}

}  // namespace

int run_wrap(Mode mode, std::span<const char* const> args, const WrapContext& context,
             std::ostream& out, std::ostream& err) {
  const std::string name = fmt::format("ctxguard {}", command_name(mode));
  auto parsed = parse(mode, args);
  if (!parsed) {
    err << name << ": " << parsed.error().message << "\n";
    return config::kExitUsage;
  }
  const WrapOptions& options = *parsed;
  if (options.help) {
    out << wrap_help_text(mode);
    return 0;
  }
  auto opened = open_config(mode, options, context);
  if (!opened) {
    err << name << ": " << opened.error().message << "\n";
    return config::kExitUsage;
  }
  const ConfigFile& file = *opened;
  const EditRequest request{.mode = mode,
                            .wrap = {.ctxguard = options.ctxguard.value_or(context.self_path),
                                     .options = options.ctxguard_options},
                            .servers = options.servers};
  auto edited = edit_config(file.text, file.layout, request, file.backup);
  if (!edited) {
    err << fmt::format("{}: {}: {}; the file is left as it was\n", name, file.path.string(),
                       edited.error().message);
    return config::kExitUsage;
  }
  const EditResult& result = *edited;
  out << file.path.string() << ":\n";
  report(out, result, file.path.string());
  if (!result.changed) {
    out << "nothing to change\n";
  } else if (options.dry_run) {
    out << unified_diff(file.text, result.text, file.path.string(),
                        file.path.string() + " (" + std::string(command_name(mode)) + "ped)");
    out << "dry run: nothing written\n";
  } else if (auto written = write_edit(file, result.text, out); !written) {
    err << name << ": " << written.error().message << "; the file is left as it was\n";
    return config::kExitUsage;
  }
  if (result.changed && result.comments_lost) {
    out << fmt::format(
        "note: comments inside a rewritten args array are not kept ({} keeps the original)\n",
        backup_path_of(file.path.string()));
  }
  return 0;
}

}  // namespace ctxguard::wrap
