// How a server is found and its command line written on Windows: pure functions, checked on
// every platform (the real cmd.exe runs them in tests/e2e/windows.test.mjs under Wine).
#include "proxy/windows_command.hpp"

#include <cctype>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

namespace windows = ctxguard::proxy::windows;

// The C runtime's split of a command line into arguments (CommandLineToArgvW's rules since
// 2008): 2n backslashes before a quote are n backslashes and the quote toggles quoting, 2n+1 are
// n and a literal quote, "" inside quotes is a literal quote; other backslashes are literal.
std::vector<std::string> split_like_the_c_runtime(std::string_view line) {
  std::vector<std::string> arguments;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) return arguments;
    std::string argument;
    bool quoted = false;
    while (i < line.size() && (quoted || (line[i] != ' ' && line[i] != '\t'))) {
      if (line[i] == '\\') {
        std::size_t count = 0;
        while (i + count < line.size() && line[i + count] == '\\') ++count;
        const bool before_quote = i + count < line.size() && line[i + count] == '"';
        argument.append(before_quote ? count / 2 : count, '\\');
        i += count;
        if (before_quote && count % 2 == 1) {
          argument += '"';
          ++i;
        }
      } else if (line[i] == '"') {
        if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
          argument += '"';
          i += 2;
        } else {
          quoted = !quoted;
          ++i;
        }
      } else {
        argument += line[i++];
      }
    }
    arguments.push_back(std::move(argument));
  }
}

}  // namespace

TEST_CASE("windows command: arguments are quoted only when they need it") {
  CHECK(windows::quote_argument("plain") == "plain");
  CHECK(windows::quote_argument("C:\\dir\\file.exe") == "C:\\dir\\file.exe");
  CHECK(windows::quote_argument("") == "\"\"");
  CHECK(windows::quote_argument("two words") == "\"two words\"");
  CHECK(windows::quote_argument("say \"hi\"") == "\"say \\\"hi\\\"\"");
  // Backslashes double only before a quote, the closing one included.
  CHECK(windows::quote_argument("C:\\with space\\") == "\"C:\\with space\\\\\"");
  CHECK(windows::quote_argument("a\\\"b") == "\"a\\\\\\\"b\"");
}

TEST_CASE("windows command: any argument survives the C runtime's split (property)") {
  std::mt19937 random(20261128);
  const std::string alphabet = "ab \t\"\\%^&|<>!é";
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> arguments(1 + random() % 4);
    for (std::string& argument : arguments) {
      const std::size_t length = random() % 10;
      for (std::size_t i = 0; i < length; ++i) argument += alphabet[random() % alphabet.size()];
    }
    const std::string line = windows::executable_command_line("C:\\bin\\server.exe", arguments);
    std::vector<std::string> expected{"C:\\bin\\server.exe"};
    expected.insert(expected.end(), arguments.begin(), arguments.end());
    INFO(line);
    REQUIRE(split_like_the_c_runtime(line) == expected);
  }
}

TEST_CASE("windows command: a batch file runs through cmd.exe with every argument quoted") {
  const auto line = windows::batch_command_line(
      "C:\\Windows\\system32\\cmd.exe", "C:\\Program Files\\nodejs\\npx.cmd",
      {"-y", "@modelcontextprotocol/server-filesystem", "C:\\Users\\me\\"});
  REQUIRE(line);
  CHECK(*line ==
        "C:\\Windows\\system32\\cmd.exe /d /e:ON /v:OFF /s /c \"\"C:\\Program "
        "Files\\nodejs\\npx.cmd\" \"-y\" \"@modelcontextprotocol/server-filesystem\" "
        "\"C:\\Users\\me\\\\\"\"");
}

TEST_CASE("windows command: cmd.exe's metacharacters stay inside their argument") {
  const auto line = windows::batch_command_line("cmd.exe", "s.cmd", {"a\"&calc", "%PATH%"});
  REQUIRE(line);
  // The quote is doubled, so cmd.exe stays inside the quotes and `&` is text; each `%` is
  // followed by an empty substring of %cd%, so no %NAME% is left to expand.
  CHECK(*line ==
        "cmd.exe /d /e:ON /v:OFF /s /c \"\"s.cmd\" \"a\"\"&calc\" "
        "\"%%cd:~,%PATH%%cd:~,%\"\"");
}

TEST_CASE("windows command: what cmd.exe cannot carry is refused") {
  CHECK_FALSE(windows::batch_command_line("cmd.exe", "s.cmd", {"two\nlines"}));
  CHECK_FALSE(windows::batch_command_line("cmd.exe", "s.cmd", {"cr\r"}));
  CHECK_FALSE(windows::batch_command_line("cmd.exe", "s.cmd", {std::string("nul\0", 4)}));
  CHECK_FALSE(windows::batch_command_line("cmd.exe", "bad\"name.cmd", {}));
}

TEST_CASE("windows command: batch files are told by their extension") {
  CHECK(windows::is_batch_file("C:\\node\\npx.cmd"));
  CHECK(windows::is_batch_file("RUN.BAT"));
  CHECK_FALSE(windows::is_batch_file("node.exe"));
  CHECK_FALSE(windows::is_batch_file("cmd"));
}

TEST_CASE("windows command: commands are found on PATH with PATHEXT's extensions") {
  // Windows file names ignore case: the fake file system does too.
  const auto lower = [](std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  const std::set<std::string> files{"c:\\node\\npx.cmd", "c:\\node\\node.exe", "c:\\node\\node.cmd",
                                    "c:\\tools\\uvx.exe", "d:\\servers\\server.exe"};
  const auto is_file = [&](const std::string& path) { return files.count(lower(path)) > 0; };
  const std::string path = "C:\\node;;C:\\tools\\";
  // npx is only npx.cmd; node.exe comes before node.cmd, as PATHEXT orders them.
  CHECK(windows::find_command("npx", path, ".COM;.EXE;.BAT;.CMD", is_file) == "C:\\node\\npx.CMD");
  CHECK(windows::find_command("node", path, "", is_file) == "C:\\node\\node.EXE");
  CHECK(windows::find_command("node", path, ".CMD;.EXE", is_file) == "C:\\node\\node.CMD");
  // Directories are searched in order; a name with its extension is taken as it is.
  CHECK(windows::find_command("uvx", path, "", is_file) == "C:\\tools\\uvx.EXE");
  CHECK(windows::find_command("uvx.exe", path, "", is_file) == "C:\\tools\\uvx.exe");
  // A path is not searched for.
  CHECK(windows::find_command("D:\\servers\\server", path, "", is_file) ==
        "D:\\servers\\server.EXE");
  CHECK(windows::find_command("D:/servers/other.exe", path, "", is_file) == std::nullopt);
  CHECK(windows::find_command("missing", path, "", is_file) == std::nullopt);
  CHECK(windows::find_command("", path, "", is_file) == std::nullopt);
}
