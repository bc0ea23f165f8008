#include "telemetry/answer_sampler.hpp"

#include <algorithm>

#include <boost/json/array.hpp>

#include "budget/token_estimator.hpp"
#include "pipeline/json_parts.hpp"
#include "support/json_writer.hpp"
#include "telemetry/call_event.hpp"

namespace ctxguard::telemetry {

namespace json = boost::json;

AnswerSampler::AnswerSampler(std::unique_ptr<RecordWriter> file, double percent, std::uint64_t seed)
    : file_(std::move(file)), chance_(std::clamp(percent, 0.0, 100.0) / 100.0), random_(seed) {}

bool AnswerSampler::draw() { return chance_(random_); }

void AnswerSampler::offer(std::chrono::system_clock::time_point time, std::string_view tool,
                          std::string_view client, const json::object& result) {
  const json::value* content = result.if_contains("content");
  const json::array* items = content != nullptr ? content->if_array() : nullptr;
  if (items == nullptr) return;
  // The text items joined by newlines: what the model reads and the client limits.
  std::string text;
  bool any = false;
  for (const json::value& item : *items) {
    const json::string* item_text = pipeline::text_of(item);
    if (item_text == nullptr) continue;
    if (any) text += '\n';
    any = true;
    text += *item_text;
  }
  if (!any) return;
  std::string line = "{\"time\":\"" + format_time(time) + "\",\"tool\":";
  write_json_string(line, tool);
  if (!client.empty()) {
    line += ",\"client\":";
    write_json_string(line, client);
  }
  line += ",\"estimated_tokens\":" + std::to_string(budget::estimate_tokens(text));
  line += ",\"bytes\":" + std::to_string(text.size());
  line += ",\"text\":";
  write_json_string(line, text);
  line += '}';
  if (file_->push(std::move(line))) ++taken_;
}

}  // namespace ctxguard::telemetry
