// A small MCP server over stdio for the platform tests: built natively beside ctxguard (an .exe
// with MinGW for the tests under Wine, tests/e2e/windows/wine.test.mjs), so a Windows ctxguard
// can be tested against a Windows server without a Windows Node.js.
//
// Tools:
//   echo {text}        the text back, as one text item
//   argv               the server's own command line, one argument per array item (JSON text)
//   big_json {count}   {"records": [...]}: `count` records of ten fields each (JSON text)
//   big_text {lines}   a log of `lines` lines
//   slow {ms}          "done" after `ms` milliseconds
//   crash              writes half an answer, then exits with status 3
//   spawn_child {file} starts a copy of itself that writes a heartbeat to `file` every 20 ms
//                      until it is killed; answers its process id
//
//   mcp_test_server [args...]             the server
//   mcp_test_server --heartbeat FILE      the child spawn_child starts
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#if defined(_WIN32)
#include <windows.h>
// windows.h first: fcntl.h and io.h need its types under MinGW.
#include <fcntl.h>
#include <io.h>
#else
#include <spawn.h>
#include <unistd.h>
extern char** environ;
#endif

namespace json = boost::json;

namespace {

void send(const json::value& message) {
  std::cout << json::serialize(message) << '\n' << std::flush;
}

json::object text_result(const std::string& text) {
  return {{"content", json::array{json::object{{"type", "text"}, {"text", text}}}}};
}

json::object tool(const char* name, const char* description, json::object properties = {}) {
  return {{"name", name},
          {"description", description},
          {"inputSchema", json::object{{"type", "object"}, {"properties", std::move(properties)}}}};
}

json::array tools() {
  const json::object integer{{"type", "integer"}};
  const json::object string{{"type", "string"}};
  return {tool("echo", "Returns the text it is given.", {{"text", string}}),
          tool("argv", "Returns the server's own command line."),
          tool("big_json", "Returns many records as JSON.", {{"count", integer}}),
          tool("big_text", "Returns a long log.", {{"lines", integer}}),
          tool("slow", "Answers after a while.", {{"ms", integer}}),
          tool("crash", "Exits half-way through its answer."),
          tool("spawn_child", "Starts a child that writes a heartbeat file.", {{"file", string}})};
}

std::int64_t integer_argument(const json::object& arguments, const char* name, std::int64_t or_) {
  const json::value* value = arguments.if_contains(name);
  return value != nullptr && value->is_int64() ? value->as_int64() : or_;
}

std::string string_argument(const json::object& arguments, const char* name) {
  const json::value* value = arguments.if_contains(name);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : "";
}

std::string big_json(std::int64_t count) {
  json::array records;
  for (std::int64_t i = 0; i < count; ++i) {
    records.push_back(json::object{{"id", i},
                                   {"name", "record " + std::to_string(i)},
                                   {"status", i % 3 == 0 ? "open" : "closed"},
                                   {"owner", "user" + std::to_string(i % 17)},
                                   {"amount", static_cast<double>(i) * 1.25},
                                   {"created", "2026-11-" + std::to_string(10 + i % 18)},
                                   {"tags", json::array{"a", "b"}},
                                   {"score", i * 7 % 100},
                                   {"active", i % 2 == 0},
                                   {"note", "a note that makes the record a little longer"}});
  }
  return json::serialize(json::object{{"records", std::move(records)}});
}

std::string big_text(std::int64_t lines) {
  std::string text;
  for (std::int64_t i = 0; i < lines; ++i) {
    text += "2026-11-28T10:00:" + std::to_string(10 + i % 50) + "Z " +
            (i % 10 == 0 ? "ERROR" : "INFO") + " request " + std::to_string(i) +
            " handled by worker " + std::to_string(i % 4) + "\n";
  }
  return text;
}

// Starts this program again with --heartbeat FILE; its process id, or -1.
long spawn_heartbeat([[maybe_unused]] const std::string& self_path, const std::string& file) {
#if defined(_WIN32)
  std::wstring self(MAX_PATH, L'\0');
  self.resize(::GetModuleFileNameW(nullptr, self.data(), static_cast<DWORD>(self.size())));
  std::wstring line =
      L"\"" + self + L"\" --heartbeat \"" + std::wstring(file.begin(), file.end()) + L"\"";
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  PROCESS_INFORMATION created{};
  if (!::CreateProcessW(self.c_str(), line.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr,
                        &startup, &created)) {
    return -1;
  }
  ::CloseHandle(created.hThread);
  ::CloseHandle(created.hProcess);
  return static_cast<long>(created.dwProcessId);
#else
  std::vector<std::string> args{self_path, "--heartbeat", file};
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  pid_t pid = -1;
  if (::posix_spawn(&pid, args[0].c_str(), nullptr, nullptr, pointers.data(), environ) != 0) {
    return -1;
  }
  return static_cast<long>(pid);
#endif
}

[[noreturn]] void heartbeat(const std::string& file) {
  for (std::uint64_t beat = 0;; ++beat) {
    std::ofstream(file, std::ios::trunc) << beat << '\n';
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

json::value call(const json::object& params, const json::value& id,
                 const std::vector<std::string>& command_line) {
  const std::string name(params.at("name").as_string());
  static const json::object kNone;
  const json::value* given = params.if_contains("arguments");
  const json::object& arguments =
      given != nullptr && given->is_object() ? given->as_object() : kNone;
  if (name == "echo") return text_result(string_argument(arguments, "text"));
  if (name == "argv") {
    json::array items;
    for (const std::string& arg : command_line) items.emplace_back(arg);
    return text_result(json::serialize(items));
  }
  if (name == "big_json") return text_result(big_json(integer_argument(arguments, "count", 500)));
  if (name == "big_text") return text_result(big_text(integer_argument(arguments, "lines", 3000)));
  if (name == "slow") {
    std::this_thread::sleep_for(std::chrono::milliseconds(integer_argument(arguments, "ms", 200)));
    return text_result("done");
  }
  if (name == "crash") {
    const std::string answer = json::serialize(json::object{
        {"jsonrpc", "2.0"}, {"id", id}, {"result", text_result(std::string(4000, 'x'))}});
    std::cout << answer.substr(0, answer.size() / 2) << std::flush;
    std::_Exit(3);
  }
  if (name == "spawn_child") {
    return text_result(
        std::to_string(spawn_heartbeat(command_line.front(), string_argument(arguments, "file"))));
  }
  json::object result = text_result("unknown tool: " + name);
  result["isError"] = true;
  return result;
}

json::value answer(const std::string& method, const json::object& params, const json::value& id,
                   const std::vector<std::string>& command_line) {
  if (method == "initialize") {
    return json::object{
        {"protocolVersion", params.contains("protocolVersion") ? params.at("protocolVersion")
                                                               : json::value("2025-06-18")},
        {"capabilities", json::object{{"tools", json::object{}}}},
        {"serverInfo", json::object{{"name", "mcp-test-server"}, {"version", "1.0.0"}}}};
  }
  if (method == "tools/list") return json::object{{"tools", tools()}};
  if (method == "tools/call") return call(params, id, command_line);
  if (method == "ping") return json::object{};
  return nullptr;
}

}  // namespace

#if defined(_WIN32)
// The arguments as the C runtime splits them (cmd.exe passes `""` for a quote, which
// CommandLineToArgvW reads otherwise), in UTF-8 rather than the ANSI code page.
int serve(int argc, char** argv);
int wmain(int argc, wchar_t** wide_argv) {
  std::vector<std::string> arguments;
  for (int i = 0; i < argc; ++i) {
    const int size =
        ::WideCharToMultiByte(CP_UTF8, 0, wide_argv[i], -1, nullptr, 0, nullptr, nullptr);
    std::string arg(static_cast<std::size_t>(size > 0 ? size - 1 : 0), '\0');
    ::WideCharToMultiByte(CP_UTF8, 0, wide_argv[i], -1, arg.data(), size, nullptr, nullptr);
    arguments.push_back(std::move(arg));
  }
  std::vector<char*> argv;
  for (std::string& arg : arguments) argv.push_back(arg.data());
  return serve(argc, argv.data());
}
int serve(int argc, char** argv) {
#else
int main(int argc, char** argv) {
#endif
#if defined(_WIN32)
  // The protocol is bytes: no CRLF for LF on the way out.
  _setmode(_fileno(stdout), _O_BINARY);
  _setmode(_fileno(stdin), _O_BINARY);
#endif
  const std::vector<std::string> command_line(argv, argv + argc);
  if (argc == 3 && std::string(argv[1]) == "--heartbeat") heartbeat(argv[2]);

  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    boost::system::error_code error;
    const json::value message = json::parse(line, error);
    if (error || !message.is_object()) continue;
    const json::object& request = message.as_object();
    const json::value* id = request.if_contains("id");
    const json::value* method = request.if_contains("method");
    if (id == nullptr || method == nullptr || !method->is_string()) continue;  // notifications
    static const json::object kNone;
    const json::value* params = request.if_contains("params");
    const json::object& given =
        params != nullptr && params->is_object() ? params->as_object() : kNone;
    const json::value result = answer(std::string(method->as_string()), given, *id, command_line);
    if (result.is_null()) {
      send(
          json::object{{"jsonrpc", "2.0"},
                       {"id", *id},
                       {"error", json::object{{"code", -32601}, {"message", "Method not found"}}}});
      continue;
    }
    send(json::object{{"jsonrpc", "2.0"}, {"id", *id}, {"result", result}});
  }
  return 0;
}
