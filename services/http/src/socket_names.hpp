// Socket details of ops_http_server (private to services/http/src): the listening socket, and the
// names of a client's address (for logs, and to count its connections together).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "ss/core/status.hpp"

namespace ss::http::detail {

std::string errno_text(int err);

// "127.0.0.1:53422", "[::1]:53422"; "?" when it cannot be named.
std::string peer_name(const sockaddr_storage& addr, socklen_t len);

// The client's address without the port, as a number: connections from one address are counted
// together. IPv4 as is (also when mapped into IPv6); other IPv6 addresses hashed (FNV-1a).
std::uint64_t source_of(const sockaddr_storage& addr);

struct listener {
  int fd = -1;             // non-blocking, close-on-exec, listening
  std::uint16_t port = 0;  // the port bound (the chosen one for port 0)
};
// Binds (SO_REUSEADDR) and listens on `bind`:`port`. invalid_argument for an address that does not
// resolve, io_error when no address can be bound.
result<listener> listen_on(const std::string& bind, std::uint16_t port);

}  // namespace ss::http::detail
