#pragma once
// The stream type every relay path reads and writes, chosen once per platform: a POSIX
// descriptor, or a Windows handle opened for overlapped I/O (docs/architecture.md, Platforms).

#if defined(_WIN32)
#include <boost/asio/windows/stream_handle.hpp>
#else
#include <boost/asio/posix/stream_descriptor.hpp>
#endif

namespace ctxguard::proxy {

#if defined(_WIN32)
using ByteStream = boost::asio::windows::stream_handle;
#else
using ByteStream = boost::asio::posix::stream_descriptor;
#endif

}  // namespace ctxguard::proxy
