#include "session/request_tracker.hpp"

#include <boost/json/serialize.hpp>

namespace ctxguard::session {

std::string request_key(const boost::json::value& id) { return boost::json::serialize(id); }

}  // namespace ctxguard::session
