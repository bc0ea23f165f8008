#pragma once
// Appends lines (call records, answer samples) to a file from a thread of its own, so that a
// slow or failing disk never slows or fails a call (fire-and-forget telemetry).
//
// push() takes a line and returns at once: it never waits for the disk, only for a mutex held
// for a queue operation, and it does not wake the writer (a system call) unless the queue is
// half full: the writer flushes every 100 ms, so a line reaches the file within about that. The
// queue is bounded in lines and bytes; a line that does not fit is dropped and counted. Write
// errors are counted and logged (the first, then once a minute), and writing goes on with the next
// lines: a full disk that frees up resumes by itself.
//
// Thread: push(), counters() and reopen() may be called from any thread.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "support/error.hpp"

namespace ctxguard::telemetry {

struct WriterCounters {
  std::uint64_t written = 0;  // lines the sink accepted
  std::uint64_t dropped = 0;  // lines refused because the queue was full
  std::uint64_t failed = 0;   // lines lost to write errors
  std::size_t queued = 0;     // lines waiting now
};

struct WriterLimits {
  std::size_t max_lines = 8192;
  std::size_t max_bytes = std::size_t{16} << 20;
  // How long destruction waits for the queue to be written.
  std::chrono::milliseconds drain_timeout{2000};
};

class RecordWriter {
 public:
  // Writes a batch of whole lines (each ending in '\n'); returns an error to count them as lost.
  // Runs on the writer's thread only.
  using Sink = std::function<std::error_code(std::string_view batch)>;
  // Asks the sink to start over (e.g. reopen its file after log rotation); on the writer's thread.
  using Reopen = std::function<std::error_code()>;

  RecordWriter(Sink sink, WriterLimits limits, std::string name, Reopen reopen = {});
  // Writes what is queued, waiting at most limits.drain_timeout for the sink; a sink stuck longer
  // (a hung network file system) is abandoned with its thread rather than hanging the exit.
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Queues `line` (without its newline); false when it was dropped.
  bool push(std::string line);
  WriterCounters counters() const;
  // The file is opened again before the next write (SIGHUP after logrotate moved it).
  void reopen();
  const std::string& name() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// A RecordWriter appending to `path` (created 0600 if absent: records name tools and sizes of a
// user's traffic). Errors: the file cannot be opened.
Result<std::unique_ptr<RecordWriter>> open_record_file(const std::string& path,
                                                       WriterLimits limits = {});

}  // namespace ctxguard::telemetry
