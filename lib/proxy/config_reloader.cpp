#include "proxy/config_reloader.hpp"

#include <memory>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

namespace ctxguard::proxy {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

ConfigReloader::ConfigReloader(asio::io_context& io, config::ConfigSources sources,
                               config::ProfilePtr running, Apply apply)
    : io_(io),
      sources_(std::move(sources)),
      running_(std::move(running)),
      apply_(std::move(apply)),
      timer_(io) {}

ConfigReloader::~ConfigReloader() {
  *alive_ = false;  // what a read under way posts back is never run
  try {
    timer_.cancel();
    worker_.join();  // the read itself finishes: it owns copies of all it touches
  } catch (const std::exception& error) {
    spdlog::warn("stopping the configuration watcher: {}", error.what());
  }
}

void ConfigReloader::start() {
  if (!sources_.file_path) return;
  loaded_ = last_seen_ = stamp();
  spdlog::info("watching {} for changes (SIGHUP reloads it at once)", *sources_.file_path);
  schedule_poll();
}

ConfigReloader::FileStamp ConfigReloader::stamp() const {
  return platform::file_stamp(*sources_.file_path);
}

void ConfigReloader::schedule_poll() {
  timer_.expires_after(kPollInterval);
  timer_.async_wait([this](const boost::system::error_code& error) {
    if (error) return;  // cancelled: the session is over
    poll();
    schedule_poll();
  });
}

void ConfigReloader::poll() {
  const FileStamp now = stamp();
  const bool settled = now == last_seen_;
  last_seen_ = now;
  if (!now.exists) {
    if (!missing_logged_ && loaded_.exists) {
      spdlog::warn("the configuration file {} is gone; the running configuration stays",
                   *sources_.file_path);
      missing_logged_ = true;
    }
    loaded_ = now;
    return;
  }
  missing_logged_ = false;
  // Changed since the last read, and the same as one poll ago: the writer is done.
  if (now != loaded_ && settled) {
    loaded_ = now;
    begin_reload("the file changed");
  }
}

void ConfigReloader::reload_now(std::string_view why) {
  if (!sources_.file_path) {
    spdlog::info("{}; there is no configuration file to reload (--config FILE)", why);
    return;
  }
  loaded_ = stamp();
  begin_reload(std::string(why));
}

void ConfigReloader::begin_reload(std::string why) {
  if (reading_) {
    pending_ = std::move(why);  // read again once the current read is back
    return;
  }
  reading_ = true;
  // The worker gets its own copies: nothing it touches is shared with the io thread.
  asio::post(worker_, [this, sources = sources_, running = running_, why = std::move(why),
                       alive = std::weak_ptr<bool>(alive_)]() mutable {
    const auto started = Clock::now();
    auto result = config::load_profile(sources, running.get());
    const auto took = Clock::now() - started;
    asio::post(io_, [this, alive, result = std::move(result), why = std::move(why), took]() {
      if (const auto flag = alive.lock(); flag == nullptr || !*flag) return;
      finish_reload(result, why, took);
    });
  });
}

void ConfigReloader::finish_reload(const CheckedAll<config::ProfilePtr>& result,
                                   const std::string& why, Clock::duration took) {
  reading_ = false;
  const std::string& path = *sources_.file_path;
  const double took_ms = std::chrono::duration<double, std::milli>(took).count();
  if (!result) {
    const Problems problems = result.error();
    spdlog::error("configuration {} refused ({}): {} problem(s); the running configuration stays",
                  path, why, problems.messages.size());
    for (const std::string& error : problems.messages) spdlog::error("  {}", error);
    ++refused_;
  } else {
    const config::ProfilePtr& profile = *result;
    for (const std::string& note : profile->notes()) spdlog::warn("{}: {}", path, note);
    const std::vector<std::string> changes = profile->changes_from(*running_);
    if (changes.empty()) {
      spdlog::info("configuration {} reloaded ({}): nothing changed ({:.3f} ms)", path, why,
                   took_ms);
    } else {
      spdlog::info("configuration {} reloaded ({}): {} change(s) for new calls ({:.3f} ms):", path,
                   why, changes.size(), took_ms);
      for (const std::string& change : changes) spdlog::info("  {}", change);
      running_ = profile;
      ++applied_;
      apply_(profile);
    }
  }
  if (!pending_.empty()) begin_reload(std::exchange(pending_, {}));
}

}  // namespace ctxguard::proxy
