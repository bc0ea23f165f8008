#pragma once
// A response on its way to the client, as the Interceptor's parts see it: the request it answers
// (routed with the profile that request came under), and the line that carries it.

#include <cstddef>

#include <boost/json/value.hpp>

#include "config/profile.hpp"
#include "proxy/line_context.hpp"
#include "session/session_router.hpp"

namespace ctxguard::proxy {

// Each request is routed with the profile it arrived under, and its answer is rewritten with it.
using Router = session::SessionRouter<config::Profile>;
using Route = session::Route<config::Profile>;

struct Answer {
  const Route& route;
  const boost::json::value& id;
  const config::Profile& profile;
  LineContext& line;
  std::size_t line_bytes = 0;
  bool in_batch = false;
};

}  // namespace ctxguard::proxy
