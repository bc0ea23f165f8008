#pragma once
// The running proxy: the client on our stdin/stdout, the MCP server as a child on pipes.
//
// run_proxy (proxy.cpp) only wires the real parts together: the child process, ctxguard's stdin
// and stdout, the Interceptor, the ConfigReloader, telemetry's file and endpoint. The Session
// (session.hpp) does the work on one io_context thread: a reader coroutine per direction (frame
// -> parse -> route -> forward), a writer per output (MessageWriter), and the lifecycle. The
// Interceptor decides each line: most go out byte-identical, a few are rewritten or answered by
// ctxguard (docs/protocol.md).
//
// Lifecycle:
//  - client closes stdin -> the server's stdin is closed after pending writes; if the server has
//    not exited after the shutdown timeout it gets SIGTERM, then SIGKILL after the kill timeout;
//  - SIGINT/SIGTERM to ctxguard -> forwarded to the server's process group, same escalation;
//  - the server exits -> what it already wrote is relayed, every client request still in flight
//    gets a JSON-RPC error, leftover processes of its group are stopped, and run() returns the
//    server's exit status (128 + signal when it was killed).

#include <memory>

#include "config/command_line.hpp"
#include "config/profile.hpp"
#include "config/settings.hpp"

namespace ctxguard::proxy {

// Exit codes of ctxguard itself (everything else is the server's own status).
inline constexpr int kExitUsage = config::kExitUsage;
inline constexpr int kExitCannotStart = 127;
inline constexpr int kExitInternal = 70;  // EX_SOFTWARE

// Runs one proxied session to its end and returns ctxguard's exit status. `profile` is the
// configuration built from `sources` at start-up; the file `sources` names is watched and
// reloaded (SIGHUP too).
int run_proxy(const config::Settings& settings, const config::ConfigSources& sources,
              const config::ProfilePtr& profile);

}  // namespace ctxguard::proxy
