#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "wrap/wrap_command.hpp"

using namespace ctxguard::wrap;
namespace fs = std::filesystem;

namespace {

// A scratch HOME holding a Claude Desktop file, removed at the end.
class ScratchHome {
 public:
  ScratchHome() {
    std::string pattern = (fs::temp_directory_path() / "ctxguard-wrap-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    home_ = pattern;
    fs::create_directories(desktop_file().parent_path());
  }
  ScratchHome(const ScratchHome&) = delete;
  ScratchHome& operator=(const ScratchHome&) = delete;
  ~ScratchHome() { fs::remove_all(home_); }

  fs::path desktop_file() const {
    return home_ / ".config" / "Claude" / "claude_desktop_config.json";
  }
  WrapContext context() const {
    return WrapContext{.platform = {.os = Platform::Os::kLinux,
                                    .home = home_,
                                    .config_home = home_ / ".config",
                                    .app_data = {},
                                    .codex_home = std::nullopt},
                       .self_path = "/usr/local/bin/ctxguard"};
  }

 private:
  fs::path home_;
};

struct Run {
  int status = 0;
  std::string out;
  std::string err;
};

Run run(Mode mode, const std::vector<std::string>& words, const WrapContext& context) {
  std::vector<const char*> args;
  for (const std::string& word : words) args.push_back(word.c_str());
  std::ostringstream out;
  std::ostringstream err;
  const int status =
      run_wrap(mode, std::span<const char* const>(args.data(), args.size()), context, out, err);
  return Run{status, out.str(), err.str()};
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

const std::string kFile = R"({
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
    "remote": {"url": "https://mcp.example.com/mcp"}
  }
}
)";

}  // namespace

TEST_CASE("wrap command: wraps a client's file, keeps a backup, keeps the mode; unwrap undoes it") {
  const ScratchHome home;
  write(home.desktop_file(), kFile);
  ::chmod(home.desktop_file().c_str(), 0640);
  const Run wrapped = run(
      Mode::kWrap, {"--client", "claude-desktop", "--", "--token-budget", "8000"}, home.context());
  CHECK(wrapped.status == 0);
  CHECK(wrapped.err.empty());
  CHECK(wrapped.out.find("  filesystem: wrapped\n") != std::string::npos);
  CHECK(wrapped.out.find("  remote: left alone (remote), https://mcp.example.com/mcp\n") !=
        std::string::npos);
  const std::string after = read(home.desktop_file());
  CHECK(after.find("\"command\": \"/usr/local/bin/ctxguard\"") != std::string::npos);
  CHECK(read(backup_path_of(home.desktop_file().string())) == kFile);
  struct stat status {};
  REQUIRE(::stat(home.desktop_file().c_str(), &status) == 0);
  CHECK((status.st_mode & 0777) == 0640);
  // Nothing left behind in the directory but the file and its backup.
  CHECK(std::distance(fs::directory_iterator(home.desktop_file().parent_path()),
                      fs::directory_iterator{}) == 2);

  const Run again = run(Mode::kWrap, {"--client", "claude-desktop"}, home.context());
  CHECK(again.status == 0);
  CHECK(again.out.find("  filesystem: already wrapped\n") != std::string::npos);
  CHECK(again.out.find("nothing to change") != std::string::npos);
  CHECK(read(home.desktop_file()) == after);

  const Run unwrapped = run(Mode::kUnwrap, {"--client", "claude-desktop"}, home.context());
  CHECK(unwrapped.status == 0);
  CHECK(read(home.desktop_file()) == kFile);
}

TEST_CASE("wrap command: --dry-run prints the diff and writes nothing") {
  const ScratchHome home;
  write(home.desktop_file(), kFile);
  const Run dry = run(Mode::kWrap, {"--config-file", home.desktop_file().string(), "--dry-run"},
                      home.context());
  CHECK(dry.status == 0);
  CHECK(dry.out.find("-    \"filesystem\": {\"command\": \"npx\"") != std::string::npos);
  CHECK(dry.out.find(
            "+    \"filesystem\": {\"command\": \"/usr/local/bin/ctxguard\", \"args\": [\"--\", "
            "\"npx\", \"-y\", \"@modelcontextprotocol/server-filesystem\", \"/tmp\"]},") !=
        std::string::npos);
  CHECK(dry.out.find("dry run: nothing written") != std::string::npos);
  CHECK(read(home.desktop_file()) == kFile);
  CHECK_FALSE(fs::exists(backup_path_of(home.desktop_file().string())));
}

TEST_CASE("wrap command: a broken file is refused with where it breaks, and left untouched") {
  const ScratchHome home;
  const std::string broken =
      "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\" \"args\": []}\n  }\n}\n";
  write(home.desktop_file(), broken);
  const Run refused = run(Mode::kWrap, {"--client", "claude-desktop"}, home.context());
  CHECK(refused.status == 2);
  CHECK(refused.err.find("not valid JSON at line 3, column") != std::string::npos);
  CHECK(refused.err.find("the file is left as it was") != std::string::npos);
  CHECK(read(home.desktop_file()) == broken);
  CHECK_FALSE(fs::exists(backup_path_of(home.desktop_file().string())));
}

TEST_CASE("wrap command: usage errors and missing files exit 2 and touch nothing") {
  const ScratchHome home;
  write(home.desktop_file(), kFile);
  const auto status = [&](Mode mode, const std::vector<std::string>& words) {
    const Run result = run(mode, words, home.context());
    CHECK_FALSE(result.err.empty());
    return result.status;
  };
  CHECK(status(Mode::kWrap, {}) == 2);                                       // no file named
  CHECK(status(Mode::kWrap, {"--client", "claude"}) == 2);                   // unknown client
  CHECK(status(Mode::kWrap, {"--client", "cursor"}) == 2);                   // it has no file
  CHECK(status(Mode::kWrap, {"--client", "codex", "--project", "."}) == 2);  // no project file
  CHECK(status(Mode::kWrap, {"--client", "claude-desktop", "--frobnicate"}) == 2);
  CHECK(status(Mode::kWrap, {"--client", "claude-desktop", "--", "--token-budgt", "1"}) == 2);
  CHECK(status(Mode::kUnwrap, {"--client", "claude-desktop", "--", "--token-budget", "1"}) == 2);
  CHECK(status(Mode::kWrap, {"--client", "claude-desktop", "--server", "nope"}) == 2);
  CHECK(read(home.desktop_file()) == kFile);
  const Run help = run(Mode::kWrap, {"--help"}, home.context());
  CHECK(help.status == 0);
  CHECK(help.out.find("ctxguard wrap --client claude-desktop") != std::string::npos);
}
