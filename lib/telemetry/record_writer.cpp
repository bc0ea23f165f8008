#include "telemetry/record_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "support/platform_file.hpp"

namespace ctxguard::telemetry {

namespace {

constexpr auto kErrorLogInterval = std::chrono::minutes(1);
// Records reach the file at most this late.
constexpr auto kFlushInterval = std::chrono::milliseconds(100);

}  // namespace

// Shared by the writer object and its thread, so that an abandoned thread (a sink stuck past
// the drain timeout) never touches freed memory.
struct RecordWriter::State {
  Sink sink;
  Reopen reopen;
  WriterLimits limits;
  std::string name;

  mutable std::mutex mutex;
  std::condition_variable wake;     // lines queued, reopen asked, or stop
  std::condition_variable drained;  // the thread is done
  std::deque<std::string> queue;
  std::size_t queued_bytes = 0;
  bool stop = false;
  bool done = false;
  bool reopen_asked = false;
  std::atomic<std::uint64_t> written{0};

  // A queue half full is written at once rather than at the next flush.
  std::size_t wake_lines() const { return std::max<std::size_t>(limits.max_lines / 2, 1); }
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> failed{0};

  void run() {
    std::string batch;
    std::chrono::steady_clock::time_point last_logged{};
    bool failing = false;
    while (true) {
      std::deque<std::string> lines;
      bool reopen_now = false;
      {
        // Woken by stop, reopen or a queue filling up; otherwise every kFlushInterval, so that a
        // push need not wake this thread (a system call on the relay's thread for every call).
        std::unique_lock lock(mutex);
        wake.wait_for(lock, kFlushInterval,
                      [&] { return stop || reopen_asked || queue.size() >= wake_lines(); });
        if (queue.empty() && stop && !reopen_asked) break;
        lines.swap(queue);
        queued_bytes = 0;
        reopen_now = std::exchange(reopen_asked, false);
      }
      if (reopen_now && reopen) {
        if (const auto error = reopen()) {
          spdlog::warn("{}: cannot reopen: {}", name, error.message());
        }
      }
      if (lines.empty()) continue;
      batch.clear();
      for (const std::string& line : lines) {
        batch += line;
        batch += '\n';
      }
      if (const auto error = sink(batch)) {
        failed += lines.size();
        const auto now = std::chrono::steady_clock::now();
        if (!failing || now - last_logged >= kErrorLogInterval) {
          spdlog::warn("{}: cannot write ({}); {} record(s) lost so far, calls are not affected",
                       name, error.message(), failed.load());
          last_logged = now;
        }
        failing = true;
      } else {
        written += lines.size();
        if (failing) spdlog::info("{}: writing again", name);
        failing = false;
      }
    }
    std::lock_guard lock(mutex);
    done = true;
    drained.notify_all();
  }
};

RecordWriter::RecordWriter(Sink sink, WriterLimits limits, std::string name, Reopen reopen)
    : state_(std::make_shared<State>()) {
  state_->sink = std::move(sink);
  state_->reopen = std::move(reopen);
  state_->limits = limits;
  state_->name = std::move(name);
  std::thread([state = state_] { state->run(); }).detach();
}

RecordWriter::~RecordWriter() {
  std::unique_lock lock(state_->mutex);
  state_->stop = true;
  state_->wake.notify_all();
  if (!state_->drained.wait_for(lock, state_->limits.drain_timeout, [&] { return state_->done; })) {
    spdlog::warn("{}: the last {} record(s) could not be written in time", state_->name,
                 state_->queue.size());
  }
}

bool RecordWriter::push(std::string line) {
  State& state = *state_;
  {
    std::lock_guard lock(state.mutex);
    if (state.queue.size() >= state.limits.max_lines ||
        state.queued_bytes + line.size() + 1 > state.limits.max_bytes) {
      ++state.dropped;
      return false;
    }
    state.queued_bytes += line.size() + 1;
    state.queue.push_back(std::move(line));
    if (state.queue.size() < state.wake_lines() &&
        state.queued_bytes < state.limits.max_bytes / 2) {
      return true;  // written at the next flush
    }
  }
  state.wake.notify_one();
  return true;
}

WriterCounters RecordWriter::counters() const {
  WriterCounters counters;
  counters.written = state_->written;
  counters.dropped = state_->dropped;
  counters.failed = state_->failed;
  std::lock_guard lock(state_->mutex);
  counters.queued = state_->queue.size();
  return counters;
}

void RecordWriter::reopen() {
  {
    std::lock_guard lock(state_->mutex);
    state_->reopen_asked = true;
  }
  state_->wake.notify_one();
}

const std::string& RecordWriter::name() const { return state_->name; }

Result<std::unique_ptr<RecordWriter>> open_record_file(const std::string& path,
                                                       WriterLimits limits) {
  auto opened = platform::open_append(path);
  if (!opened) return opened.error();
  // The file is the writer thread's alone; both lambdas run on it.
  auto file = std::make_shared<platform::File>(std::move(*opened));
  auto sink = [file](std::string_view batch) { return file->write(batch); };
  auto reopen = [file, path]() -> std::error_code {
    auto again = platform::open_append(path);
    if (!again) return again.error();
    *file = std::move(*again);
    return {};
  };
  return std::make_unique<RecordWriter>(std::move(sink), limits, path, std::move(reopen));
}

}  // namespace ctxguard::telemetry
