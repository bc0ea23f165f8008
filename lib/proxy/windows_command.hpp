#pragma once
// How ctxguard starts a server on Windows, as pure functions so that every platform's tests
// check them: where a command is found (PATH and PATHEXT, as cmd.exe finds it), and the one
// command-line string CreateProcessW takes, quoted so that the server gets exactly the
// arguments it was given.
//
// A `.cmd` or `.bat` file (npx is npx.cmd) is not an executable: CreateProcessW runs it through
// cmd.exe, whose parsing differs from the C runtime's, and where a naively quoted argument can
// run other commands (CVE-2024-24576, "BatBadBut"). Batch files are therefore started through
// cmd.exe explicitly, each argument quoted in cmd.exe's rules, `%` kept from expanding, and an
// argument cmd.exe cannot carry (a line break or a NUL) refused.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.hpp"

namespace ctxguard::proxy::windows {

// One argument quoted for CommandLineToArgvW and the C runtime: as it is when it needs no
// quotes, else in double quotes with backslashes doubled before a quote and quotes escaped.
std::string quote_argument(std::string_view argument);

// `program` and `arguments` as one command line for an executable (.exe, .com).
std::string executable_command_line(std::string_view program,
                                    const std::vector<std::string>& arguments);

// `script` (a .cmd or .bat path) and `arguments` as one command line for `cmd_exe`:
//   cmd.exe /d /e:ON /v:OFF /s /c ""script" "arg" ..."
// /d skips AutoRun commands, /v:OFF keeps `!` literal, /s takes what /c is given as it is. Errors:
// std::errc::invalid_argument when an argument holds a line break or NUL (cmd.exe would cut the
// command there), or the script's path holds a quote.
Result<std::string> batch_command_line(std::string_view cmd_exe, std::string_view script,
                                       const std::vector<std::string>& arguments);

// True for a path ending in .cmd or .bat, in any case.
bool is_batch_file(std::string_view path);

// Where `command` is found: as given when it names a directory (holds \ / or :); otherwise in
// each directory of `path_list` (semicolon-separated) in order. A name without an extension is
// tried with each extension of `extensions` (PATHEXT, semicolon-separated; ".COM;.EXE;.BAT;.CMD"
// when empty); one with an extension is also tried as it is. `is_file` says whether a path is an
// existing file. nullopt when nothing is found.
std::optional<std::string> find_command(std::string_view command, std::string_view path_list,
                                        std::string_view extensions,
                                        const std::function<bool(const std::string&)>& is_file);

}  // namespace ctxguard::proxy::windows
