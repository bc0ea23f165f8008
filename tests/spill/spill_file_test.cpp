#include <catch2/catch.hpp>

#include "spill/spill_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

using ctxguard::spill::SpillDirectory;
using ctxguard::spill::SpillFile;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system's temp directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static unsigned counter = 0;
    std::random_device random;
    path_ =
        fs::temp_directory_path() / ("ctxguard-spill-test-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(++counter) + "-" + std::to_string(random()));
    fs::create_directory(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    // A test may have made it read-only; remove_all needs to write it.
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(path_, ignored);
  }

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Sets the umask for one scope.
class UmaskScope {
 public:
  explicit UmaskScope(mode_t mask) : saved_(::umask(mask)) {}
  UmaskScope(const UmaskScope&) = delete;
  UmaskScope& operator=(const UmaskScope&) = delete;
  ~UmaskScope() { ::umask(saved_); }

 private:
  mode_t saved_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string pid_prefix() { return "ctxguard-" + std::to_string(::getpid()) + "-"; }

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

}  // namespace

TEST_CASE("spill file: the content is written exactly, NUL bytes included") {
  TempDir temp;
  SpillDirectory spill(temp.path());
  const std::string content("{\"a\":\"x\0y\"}\n\0\xff", 15);
  auto file = spill.write("read_file", "json", content);
  REQUIRE(file.has_value());
  CHECK((*file)->path().parent_path() == temp.path());
  CHECK(read_file((*file)->path()) == content);
}

TEST_CASE("spill file: 5 MB are written whole") {
  TempDir temp;
  SpillDirectory spill(temp.path());
  std::string content(5 * 1024 * 1024, '\0');
  std::mt19937 random(7);
  for (char& c : content) c = static_cast<char>(random() & 0xff);
  auto file = spill.write("big", "txt", content);
  REQUIRE(file.has_value());
  CHECK(fs::file_size((*file)->path()) == content.size());
  CHECK(read_file((*file)->path()) == content);
}

TEST_CASE("spill file: empty content gives an empty file") {
  TempDir temp;
  SpillDirectory spill(temp.path());
  auto file = spill.write("empty", "txt", "");
  REQUIRE(file.has_value());
  CHECK(fs::exists((*file)->path()));
  CHECK(fs::file_size((*file)->path()) == 0);
}

TEST_CASE("spill file: the mode is exactly 0600 whatever the umask") {
  TempDir temp;
  SpillDirectory spill(temp.path());
  for (const mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}, mode_t{0277}, mode_t{0777}}) {
    INFO("umask " << std::oct << mask);
    UmaskScope umask(mask);
    auto file = spill.write("mode", "json", "{}");
    REQUIRE(file.has_value());
    struct stat info {};
    REQUIRE(::stat((*file)->path().c_str(), &info) == 0);
    CHECK((info.st_mode & 07777) == 0600);
    CHECK(S_ISREG(info.st_mode));
  }
}

TEST_CASE("spill file: names are sanitized, cut to 48 bytes and unique") {
  TempDir temp;
  SpillDirectory spill(temp.path());

  auto odd = spill.write("../a b/c.d:名", "json", "1");
  REQUIRE(odd.has_value());
  const std::string name = (*odd)->path().filename().string();
  CHECK(name == pid_prefix() + "1-___a_b_c_d____.json");
  CHECK((*odd)->path().parent_path() == temp.path());

  auto plain = spill.write("Tool_name-2", "txt", "2");
  REQUIRE(plain.has_value());
  CHECK((*plain)->path().filename().string() == pid_prefix() + "2-Tool_name-2.txt");

  auto long_hint = spill.write(std::string(100, 'x'), "txt", "3");
  REQUIRE(long_hint.has_value());
  CHECK((*long_hint)->path().filename().string() ==
        pid_prefix() + "3-" + std::string(48, 'x') + ".txt");

  // A hostile extension cannot leave the directory either.
  auto extension = spill.write("e", "/../x", "4");
  REQUIRE(extension.has_value());
  CHECK((*extension)->path().parent_path() == temp.path());

  std::set<fs::path> paths;
  std::vector<std::shared_ptr<SpillFile>> files;
  for (int i = 0; i < 100; ++i) {
    auto file = spill.write("same", "json", std::to_string(i));
    REQUIRE(file.has_value());
    paths.insert((*file)->path());
    files.push_back(*file);
  }
  CHECK(paths.size() == 100);
  CHECK(read_file(files[42]->path()) == "42");
}

