#pragma once
// Hot reload of the configuration file.
//
// The file is polled: one look at its stamp (platform::file_stamp) every kPollInterval (a change is
// live within about two). A poll survives what breaks a watch on the file itself: editors that save
// by writing a new file and renaming it over the old one, and symlinked mounts (Kubernetes
// ConfigMaps) whose target is swapped. A change is read once the file has looked the same for one
// poll, so a half-written file is never parsed; SIGHUP (POSIX) reloads at once. Reading, parsing
// and resolving run on a worker thread; the new profile is handed to the io thread, which swaps it
// in between two messages. The message path never waits for a reload.
//
// A file that fails validation is refused whole: the running profile stays and every problem is
// logged. Every applied change is logged with its old and new values.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "config/profile.hpp"
#include "support/platform_file.hpp"

namespace ctxguard::proxy {

class ConfigReloader {
 public:
  static constexpr std::chrono::milliseconds kPollInterval{100};

  // Called on the io thread with each valid new profile.
  using Apply = std::function<void(config::ProfilePtr)>;

  ConfigReloader(boost::asio::io_context& io, config::ConfigSources sources,
                 config::ProfilePtr running, Apply apply);
  ~ConfigReloader();
  ConfigReloader(const ConfigReloader&) = delete;
  ConfigReloader& operator=(const ConfigReloader&) = delete;

  // Starts polling (nothing to do without a file).
  void start();

  // Reloads now, whatever the file's stamp says (SIGHUP).
  void reload_now(std::string_view why);

  // Reloads that changed the running configuration, and files refused (io thread).
  std::uint64_t reloads_applied() const { return applied_; }
  std::uint64_t reloads_refused() const { return refused_; }

 private:
  using FileStamp = platform::FileStamp;

  FileStamp stamp() const;
  void schedule_poll();
  void poll();
  void begin_reload(std::string why);
  void finish_reload(const CheckedAll<config::ProfilePtr>& result, const std::string& why,
                     std::chrono::steady_clock::duration took);

  boost::asio::io_context& io_;
  config::ConfigSources sources_;
  config::ProfilePtr running_;
  Apply apply_;
  boost::asio::steady_timer timer_;
  boost::asio::thread_pool worker_{1};
  FileStamp loaded_;      // the file as last read (or tried)
  FileStamp last_seen_;   // the file at the last poll
  bool reading_ = false;  // a reload is on the worker thread
  std::string pending_;   // why to reload again once it is back (a change came meanwhile)
  bool missing_logged_ = false;
  std::uint64_t applied_ = 0;
  std::uint64_t refused_ = 0;
  // Work posted back from the worker checks this: the reloader may be gone by then.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace ctxguard::proxy
