#include "telemetry/record_writer.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <vector>

#include "support/platform_file.hpp"
#include "telemetry/call_event.hpp"

using namespace ctxguard::telemetry;
namespace fs = std::filesystem;

namespace {

// A sink that blocks until released and remembers what it was given.
class GatedSink {
 public:
  RecordWriter::Sink sink() {
    return [this](std::string_view batch) {
      std::unique_lock lock(mutex_);
      entered_ = true;
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_; });
      text_ += batch;
      return std::error_code{};
    };
  }
  void wait_entered() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return entered_; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  std::string text() {
    std::lock_guard lock(mutex_);
    return text_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool entered_ = false;
  bool open_ = false;
  std::string text_;
};

fs::path temp_path(std::string_view name) {
  return fs::temp_directory_path() /
         ("ctxguard-writer-" + std::to_string(ctxguard::platform::process_id()) + "-" +
          std::string(name));
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("record_writer: records written to a file read back as the same records") {
  const fs::path path = temp_path("roundtrip.jsonl");
  fs::remove(path);
  {
    auto writer = open_record_file(path.string());
    REQUIRE(writer.has_value());
    for (int i = 0; i < 100; ++i) {
      CallEvent event;
      event.time = *parse_time("2026-11-22T10:00:00Z") + std::chrono::seconds(i);
      event.id = i;
      event.tool = "tool" + std::to_string(i % 3);
      event.original_tokens = 1000 + static_cast<std::size_t>(i);
      event.final_tokens = 500;
      event.outcome = Outcome::kSummarized;
      REQUIRE((*writer)->push(to_json_line(event)));
    }
  }  // the destructor writes what is queued
  const auto lines = lines_of(path);
  REQUIRE(lines.size() == 100);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto event = parse_call_event(lines[i]);
    REQUIRE(event.has_value());
    CHECK(event->id == static_cast<std::int64_t>(i));
    CHECK(event->original_tokens == 1000 + i);
    CHECK(event->outcome == Outcome::kSummarized);
  }
#if !defined(_WIN32)  // Windows files have ACLs, which their directory gives, not modes
  CHECK((fs::status(path).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
#endif
  fs::remove(path);
}

TEST_CASE("record_writer: a full queue drops records at once instead of waiting for the disk") {
  GatedSink gate;
  std::uint64_t written = 0;
  {
    RecordWriter writer(gate.sink(), {.max_lines = 50, .max_bytes = 1 << 20}, "test");
    REQUIRE(writer.push("first"));
    gate.wait_entered();  // the writer thread is stuck in the sink with "first"
    int accepted = 0;
    int refused = 0;
    for (int i = 0; i < 10'000; ++i)
      (writer.push("line " + std::to_string(i)) ? accepted : refused)++;
    CHECK(accepted == 50);
    CHECK(refused == 10'000 - 50);
    const WriterCounters counters = writer.counters();
    CHECK(counters.dropped == 10'000 - 50);
    CHECK(counters.queued == 50);
    gate.open();
  }
  const std::string text = gate.text();
  written = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
  CHECK(written == 51);
  CHECK(text.rfind("first\nline 0\n", 0) == 0);
}

TEST_CASE("record_writer: the byte limit bounds the queue too") {
  GatedSink gate;
  RecordWriter writer(gate.sink(), {.max_lines = 1000, .max_bytes = 100}, "test");
  REQUIRE(writer.push("x"));
  gate.wait_entered();
  CHECK(writer.push(std::string(98, 'a')));  // 99 bytes with its newline
  CHECK_FALSE(writer.push("b"));             // 2 more would make 101
  CHECK_FALSE(writer.push(std::string(500, 'c')));
  CHECK(writer.counters().dropped == 2);
  gate.open();
}

TEST_CASE("record_writer: write errors are counted and writing resumes when the sink recovers") {
  std::atomic<int> calls{0};
  std::promise<void> second_done;
  RecordWriter::Sink sink = [&](std::string_view) {
    const int call = ++calls;
    if (call == 2) second_done.set_value();
    return call == 1 ? std::make_error_code(std::errc::no_space_on_device) : std::error_code{};
  };
  RecordWriter writer(sink, {}, "test");
  REQUIRE(writer.push("lost"));
  // The first batch fails; wait for it before the second so the two are separate batches.
  while (writer.counters().failed == 0) std::this_thread::yield();
  REQUIRE(writer.push("kept"));
  second_done.get_future().wait();
  while (writer.counters().written == 0) std::this_thread::yield();
  const WriterCounters counters = writer.counters();
  CHECK(counters.failed == 1);
  CHECK(counters.written == 1);
}

TEST_CASE("record_writer: /dev/full loses records but every push returns") {
  auto writer = open_record_file("/dev/full");
  REQUIRE(writer.has_value());
  for (int i = 0; i < 100; ++i) (void)(*writer)->push("record");
  while ((*writer)->counters().failed + (*writer)->counters().dropped < 100)
    std::this_thread::yield();
  CHECK((*writer)->counters().written == 0);
}

TEST_CASE("record_writer: reopen starts a new file after the old one was moved away") {
  const fs::path path = temp_path("rotate.jsonl");
  const fs::path rotated = temp_path("rotate.jsonl.1");
  fs::remove(path);
  fs::remove(rotated);
  {
    auto writer = open_record_file(path.string());
    REQUIRE(writer.has_value());
    REQUIRE((*writer)->push("before"));
    while ((*writer)->counters().written < 1) std::this_thread::yield();
    fs::rename(path, rotated);
    (*writer)->reopen();
    REQUIRE((*writer)->push("after"));
  }
  CHECK(lines_of(rotated) == std::vector<std::string>{"before"});
  CHECK(lines_of(path) == std::vector<std::string>{"after"});
  fs::remove(path);
  fs::remove(rotated);
}

TEST_CASE("record_writer: a file that cannot be opened is an error value") {
  auto writer = open_record_file("/nonexistent-dir/records.jsonl");
  REQUIRE_FALSE(writer.has_value());
  CHECK(writer.error() == std::errc::no_such_file_or_directory);
}

TEST_CASE("record_writer: a sink stuck past the drain timeout does not hang destruction") {
  // Shared with the sink: the abandoned writer thread still runs it after this test returns.
  auto gate = std::make_shared<GatedSink>();
  auto sink = [gate, run = gate->sink()](std::string_view batch) { return run(batch); };
  {
    RecordWriter writer(sink, {.drain_timeout = std::chrono::milliseconds(50)}, "test");
    REQUIRE(writer.push("stuck"));
    gate->wait_entered();
    REQUIRE(writer.push("never written"));
  }              // returns after about 50 ms although the sink is still blocked
  gate->open();  // the abandoned thread finishes on its own state
}
