#include "telemetry/prometheus_text.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>

#include "support/double_chars.hpp"

namespace ctxguard::telemetry {
namespace {

// Integral doubles below this are exact and are written as integers.
constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

// The length of the well-formed UTF-8 sequence at text[at] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0. Prometheus rejects a page with anything else.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - at < length) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
  }
  return length;
}

// Where escaped text goes: the spec escapes `\\` and `\n` everywhere, `\"` in label values only.
enum class EscapedText { kHelp, kLabelValue };

void append_escaped(std::string& out, std::string_view text, EscapedText where) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t length = utf8_sequence_length(text, at);
    if (length == 0) {
      out += kReplacement;
      ++at;
      continue;
    }
    const char c = text[at];
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && where == EscapedText::kLabelValue) {
      out += "\\\"";
    } else {
      out.append(text.substr(at, length));
    }
    at += length;
  }
}

}  // namespace

std::string_view to_string(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

bool is_valid_metric_name(std::string_view name) {
  const auto metric_char = [](char c) { return is_name_char(c) || c == ':'; };
  return !name.empty() && (is_name_start(name[0]) || name[0] == ':') &&
         std::all_of(name.begin(), name.end(), metric_char);
}

bool is_valid_label_name(std::string_view name) {
  return !name.empty() && is_name_start(name[0]) && !name.starts_with("__") &&
         std::all_of(name.begin(), name.end(), is_name_char);
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return "0";  // also -0
  if (std::trunc(value) == value && std::fabs(value) < kExactIntegerLimit) {
    return std::to_string(static_cast<long long>(value));
  }
  // Shortest round-trip form; Go's ParseFloat reads both its fixed and its exponent forms.
  std::array<char, kMaxDoubleChars> buffer;
  return std::string(format_double(value, buffer));
}

Histogram::Histogram(std::vector<double> upper_bounds) : upper_bounds_(std::move(upper_bounds)) {
  std::erase_if(upper_bounds_, [](double bound) { return !std::isfinite(bound); });
  std::sort(upper_bounds_.begin(), upper_bounds_.end());
  upper_bounds_.erase(std::unique(upper_bounds_.begin(), upper_bounds_.end()), upper_bounds_.end());
  counts_.assign(upper_bounds_.size() + 1, 0);
}

void Histogram::observe(double value) {
  if (std::isnan(value)) return;
  const auto bucket = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value);
  ++counts_[static_cast<std::size_t>(bucket - upper_bounds_.begin())];
  ++count_;
  sum_ += value;
}

void PrometheusText::family(std::string_view name, MetricType type, std::string_view help) {
  assert(is_valid_metric_name(name));
  assert(type != MetricType::kCounter || name.ends_with("_total"));
  if (families_.find(name) != families_.end()) return;
  families_.emplace(name);
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  append_escaped(text_, help, EscapedText::kHelp);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += to_string(type);
  text_ += '\n';
}

void PrometheusText::sample(std::string_view name, const Labels& labels, double value) {
  sample_line(name, labels, {}, format_value(value));
}

void PrometheusText::histogram(std::string_view name, const Labels& labels,
                               const Histogram& histogram) {
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < histogram.upper_bounds().size(); ++i) {
    cumulative += histogram.bucket_counts()[i];
    sample_line(bucket, labels, format_value(histogram.upper_bounds()[i]),
                std::to_string(cumulative));
  }
  sample_line(bucket, labels, "+Inf", std::to_string(histogram.count()));
  sample_line(std::string(name) + "_sum", labels, {}, format_value(histogram.sum()));
  sample_line(std::string(name) + "_count", labels, {}, std::to_string(histogram.count()));
}

std::string PrometheusText::take() {
  families_.clear();
  return std::exchange(text_, {});
}

void PrometheusText::sample_line(std::string_view name, const Labels& labels, std::string_view le,
                                 std::string_view value) {
  assert(is_valid_metric_name(name));
  text_ += name;
  bool first = true;
  const auto label = [&](std::string_view label_name, std::string_view label_value) {
    text_ += first ? '{' : ',';
    first = false;
    text_ += label_name;
    text_ += "=\"";
    append_escaped(text_, label_value, EscapedText::kLabelValue);
    text_ += '"';
  };
  for (const auto& [label_name, label_value] : labels) {
    assert(is_valid_label_name(label_name) && label_name != "le");
    label(label_name, label_value);
  }
  if (!le.empty()) label("le", le);
  if (!first) text_ += '}';
  text_ += ' ';
  text_ += value;
  text_ += '\n';
}

}  // namespace ctxguard::telemetry
