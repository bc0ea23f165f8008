// Fuzz target: `ctxguard wrap` and `unwrap` editing a client's configuration file in place
// (wrap::edit_config): a file anyone may have written by hand.
//
// Input: a format byte (even: JSON with comments, odd: TOML), then the file's text.
// Invariants:
//   - edit_config returns a result or a one-line reason, never throws or crashes;
//   - a wrapped file is read back by edit_config (its check that the text says what the edit
//     means already ran), and wrapping it again changes nothing;
//   - when wrap only wrapped servers that did not run through ctxguard (none already wrapped),
//     unwrapping with the original as the backup gives the original text back, byte for byte,
//     unless a comment stood where the edit went (reported).

#include <string>

#include "fuzz_support.hpp"
#include "wrap/config_edit.hpp"

namespace {

using ctxguard::fuzz::excerpt;
using ctxguard::fuzz::require;
using namespace ctxguard::wrap;

const EditRequest kWrap{.mode = Mode::kWrap,
                        .wrap = {.ctxguard = "/usr/bin/ctxguard",
                                 .options = std::vector<std::string>{"--token-budget", "8000"}},
                        .servers = {}};
const EditRequest kUnwrap{.mode = Mode::kUnwrap, .wrap = {}, .servers = {}};

ctxguard::Checked<EditResult> edit(std::string_view text, const ConfigLayout& layout,
                                   const EditRequest& request,
                                   std::optional<std::string_view> backup) {
  try {
    return edit_config(text, layout, request, backup);
  } catch (const std::exception& error) {
    ctxguard::fuzz::invariant_broken("edit_config never throws",
                                     std::string(error.what()) + ": " + excerpt(text));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ctxguard::fuzz::FuzzInput input(data, size);
  const bool toml = (input.byte() & 1) != 0;
  const std::string_view text = input.rest();
  const ConfigLayout layout{.format = toml ? ConfigFormat::kToml : ConfigFormat::kJson,
                            .servers_key = toml ? "mcp_servers" : ""};
  auto wrapped = edit(text, layout, kWrap, std::nullopt);
  const EditResult* result = wrapped ? &*wrapped : nullptr;
  if (result == nullptr) {
    const std::string& reason = wrapped.error().message;
    require(!reason.empty() && reason.find('\n') == std::string::npos,
            "a refusal is one line that says something", reason);
    return 0;
  }
  if (!result->changed) return 0;

  auto again = edit(result->text, layout, kWrap, std::nullopt);
  const EditResult* second = again ? &*again : nullptr;
  require(second != nullptr, "a wrapped file is read back",
          [&] { return again.error().message + ": " + excerpt(result->text); });
  require(!second->changed, "wrapping twice changes nothing",
          [&] { return excerpt(result->text); });

  bool fresh = true;
  for (const ServerOutcome& server : result->servers) {
    fresh = fresh && server.action != Action::kUpdated && server.action != Action::kAlreadyWrapped;
  }
  auto unwrapped = edit(result->text, layout, kUnwrap, text);
  const EditResult* restored = unwrapped ? &*unwrapped : nullptr;
  require(restored != nullptr, "a wrapped file unwraps",
          [&] { return unwrapped.error().message + ": " + excerpt(result->text); });
  if (fresh && !result->comments_lost && !restored->comments_lost) {
    require(restored->text == text, "unwrap gives back the text wrap was given",
            [&] { return excerpt(text) + " -> " + excerpt(restored->text); });
  }
  return 0;
}
