// The real ctxguard binary relaying to real processes. `cat` makes a perfect mirror server: each
// line the client sends comes straight back, so what leaves ctxguard can be compared with what
// went in, through both directions of the relay.

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include "run_ctxguard.hpp"

using namespace ctxguard::testing;

namespace {

const std::vector<std::string> kMirror{"cat"};

// Well-formed lines that Boost.JSON would re-serialize differently: forwarding must use the
// original bytes, not a re-serialized DOM.
const std::string kAwkwardButValid =
    R"({"jsonrpc":"2.0","method":"notifications/message","params":{"n":0.0,"big":2e720,"neg":-0,"s":"\u00e9\ud83d\ude00","pad":  1 }})"
    "\n"
    R"({ "jsonrpc" : "2.0" , "id" : 12 , "result" : { "content" : [ ] } })"
    "\n"
    R"([{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b","params":[1,2,3]}])"
    "\n";

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

}  // namespace

TEST_CASE("relay: well-formed lines come out byte-identical after crossing both directions") {
  auto run = run_ctxguard(kMirror, {.input = kAwkwardButValid});
  CHECK_FALSE(run.timed_out);
  CHECK(run.output == kAwkwardButValid);
  CHECK(run.status.shell_status() == 0);
}

TEST_CASE("relay: 10,000 messages written at once all arrive, in order") {
  std::string input;
  for (int i = 0; i < 10000; ++i) {
    input += R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":)" +
             std::to_string(i) + "}}\n";
  }
  auto run = run_ctxguard(kMirror, {.input = input});
  CHECK(run.output == input);
}

TEST_CASE("relay: a 64 MiB message passes whole") {
  std::string input = R"({"jsonrpc":"2.0","method":"notifications/big","params":{"blob":")";
  input.append(64u << 20, 'x');
  input += "\"}}\n{\"jsonrpc\":\"2.0\",\"method\":\"after\"}\n";
  auto run = run_ctxguard(kMirror, {.input = input, .timeout = std::chrono::seconds(120)});
  CHECK_FALSE(run.timed_out);
  CHECK(run.output.size() == input.size());
  CHECK((run.output == input));  // parenthesized: a failure must not print 64 MiB twice
}

TEST_CASE("relay: a client that reads slowly gets everything after the server has gone") {
  // Found in CI: once the server had exited, ctxguard gave the client --kill-timeout in all to
  // take what was left, then exited; on a loaded machine a 64 MiB answer was cut at 32 MiB.
  // Here 6 MiB read 64 KiB at a time, 25 ms apart, take about 2.5 s against a 1 s timeout.
  std::string input = R"({"jsonrpc":"2.0","method":"notifications/big","params":{"blob":")";
  input.append(6u << 20, 'x');
  input += "\"}}\n";
  auto run = run_ctxguard(kMirror, {.flags = {"--kill-timeout", "1"},
                                    .input = input,
                                    .read_pause = std::chrono::milliseconds(25)});
  CHECK_FALSE(run.timed_out);
  CHECK(run.output.size() == input.size());
  CHECK((run.output == input));
  CHECK(run.status.code == 0);
  CHECK_THAT(run.log, !Catch::Contains("read nothing"));
}

TEST_CASE("relay: a client that stops reading does not keep ctxguard alive") {
  // The other side of the test above: nothing read for --kill-timeout after the server has gone
  // and ctxguard exits, the rest undelivered. The client reads again only after 6 s.
  std::string input = R"({"jsonrpc":"2.0","method":"notifications/big","params":{"blob":")";
  input.append(6u << 20, 'x');
  input += "\"}}\n";
  const auto started = std::chrono::steady_clock::now();
  auto run = run_ctxguard(kMirror, {.flags = {"--kill-timeout", "1"},
                                    .input = input,
                                    .read_pause = std::chrono::milliseconds(6000)});
  CHECK_FALSE(run.timed_out);
  CHECK(run.output.size() < input.size());
  CHECK_THAT(run.log, Catch::Contains("the client read nothing for 1000 ms"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));
}

TEST_CASE("relay: CRLF endings are accepted and forwarded as LF") {
  auto run = run_ctxguard(kMirror, {.input = "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n"
                                             "{\"jsonrpc\":\"2.0\",\"method\":\"y\"}\r\n"});
  CHECK(run.output ==
        "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"y\"}\n");
}

