#include "proxy/server_shutdown.hpp"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "proxy/use_tuple.hpp"

namespace ctxguard::proxy {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// How often to look whether the group is gone (only while waiting for it).
constexpr milliseconds kLookInterval{10};

}  // namespace

ServerShutdown::ServerShutdown(asio::io_context& io, ServerProcess& server,
                               milliseconds kill_timeout, std::function<void()> look)
    : io_(io), server_(server), kill_timeout_(kill_timeout), look_(std::move(look)) {}

bool ServerShutdown::group_gone() {
  look_();
  return server_.exit_status() && !server_.group_alive();
}

asio::awaitable<bool> ServerShutdown::wait_until(std::function<bool()> done, milliseconds timeout) {
  asio::steady_timer timer(io_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    timer.expires_after(std::min<std::chrono::steady_clock::duration>(
        kLookInterval, deadline - std::chrono::steady_clock::now()));
    co_await timer.async_wait(kUseTuple);
  }
  co_return done();
}

asio::awaitable<bool> ServerShutdown::wait_gone(milliseconds timeout) {
  return wait_until([this] { return group_gone(); }, timeout);
}

asio::awaitable<void> ServerShutdown::escalate(milliseconds grace) {
  if (under_way_) co_return;
  under_way_ = true;
  // GCC 12 miscompiles `co_await` inside an if-condition (it emits ud2): await into locals.
  const bool exited = co_await wait_gone(grace);
  if (exited) co_return;
  spdlog::info("stopping the server (pid {}) with {}", server_.pid(),
               to_string(StopLevel::kTerminate));
  server_.stop(StopLevel::kTerminate);
  const bool terminated = co_await wait_gone(kill_timeout_);
  if (terminated) co_return;
  spdlog::warn("the server (pid {}) ignored {} for {} ms; sending {}", server_.pid(),
               to_string(StopLevel::kTerminate), kill_timeout_.count(),
               to_string(StopLevel::kKill));
  server_.stop(StopLevel::kKill);
}

asio::awaitable<void> ServerShutdown::kill_leftovers() {
  const bool gone = co_await wait_gone(kill_timeout_);
  if (!gone) server_.stop(StopLevel::kKill);
}

}  // namespace ctxguard::proxy
