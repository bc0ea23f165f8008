#pragma once
// --sample-answers FILE: a random share of the answers ctxguard sends (tool results and
// ctxguard_fetch answers), each written whole as one JSON line, so the token estimator can be
// checked against the real tokenizer on real traffic (scripts/estimator-accuracy.mjs reads the
// file as it is; docs/telemetry.md, "Answer samples"):
//   {"time":"2026-11-27T02:04:05.123Z","tool":"list_bookings","client":"claude-code",
//    "estimated_tokens":3871,"bytes":14020,"text":"..."}
// `text` is the answer's text items joined by newlines (what the model reads, what the client
// limits), `estimated_tokens` ctxguard's estimate of exactly that text, `bytes` its UTF-8 bytes.
// The file holds payloads: off unless asked for, and created with mode 0600.
//
// Thread: draw() and offer() on the io thread; the file is written by its RecordWriter's thread.

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string_view>

#include <boost/json/object.hpp>

#include "telemetry/record_writer.hpp"

namespace ctxguard::telemetry {

class AnswerSampler {
 public:
  // Samples `percent` of the answers (0 < percent <= 100) into `file`.
  AnswerSampler(std::unique_ptr<RecordWriter> file, double percent,
                std::uint64_t seed = std::random_device{}());

  // Whether the next answer is sampled: decided before anything is copied.
  bool draw();
  // Writes `result`'s text as a sample (a result without text items is not written).
  void offer(std::chrono::system_clock::time_point time, std::string_view tool,
             std::string_view client, const boost::json::object& result);

  // Samples taken (queued for the file); the file's own counters say what reached it.
  std::uint64_t taken() const { return taken_; }
  WriterCounters file_counters() const { return file_->counters(); }
  RecordWriter& file() { return *file_; }

 private:
  std::unique_ptr<RecordWriter> file_;
  std::bernoulli_distribution chance_;
  std::mt19937_64 random_;
  std::uint64_t taken_ = 0;
};

}  // namespace ctxguard::telemetry
