#pragma once
// The completion token every coroutine of the proxy awaits with: errors, EOF and cancellation come
// back as values (an error_code in a tuple), never as exceptions.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace ctxguard::proxy {

inline constexpr auto kUseTuple = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace ctxguard::proxy