TEST_CASE("relay: a line that is not JSON-RPC reaches the server but never the client") {
  // The mirror sends back what it reads: the client's lines go to it as they are, and what it
  // echoes is held to the protocol on the way back.
  const std::string input =
      "this is not json\n{\"jsonrpc\":\"2.0\",\"method\":\"ok\"}\n{\"half\":\n[1,2]\n";
  auto run = run_ctxguard(kMirror, {.input = input});
  CHECK(run.output == "{\"jsonrpc\":\"2.0\",\"method\":\"ok\"}\n");
  CHECK_THAT(run.log, Catch::Contains("the client sent a line that is not JSON-RPC (line is not "
                                      "valid JSON, 16 bytes); forwarded unchanged"));
  CHECK_THAT(run.log, Catch::Contains("the server wrote a line of 16 bytes that is not JSON-RPC "
                                      "(line is not valid JSON); not forwarded"));
  CHECK_THAT(run.log, Catch::Contains("the server wrote a line of 5 bytes that is not JSON-RPC "
                                      "(JSON, but not a JSON-RPC message); not forwarded"));
  CHECK_THAT(run.log, !Catch::Contains("this is not json"));  // sizes only, never content
}

TEST_CASE("relay: a final line without newline is still delivered") {
  auto run = run_ctxguard(kMirror, {.input = "{\"jsonrpc\":\"2.0\",\"method\":\"last\"}"});
  CHECK(run.output == "{\"jsonrpc\":\"2.0\",\"method\":\"last\"}\n");
}

TEST_CASE("relay: a line over --max-message-bytes is refused and the stream goes on") {
  const std::string input =
      std::string(5000, 'z') + "\n{\"jsonrpc\":\"2.0\",\"method\":\"next\"}\n";
  auto run = run_ctxguard(kMirror, {.flags = {"--max-message-bytes", "1024"}, .input = input});
  CHECK(run.output == "{\"jsonrpc\":\"2.0\",\"method\":\"next\"}\n");
  CHECK_THAT(run.log, Catch::Contains("over --max-message-bytes (1024)"));
}

TEST_CASE("relay: an oversized request gets an error from ctxguard; the server never sees it") {
  // The mirror would echo anything it received: only ctxguard's own answer may come out.
  const std::string big = R"({"method":"tools/call","params":{"pad":")" + std::string(5000, 'p') +
                          R"("},"jsonrpc":"2.0","id":"big-1"})";
  const std::string input =
      big + "\n" + R"({"jsonrpc":"2.0","method":"notifications/next"})" + "\n";
  auto run = run_ctxguard(kMirror, {.flags = {"--max-message-bytes", "1024"}, .input = input});
  const auto lines = split_lines(run.output);
  REQUIRE(lines.size() == 2);
  const auto refusal = boost::json::parse(lines[0]);
  CHECK(refusal.at("id") == boost::json::value("big-1"));
  CHECK(refusal.at("error").at("code") == boost::json::value(-32600));
  CHECK(lines[1] == R"({"jsonrpc":"2.0","method":"notifications/next"})");
  CHECK(run.status.shell_status() == 0);
}

TEST_CASE("relay: a server answer over --max-message-bytes becomes an error for its request") {
  // A server that answers request 1 with 64 KiB on one line, then request 2 normally.
  const std::string script =
      R"sh(read a; printf '{"jsonrpc":"2.0","id":1,"result":{"text":"%s"}}\n' "$(head -c 65536 /dev/zero | tr '\0' x)"; )sh"
      R"sh(read b; printf '{"jsonrpc":"2.0","id":2,"result":{}}\n'; read c)sh";
  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"ping"})"
      "\n";
  auto run = run_ctxguard({"sh", "-c", script},
                          {.flags = {"--max-message-bytes", "4096"}, .input = input});
  const auto lines = split_lines(run.output);
  REQUIRE(lines.size() == 2);
  const auto error = boost::json::parse(lines[0]);
  CHECK(error.at("id") == boost::json::value(1));
  CHECK(error.at("error").at("code") == boost::json::value(-32603));
  CHECK_THAT(std::string(error.at("error").at("message").as_string()),
             Catch::Contains("65") && Catch::Contains("4096"));
  CHECK(lines[1] == R"({"jsonrpc":"2.0","id":2,"result":{}})");
}

