#include "proxy/system_signals.hpp"

namespace ctxguard::proxy {

std::string_view to_string(SystemRequest request) {
  switch (request) {
    case SystemRequest::kServerChanged:
      return "a change of the server's process";
    case SystemRequest::kInterrupt:
      return "an interrupt (SIGINT, Ctrl+C)";
    case SystemRequest::kTerminate:
      return "a request to terminate (SIGTERM, Ctrl+Break)";
    case SystemRequest::kReload:
      return "SIGHUP";
  }
  return "?";
}

}  // namespace ctxguard::proxy
