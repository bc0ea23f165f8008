#include "config/client_presets.hpp"

#include <array>

namespace ctxguard::config {

namespace {

// Claude Code writes a text result over 50,000 characters to a file and shows the model a 2 KB
// preview; ctxguard's size hint in tools/list lifts that, but hosts that drop a tool's `_meta`
// (the agent inside Claude Desktop) keep it. It shows structuredContent, JSON-encoded, instead
// of the text when there is one: that is held to 50,000 JSON bytes, never fewer than characters.
constexpr std::array kClaudeCode{PresetSetting{"maxChars", "50000"},
                                 PresetSetting{"maxJsonBytes", "50000"}};
// Claude Desktop fails a result over 1 MiB of JSON ("Tool result is too large. Maximum size is
// 1MB."): the text of a JSON answer grows by its escapes there, up to a fifth.
constexpr std::array kClaudeDesktop{PresetSetting{"maxBytes", "800000"}};
// Codex, with a model outside its bundled catalog (custom providers, local models), keeps 10,000
// bytes x1.2 of what it shows the model: structuredContent serialized when there is one, else the
// text items; past that the first item over is cut in the middle and the rest omitted. ctxguard
// cannot see the model, so it takes the smaller limit (docs/clients.md says how to lift it).
constexpr std::array kCodex{PresetSetting{"maxJsonBytes", "12000"}};
// Copilot CLI joins the text items and cuts them at 10 x 1024 bytes, silently.
constexpr std::array kCopilotCli{PresetSetting{"maxBytes", "10000"}};
// Gemini CLI writes a result of a single text block over 40,000 characters to a file, after
// wrapping the block in "<untrusted_context>\n...\n</untrusted_context>" (41 characters): 39,959
// of ctxguard's pass. A result of more blocks is never cut.
constexpr std::array kGeminiCli{PresetSetting{"maxChars", "39959"}};
// VS Code writes a text part over 8,192 characters (string.length) to a file.
constexpr std::array kVsCode{PresetSetting{"maxChars", "8000"}};
// Cline cuts a text entry over 8,000 characters in the middle.
constexpr std::array kCline{PresetSetting{"maxChars", "8000"}};

constexpr std::array kPresets{
    ClientPreset{
        "claude-code", "Claude Code", kClaudeCode,
        "anthropics/claude-code CHANGELOG.md 2.1.51, 2.1.91; anthropics/claude-code#78478"},
    ClientPreset{"claude-ai", "Claude Desktop", kClaudeDesktop,
                 "strickvl/mcp-beeminder#2, anthropics/claude-code#66519"},
    ClientPreset{"codex-mcp-client", "Codex", kCodex,
                 "openai/codex codex-rs/models-manager/models.json, "
                 "codex-rs/core/src/context_manager/history.rs"},
    ClientPreset{"github-copilot-developer", "GitHub Copilot CLI", kCopilotCli,
                 "github/copilot-cli#1732"},
    ClientPreset{"gemini-cli-mcp-client", "Gemini CLI", kGeminiCli,
                 "google-gemini/gemini-cli packages/core/src/config/config.ts"},
    ClientPreset{"Visual Studio Code*", "VS Code", kVsCode,
                 "microsoft/vscode-copilot-chat "
                 "src/platform/configuration/common/configurationService.ts"},
    ClientPreset{"Cline", "Cline", kCline,
                 "cline/cline sdk/packages/core/src/session/services/message-builder.ts"},
};

}  // namespace

std::span<const ClientPreset> client_presets() { return kPresets; }

bool is_client_limit(std::string_view key) {
  return key == "maxChars" || key == "maxBytes" || key == "maxLines" || key == "maxJsonBytes";
}

}  // namespace ctxguard::config
