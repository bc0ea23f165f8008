// ConfigReloader with a real file and a real io_context: edits are picked up, broken files are
// refused, SIGHUP's reload_now reads at once, a vanished file keeps what runs.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "proxy/config_reloader.hpp"
#include "support/platform_file.hpp"

namespace asio = boost::asio;
using ctxguard::config::ConfigSources;
using ctxguard::config::ProfilePtr;
using ctxguard::proxy::ConfigReloader;

namespace {

struct ReloadRig {
  ReloadRig() {
    path = std::filesystem::temp_directory_path() /
           ("ctxguard-reload-" + std::to_string(ctxguard::platform::process_id()) + "-" +
            std::to_string(++serial) + ".yaml");
    write("tokenBudget: 4000\n");
    ConfigSources sources;
    sources.file_path = path.string();
    auto loaded = ctxguard::config::load_profile(sources);
    REQUIRE(loaded.has_value());
    reloader = std::make_unique<ConfigReloader>(io, sources, *loaded, [this](ProfilePtr profile) {
      applied.push_back(std::move(profile));
    });
    reloader->start();
  }
  ~ReloadRig() {
    reloader.reset();
    std::filesystem::remove(path);
  }

  // Replaced the way editors save: a new file renamed over the old one.
  void write(const std::string& text) const {
    const auto temporary = path.string() + ".new";
    std::ofstream(temporary) << text;
    std::filesystem::rename(temporary, path);
  }

  // Runs the io_context until `done` or a generous deadline (not a timing assertion).
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io.run_for(std::chrono::milliseconds(20));
      io.restart();
    }
    return done();
  }

  static inline int serial = 0;
  std::filesystem::path path;
  asio::io_context io;
  std::vector<ProfilePtr> applied;
  std::unique_ptr<ConfigReloader> reloader;
};

}  // namespace

TEST_CASE("config reloader: an edited file is applied, a broken one refused") {
  ReloadRig rig;
  rig.write("tokenBudget: 8000\n");
  REQUIRE(rig.run_until([&] { return rig.applied.size() == 1; }, std::chrono::seconds(5)));
  CHECK(rig.applied[0]->global().token_budget == 8000);

  rig.write("tokenBudget: [8000\n");  // a syntax error
  rig.run_until([] { return false; }, std::chrono::milliseconds(800));
  rig.write("pageSize: 0\n");  // out of range
  rig.run_until([] { return false; }, std::chrono::milliseconds(800));
  CHECK(rig.applied.size() == 1);

  rig.write("tokenBudget: 9000\n");
  REQUIRE(rig.run_until([&] { return rig.applied.size() == 2; }, std::chrono::seconds(5)));
  CHECK(rig.applied[1]->global().token_budget == 9000);
  CHECK(rig.reloader->reloads_applied() == 2);
}

TEST_CASE("config reloader: reload_now reads at once; an unchanged file changes nothing") {
  ReloadRig rig;
  rig.reloader->reload_now("test");
  rig.run_until([] { return false; }, std::chrono::milliseconds(300));
  CHECK(rig.applied.empty());  // same settings: nothing to apply

  // Same size and (coarse) time as before would fool a poll; SIGHUP reads regardless.
  std::ofstream(rig.path) << "tokenBudget: 5000\n";
  rig.reloader->reload_now("test");
  REQUIRE(rig.run_until([&] { return !rig.applied.empty(); }, std::chrono::seconds(5)));
  CHECK(rig.applied.back()->global().token_budget == 5000);
}

TEST_CASE("config reloader: a file that disappears keeps the running configuration") {
  ReloadRig rig;
  std::filesystem::remove(rig.path);
  rig.run_until([] { return false; }, std::chrono::milliseconds(600));
  CHECK(rig.applied.empty());
  rig.write("tokenBudget: 7000\n");  // back again
  REQUIRE(rig.run_until([&] { return !rig.applied.empty(); }, std::chrono::seconds(5)));
  CHECK(rig.applied.back()->global().token_budget == 7000);
}
