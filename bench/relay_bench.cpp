// Relay overhead: the same requests sent straight to a server and through ctxguard.
//
// Two sessions stay open side by side and are measured in alternating blocks, so machine noise
// (this runs on shared 2-core machines) hits both alike; the figures that matter are the
// differences and ratios within one run, not the absolute numbers.
//
//   relay_bench --ctxguard build/ctxguard --server build/bench/echo_server [--requests 10000]

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "proxy/child_process.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ctxguard::proxy::ChildProcess;

class Peer {
 public:
  explicit Peer(const std::vector<std::string>& argv) : child_(spawn(argv)) {
    // The pipes are used synchronously here: their descriptors are taken back from the streams.
    boost::asio::io_context io;
    in_ = child_.take_stdin(io.get_executor()).release();
    out_ = child_.take_stdout(io.get_executor()).release();
  }
  ~Peer() {
    ::close(in_);
    ::close(out_);
    child_.wait();
  }

  void send(const std::string& line) {
    for (std::size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(in_, line.data() + done, line.size() - done);
      if (n <= 0) throw std::runtime_error("write failed");
      done += static_cast<std::size_t>(n);
    }
  }

  // Reads until one more complete line has arrived.
  void receive_line() {
    while (true) {
      if (const auto newline = buffer_.find('\n', scanned_); newline != std::string::npos) {
        buffer_.erase(0, newline + 1);
        scanned_ = 0;
        return;
      }
      scanned_ = buffer_.size();
      char chunk[65536];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) throw std::runtime_error("peer closed its output");
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  static ChildProcess spawn(const std::vector<std::string>& argv) {
    auto child = ChildProcess::spawn(argv);
    if (!child)
      throw std::runtime_error("cannot start " + argv[0] + ": " + child.error().message());
    return std::move(*child);
  }

  ChildProcess child_;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
  std::size_t scanned_ = 0;
};

std::string request(long id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}})"
         "\n";
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1));
  return values[index];
}

// Sends `count` requests one at a time; returns each round trip in microseconds.
void ping_pong(Peer& peer, long first_id, long count, std::vector<double>& out) {
  for (long i = 0; i < count; ++i) {
    const std::string line = request(first_id + i);
    const auto start = Clock::now();
    peer.send(line);
    peer.receive_line();
    out.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
}

// Streams `count` requests with a writer thread while reading the answers; returns messages/s.
double throughput(Peer& peer, long count) {
  const auto start = Clock::now();
  std::thread writer([&] {
    std::string batch;
    for (long i = 0; i < count; ++i) {
      batch += request(1'000'000 + i);
      if (batch.size() > 32 * 1024 || i + 1 == count) {
        peer.send(batch);
        batch.clear();
      }
    }
  });
  for (long i = 0; i < count; ++i) peer.receive_line();
  writer.join();
  return static_cast<double>(count) / std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string ctxguard = "ctxguard";
  std::string server;
  long requests = 10000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--ctxguard") == 0) ctxguard = argv[i + 1];
    if (std::strcmp(argv[i], "--server") == 0) server = argv[i + 1];
    if (std::strcmp(argv[i], "--requests") == 0) requests = std::stol(argv[i + 1]);
  }
  if (server.empty()) {
    std::fprintf(stderr, "usage: relay_bench --ctxguard PATH --server PATH [--requests N]\n");
    return 2;
  }

  Peer direct({server});
  Peer proxied({ctxguard, "--log-level", "warn", "--", server});

  std::vector<double> direct_us, proxied_us;
  ping_pong(direct, 0, 500, direct_us);  // warm-up, discarded
  ping_pong(proxied, 0, 500, proxied_us);
  direct_us.clear();
  proxied_us.clear();
  constexpr long kBlock = 500;
  for (long done = 0; done < requests; done += kBlock) {
    const long n = std::min(kBlock, requests - done);
    ping_pong(direct, 1000 + done, n, direct_us);
    ping_pong(proxied, 1000 + done, n, proxied_us);
  }
  const double direct_rate = throughput(direct, requests);
  const double proxied_rate = throughput(proxied, requests);

  const double d50 = percentile(direct_us, 0.5), p50 = percentile(proxied_us, 0.5);
  const double d99 = percentile(direct_us, 0.99), p99 = percentile(proxied_us, 0.99);
  std::printf("relay overhead, %ld sequential requests each way (round trip, microseconds)\n",
              requests);
  std::printf("  %-10s median %8.1f   p99 %8.1f\n", "direct", d50, d99);
  std::printf("  %-10s median %8.1f   p99 %8.1f\n", "ctxguard", p50, p99);
  std::printf("  %-10s median %8.1f   p99 %8.1f\n", "added", p50 - d50, p99 - d99);
  std::printf("throughput, %ld pipelined requests (messages/s)\n", requests);
  std::printf("  direct %.0f   ctxguard %.0f   ratio %.2f\n", direct_rate, proxied_rate,
              proxied_rate / direct_rate);
  std::printf(
      "{\"requests\":%ld,\"direct_median_us\":%.1f,\"proxied_median_us\":%.1f,"
      "\"added_median_us\":%.1f,\"direct_p99_us\":%.1f,\"proxied_p99_us\":%.1f,"
      "\"added_p99_us\":%.1f,\"direct_msgs_per_s\":%.0f,\"proxied_msgs_per_s\":%.0f}\n",
      requests, d50, p50, p50 - d50, d99, p99, p99 - d99, direct_rate, proxied_rate);
}