TEST_CASE("relay: payloads stay out of the log at the default level") {
  auto run = run_ctxguard(
      kMirror,
      {.input = R"({"jsonrpc":"2.0","method":"secret-method","params":{"token":"hunter2"}})"
                "\n"});
  CHECK_THAT(run.log, !Catch::Contains("hunter2"));
  CHECK_THAT(run.log, !Catch::Contains("secret-method"));
}

TEST_CASE("lifecycle: requests in flight when the server exits get an error each, ids echoed") {
  // The server reads one line and exits with status 3 without answering anything.
  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}})"
      "\n"
      R"({"jsonrpc":"2.0","id":"two","method":"resources/read"})"
      "\n";
  auto run =
      run_ctxguard({"sh", "-c", "read -r line; exit 3"}, {.input = input, .close_input = false});
  CHECK_FALSE(run.timed_out);
  CHECK(run.status.shell_status() == 3);
  REQUIRE(count_lines(run.output) == 2);
  const auto newline = run.output.find('\n');
  auto first = boost::json::parse(run.output.substr(0, newline));
  auto second = boost::json::parse(run.output.substr(newline + 1));
  CHECK(first.at("id").as_int64() == 1);
  CHECK(second.at("id").as_string() == "two");
  for (const auto* response : {&first, &second}) {
    CHECK(response->at("error").at("code").as_int64() == -32000);
    CHECK_THAT(std::string(response->at("error").at("message").as_string()),
               Catch::Contains("exited with status 3"));
  }
}

TEST_CASE(
    "lifecycle: a server that closes its output but keeps running is stopped, not waited for") {
  // It reads until end of input and never writes: ctxguard closes its input, so it exits, and
  // the request it holds gets its error. The client keeps its end open (it used to hang here).
  const std::string input = R"({"jsonrpc":"2.0","id":7,"method":"tools/call"})"
                            "\n";
  auto run =
      run_ctxguard({"sh", "-c", "exec 1>&-; cat >/dev/null; exit 5"},
                   {.input = input, .close_input = false, .timeout = std::chrono::seconds(20)});
  CHECK_FALSE(run.timed_out);
  CHECK(run.status.shell_status() == 5);
  CHECK_THAT(run.log, Catch::Contains("closed its output but is still running"));
  REQUIRE(count_lines(run.output) == 1);
  const auto answer = boost::json::parse(run.output);
  CHECK(answer.at("id").as_int64() == 7);
  CHECK(answer.at("error").at("code").as_int64() == -32000);
}

TEST_CASE("lifecycle: a server killed by a signal makes ctxguard exit with 128 + signal") {
  auto run = run_ctxguard({"sh", "-c", "kill -KILL $$"}, {.close_input = false});
  CHECK(run.status.shell_status() == 128 + SIGKILL);
  CHECK_THAT(run.log, Catch::Contains("killed by signal 9"));
}

TEST_CASE("lifecycle: a server that exits on end of input is not signalled") {
  auto run = run_ctxguard(kMirror, {.flags = {"--shutdown-timeout", "30"}});
  CHECK(run.status.shell_status() == 0);
  CHECK_THAT(run.log, !Catch::Contains("SIGTERM"));
}

TEST_CASE("lifecycle: a server that ignores end of input and SIGTERM is killed, whole group") {
  // `trap "" TERM` is inherited by the background sleep too: only SIGKILL ends them.
  auto run = run_ctxguard({"sh", "-c", "trap '' TERM; sleep 300 & while :; do sleep 1; done"},
                          {.flags = {"--shutdown-timeout", "0.2", "--kill-timeout", "0.2"}});
  CHECK_FALSE(run.timed_out);
  CHECK(run.status.shell_status() == 128 + SIGKILL);
  CHECK_THAT(run.log, Catch::Contains("SIGTERM"));
  CHECK_THAT(run.log, Catch::Contains("SIGKILL"));
  CHECK_FALSE(group_exists(server_pid(run.log)));
}

