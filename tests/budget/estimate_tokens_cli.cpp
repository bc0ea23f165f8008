// Reads JSON Lines `{"text": "..."}` on stdin and prints `{"estimate": N}` per line: the token
// estimate of each text, for tests/e2e/estimator-accuracy.test.mjs.
//
//   estimate_tokens_cli [--counts]
//   estimate_tokens_cli --names
//
// --counts adds the model's inputs (`"features": {bytes, ascii, runs, chars}`, see
// lib/budget/token_model.hpp), which scripts/calibrate-estimator.mjs fits the weights to;
// --names prints the names of the ASCII classes / transition groups and of the scripts, in the
// order of the coefficient arrays in token_estimator.cpp. Exits 1 on a line that is not such an
// object.

#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "budget/token_estimator.hpp"
#include "budget/token_model.hpp"

namespace {

namespace json = boost::json;
using namespace ctxguard::budget;

json::object features_of(std::string_view text) {
  detail::Features features;
  std::uint8_t last_byte = detail::kStartByte;
  features.add(text, last_byte);
  json::object ascii;
  for (std::size_t c = 0; c < detail::kAsciiClasses; ++c) {
    if (features.ascii_bytes[c] != 0) ascii[detail::kGroupNames[c]] = features.ascii_bytes[c];
  }
  json::object runs;
  for (std::size_t from = 0; from < detail::kGroups; ++from) {
    for (std::size_t to = 0; to < detail::kGroups; ++to) {
      if (features.runs[from][to] == 0) continue;
      std::string name(detail::kGroupNames[from]);
      name += '>';
      name += detail::kGroupNames[to];
      runs[name] = features.runs[from][to];
    }
  }
  json::object chars;
  for (std::size_t s = 0; s < detail::kScriptCount; ++s) {
    if (features.chars[s] != 0) chars[detail::kScriptNames[s]] = features.chars[s];
  }
  json::object repeats;
  for (std::size_t byte = 0; byte < features.repeats.size(); ++byte) {
    if (features.repeats[byte] != 0) {
      repeats[std::string(1, static_cast<char>(byte))] = features.repeats[byte];
    }
  }
  return {{"bytes", features.bytes},
          {"ascii", std::move(ascii)},
          {"repeats", std::move(repeats)},
          {"runs", std::move(runs)},
          {"chars", std::move(chars)}};
}

json::object names() {
  json::array groups;
  for (const std::string_view name : detail::kGroupNames) groups.emplace_back(name);
  json::array scripts;
  for (const std::string_view name : detail::kScriptNames) scripts.emplace_back(name);
  return {{"groups", std::move(groups)}, {"scripts", std::move(scripts)}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view option = argc > 1 ? argv[1] : "";
  if (argc > 2 || (argc == 2 && option != "--counts" && option != "--names")) {
    std::cerr << "usage: estimate_tokens_cli [--counts|--names] < lines of {\"text\": ...}\n";
    return 2;
  }
  if (option == "--names") {
    std::cout << json::serialize(names()) << '\n';
    return 0;
  }
  const bool counts = option == "--counts";
  std::ios::sync_with_stdio(false);
  std::string line;
  json::parse_options options;
  options.max_depth = 64;
  for (std::size_t number = 1; std::getline(std::cin, line); ++number) {
    if (line.empty()) continue;
    std::error_code error;
    const json::value value = json::parse(line, error, {}, options);
    const json::string* text = nullptr;
    if (!error && value.is_object()) {
      if (const json::value* field = value.get_object().if_contains("text")) {
        text = field->if_string();
      }
    }
    if (text == nullptr) {
      std::cerr << "estimate_tokens_cli: line " << number << " is not {\"text\": \"...\"}\n";
      return 1;
    }
    json::object out{{"estimate", estimate_tokens(*text)}};
    if (counts) out["features"] = features_of(*text);
    std::cout << json::serialize(out) << '\n';
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}