TEST_CASE("spill file: the file disappears when the last shared_ptr goes") {
  TempDir temp;
  SpillDirectory spill(temp.path());
  auto written = spill.write("cached", "json", "[1,2,3]");
  REQUIRE(written.has_value());
  std::shared_ptr<SpillFile> first = *written;
  std::shared_ptr<SpillFile> second = first;
  written = std::error_code();  // drop the Result's copy too
  const fs::path path = first->path();
  first.reset();
  CHECK(fs::exists(path));
  second.reset();
  CHECK_FALSE(fs::exists(path));
  CHECK(entries(temp.path()) == 0);  // the probe file is gone as well
}

TEST_CASE("spill file: a file removed by someone else is no error for its owner") {
  TempDir temp;
  SpillDirectory spill(temp.path());
  auto file = spill.write("gone", "txt", "x");
  REQUIRE(file.has_value());
  fs::remove((*file)->path());
  file = std::error_code();  // destroys the SpillFile: unlink fails quietly
  CHECK(entries(temp.path()) == 0);
}

TEST_CASE("spill file: an existing file or symlink at the name is never replaced") {
  TempDir temp;
  SpillDirectory spill(temp.path());
  // The next names the directory will choose, taken in advance.
  const fs::path theirs = temp.path() / (pid_prefix() + "1-x.txt");
  std::ofstream(theirs) << "theirs";
  const fs::path target = temp.path() / "target";
  std::ofstream(target) << "target";
  fs::create_symlink(target, temp.path() / (pid_prefix() + "2-x.txt"));

  auto first = spill.write("x", "txt", "ours");
  REQUIRE_FALSE(first.has_value());
  CHECK(first.error() == std::errc::file_exists);
  CHECK(read_file(theirs) == "theirs");

  auto second = spill.write("x", "txt", "ours");
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error() == std::errc::file_exists);
  CHECK(read_file(target) == "target");
  CHECK(fs::is_symlink(temp.path() / (pid_prefix() + "2-x.txt")));

  auto third = spill.write("x", "txt", "ours");  // the next sequence number is free
  REQUIRE(third.has_value());
  CHECK(read_file((*third)->path()) == "ours");
}

TEST_CASE("spill file: a missing directory is refused at construction") {
  TempDir temp;
  const fs::path missing = temp.path() / "missing";
  CHECK_THROWS_WITH(SpillDirectory(missing),
                    Catch::Contains(missing.string()) && Catch::Contains("does not exist"));
}

TEST_CASE("spill file: a file instead of a directory is refused at construction") {
  TempDir temp;
  const fs::path file = temp.path() / "file";
  std::ofstream(file) << "x";
  CHECK_THROWS_WITH(SpillDirectory(file),
                    Catch::Contains(file.string()) && Catch::Contains("is not a directory"));
}

TEST_CASE("spill file: a read-only directory is refused at construction") {
  if (::geteuid() == 0) {
    WARN("skipped: running as root, which can write to a read-only directory");
    return;
  }
  TempDir temp;
  fs::permissions(temp.path(), fs::perms::owner_read | fs::perms::owner_exec);
  CHECK_THROWS_WITH(SpillDirectory(temp.path()),
                    Catch::Contains(temp.path().string()) && Catch::Contains("is not writable"));
}

TEST_CASE("spill file: a relative directory is kept absolute") {
  TempDir temp;
  const fs::path relative = fs::relative(temp.path());
  REQUIRE(relative.is_relative());
  SpillDirectory spill(relative);
  CHECK(spill.dir().is_absolute());
  CHECK(fs::equivalent(spill.dir(), temp.path()));
  auto file = spill.write("rel", "txt", "x");
  REQUIRE(file.has_value());
  CHECK((*file)->path().is_absolute());
}

TEST_CASE("spill file: writing into a directory removed after construction returns an error") {
  TempDir temp;
  const fs::path dir = temp.path() / "spill";
  fs::create_directory(dir);
  SpillDirectory spill(dir);
  fs::remove(dir);
  ctxguard::Result<std::shared_ptr<SpillFile>> file = std::error_code();
  CHECK_NOTHROW(file = spill.write("late", "json", "{}"));
  REQUIRE_FALSE(file.has_value());
  CHECK(file.error() == std::errc::no_such_file_or_directory);
}