TEST_CASE("lifecycle: processes the server started do not outlive it") {
  // The leader exits at end of input; its background child still holds stdout open.
  auto run = run_ctxguard({"sh", "-c", "sleep 300 & cat"}, {.flags = {"--kill-timeout", "1"}});
  CHECK_FALSE(run.timed_out);
  CHECK(run.status.shell_status() == 0);
  CHECK_FALSE(group_exists(server_pid(run.log)));
}

TEST_CASE("lifecycle: SIGTERM to ctxguard reaches the server, and its status is ctxguard's") {
  auto run = run_ctxguard({"sh", "-c", "exec sleep 300"},
                          {.close_input = false, .once_started = signal_when_started(SIGTERM)});
  CHECK_FALSE(run.timed_out);
  CHECK(run.status.shell_status() == 128 + SIGTERM);
  CHECK_FALSE(group_exists(server_pid(run.log)));
}

TEST_CASE("lifecycle: SIGINT to ctxguard reaches the server's whole group") {
  auto run = run_ctxguard({"sh", "-c", "sleep 300 & exec sleep 301"},
                          {.close_input = false, .once_started = signal_when_started(SIGINT)});
  CHECK(run.status.shell_status() == 128 + SIGINT);
  CHECK_FALSE(group_exists(server_pid(run.log)));
}

TEST_CASE("lifecycle: a command that cannot be started exits 127 with a clear line") {
  auto run = run_ctxguard({"/nonexistent/mcp-server", "--flag"});
  CHECK(run.status.shell_status() == 127);
  CHECK(run.output.empty());
  CHECK_THAT(run.log, Catch::Contains("cannot start the server '/nonexistent/mcp-server'"));
}

TEST_CASE("lifecycle: the server is found on PATH like a shell would") {
  auto run = run_ctxguard({"env", "true"});  // `env` lives in /usr/bin, found through PATH
  CHECK(run.status.shell_status() == 0);
}

TEST_CASE("lifecycle: a server exiting while ctxguard waits for it is noticed, under load too") {
  // Regression: the stop-polling reaped the server before SIGCHLD was handled, and the session
  // then waited forever. Many sessions at once on a 2-core machine make that ordering likely.
  constexpr int kSessions = 16;
  std::vector<ProxyRun> runs(kSessions);
  std::vector<std::thread> threads;
  for (int i = 0; i < kSessions; ++i) {
    threads.emplace_back([&runs, i] {
      runs[i] = run_ctxguard({"sh", "-c", "sleep 0.05; exit 3"},
                             {.flags = {"--shutdown-timeout", "30", "--kill-timeout", "30"},
                              .timeout = std::chrono::seconds(20)});
    });
  }
  for (auto& thread : threads) thread.join();
  for (const ProxyRun& run : runs) {
    CHECK_FALSE(run.timed_out);
    CHECK(run.status.shell_status() == 3);
  }
}

TEST_CASE("relay: an answer holding a lone surrogate is relayed as is and matched to its request") {
  // Regression guard: Boost.JSON rejects `\ud83d` alone; such an answer must still resolve its
  // request, or the server's exit would make ctxguard send a second, bogus answer for it.
  const std::string answer = R"({"jsonrpc":"2.0","id":1,"result":{"text":"cut \ud83d"}})";
  const std::string file = "/tmp/ctxguard-surrogate-" + std::to_string(::getpid()) + ".json";
  std::ofstream(file) << answer << "\n";
  auto run = run_ctxguard({"sh", "-c", "read -r line; cat \"$0\"", file},
                          {.input = R"({"jsonrpc":"2.0","id":1,"method":"tools/call"})"
                                    "\n",
                           .close_input = false});
  std::remove(file.c_str());
  CHECK(run.output == answer + "\n");
  CHECK(run.status.shell_status() == 0);
}

TEST_CASE("lifecycle: SIGHUP does not end the session (it is reserved for config reload)") {
  auto run = run_ctxguard({"sh", "-c", "sleep 0.3"},
                          {.close_input = false, .once_started = signal_when_started(SIGHUP)});
  CHECK(run.status.shell_status() == 0);
  CHECK_THAT(run.log, Catch::Contains("SIGHUP"));
}
