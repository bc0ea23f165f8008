#include "proxy/listen_address.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace ctxguard::proxy {
namespace {

namespace ip = boost::asio::ip;

constexpr std::string_view kForm = "expected PORT or ADDRESS:PORT, as in 9464 or 127.0.0.1:9464";

Problem problem(std::string_view text, std::string_view why) {
  std::string message = "invalid listen address '";
  message += text;
  message += "': ";
  message += why;
  return Problem{std::move(message)};
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_localhost(std::string_view host) {
  constexpr std::string_view kLocalhost = "localhost";
  return host.size() == kLocalhost.size() &&
         std::equal(host.begin(), host.end(), kLocalhost.begin(), [](char a, char b) {
           return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
         });
}

}  // namespace

Checked<ListenAddress> parse_listen_address(std::string_view text) {
  std::string_view host;
  std::string_view port;
  bool bracketed = false;
  if (text.empty()) return problem(text, kForm);
  if (text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return problem(text, "missing ']' after the IPv6 address");
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') return problem(text, "expected ':PORT' after ']'");
    port = rest.substr(1);
    bracketed = true;
  } else if (const std::size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return problem(text, "an IPv6 address goes in brackets, as in [::1]:9464");
    }
    if (host.empty()) {
      return problem(text,
                     "name the address before ':' (127.0.0.1 for this machine only, 0.0.0.0 for "
                     "every interface) or give the port alone");
    }
  } else if (all_digits(text)) {
    port = text;
  } else {
    return problem(text, kForm);
  }

  if (port.empty()) return problem(text, "the port is missing");
  unsigned number = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (!all_digits(port) || error != std::errc() || end != port.data() + port.size() ||
      number > 65535) {
    return problem(text, "the port must be a number from 0 to 65535");
  }

  ListenAddress result{ip::address_v4::loopback(), static_cast<std::uint16_t>(number)};
  if (host.empty() && !bracketed) return result;  // the port alone: this machine only
  if (!bracketed && is_localhost(host)) return result;
  boost::system::error_code parse_error;
  result.address = ip::make_address(std::string(host), parse_error);
  if (parse_error) {
    return problem(text, fmt::format("'{}' is not an IP address (no host names are looked up but "
                                     "localhost)",
                                     host));
  }
  if (bracketed && !result.address.is_v6()) {
    return problem(text, "only IPv6 addresses go in brackets");
  }
  // Winsock also reads "1.2.3" and "1.2" as IPv4 addresses; only the dotted quad is meant.
  if (result.address.is_v4() && std::count(host.begin(), host.end(), '.') != 3) {
    return problem(text,
                   fmt::format("'{}' is not an IP address (an IPv4 address has four parts)", host));
  }
  return result;
}

bool is_loopback_host(std::string_view host) {
  std::string_view name = host;
  std::string_view port;
  if (host.starts_with('[')) {
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    name = host.substr(1, close - 1);
    const std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || rest.size() == 1)) return false;
    port = rest.empty() ? rest : rest.substr(1);
  } else if (const std::size_t colon = host.find(':'); colon != std::string_view::npos) {
    name = host.substr(0, colon);
    port = host.substr(colon + 1);
    if (port.empty()) return false;
  }
  if (!port.empty() && (!all_digits(port) || port.size() > 5)) return false;
  if (!host.starts_with('[') && is_localhost(name)) return true;
  boost::system::error_code error;
  const ip::address address = ip::make_address(std::string(name), error);
  return !error && address.is_v6() == host.starts_with('[') && address.is_loopback();
}

std::string to_string(const ip::tcp::endpoint& endpoint) {
  const ip::address address = endpoint.address();
  std::string text =
      address.is_v6() ? fmt::format("[{}]", address.to_string()) : address.to_string();
  text += ':';
  text += std::to_string(endpoint.port());
  return text;
}

}  // namespace ctxguard::proxy
