#pragma once
// Where every call record goes: the log (one line per decision), the oversize alarm, the totals
// behind /metrics and /health, and --telemetry-file. Cheap on the caller's thread: counters, one
// log line and one queue push; the file is written by the RecordWriter's thread.
//
// Thread: one owner (the io thread).

#include <chrono>
#include <memory>

#include "telemetry/answer_sampler.hpp"
#include "telemetry/call_event.hpp"
#include "telemetry/oversize_alarm.hpp"
#include "telemetry/record_writer.hpp"
#include "telemetry/traffic_metrics.hpp"

namespace ctxguard::telemetry {

class CallTelemetry {
 public:
  // `file`: the --telemetry-file writer, or null; `sampler`: --sample-answers, or null.
  explicit CallTelemetry(std::unique_ptr<RecordWriter> file = nullptr,
                         OversizeAlarmOptions alarm = {},
                         std::unique_ptr<AnswerSampler> sampler = nullptr);

  void record(CallEvent&& event, OversizeAlarm::Clock::time_point now);

  const TrafficMetrics& traffic() const { return traffic_; }
  const OversizeAlarm& alarm() const { return alarm_; }
  RecordWriter* file() const { return file_.get(); }
  AnswerSampler* sampler() const { return sampler_.get(); }

 private:
  std::unique_ptr<RecordWriter> file_;
  std::unique_ptr<AnswerSampler> sampler_;
  OversizeAlarm alarm_;
  TrafficMetrics traffic_;
};

}  // namespace ctxguard::telemetry
