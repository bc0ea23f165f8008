#pragma once
// Where --metrics-listen binds: "PORT" or "ADDRESS:PORT", parsed without any DNS lookup.

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "support/error.hpp"

namespace ctxguard::proxy {

struct ListenAddress {
  boost::asio::ip::address address;
  std::uint16_t port = 0;
};

// "9464" -> 127.0.0.1:9464 (loopback unless an address is named), "127.0.0.1:0" (any free port),
// "[::1]:9464", "0.0.0.0:9464", "localhost:9464" -> 127.0.0.1:9464. Any other host name is
// refused (no DNS), as are unbracketed IPv6 addresses and ":9464" (which some tools read as all
// interfaces). On failure, the text quotes the input and says what is wrong.
Checked<ListenAddress> parse_listen_address(std::string_view text);

// "127.0.0.1:9464", "[::1]:9464".
std::string to_string(const boost::asio::ip::tcp::endpoint& endpoint);

// Whether an HTTP Host header names this machine by a loopback address: "localhost", an IPv4
// loopback address ("127.0.0.1") or "[::1]", each with an optional ":PORT". A page that reaches
// a loopback port by DNS rebinding sends its own host name instead ("evil.example:9464").
bool is_loopback_host(std::string_view host);

}  // namespace ctxguard::proxy
