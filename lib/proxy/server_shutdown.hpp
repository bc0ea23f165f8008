#pragma once
// Stopping the MCP server's process group without ever blocking the session: the escalation
// (grace, terminate, kill timeout, kill: StopLevel) and the waits it is made of.
//
// The end of a process group raises no event (its members are not all our children), so the
// waits look every 10 ms. Each look first runs the session's `look` callback, which reaps the
// child and handles its exit once, whichever of SystemRequest::kServerChanged and a look sees it
// first.
//
// Executor: the session's io_context thread; the ServerProcess outlives this object.

#include <chrono>
#include <functional>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "proxy/child_process.hpp"

namespace ctxguard::proxy {

class ServerShutdown {
 public:
  ServerShutdown(boost::asio::io_context& io, ServerProcess& server,
                 std::chrono::milliseconds kill_timeout, std::function<void()> look);

  // True once an escalation has begun (it may have ended).
  bool under_way() const { return under_way_; }

  // Waits up to `timeout` until `done()` holds, looking every 10 ms; returns done().
  boost::asio::awaitable<bool> wait_until(std::function<bool()> done,
                                          std::chrono::milliseconds timeout);
  // Waits up to `timeout` for the server and everything in its group to be gone.
  boost::asio::awaitable<bool> wait_gone(std::chrono::milliseconds timeout);

  // Waits `grace` for the group to go, then asks it to terminate, waits the kill timeout,
  // then kills it.
  // One at a time: a call while an escalation has begun returns at once.
  boost::asio::awaitable<void> escalate(std::chrono::milliseconds grace);
  // After the server itself exited: a kill of what it left running, after the kill timeout.
  boost::asio::awaitable<void> kill_leftovers();

 private:
  bool group_gone();

  boost::asio::io_context& io_;
  ServerProcess& server_;
  std::chrono::milliseconds kill_timeout_;
  std::function<void()> look_;
  bool under_way_ = false;
};

}  // namespace ctxguard::proxy
