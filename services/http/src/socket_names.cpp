#include "socket_names.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace ss::http::detail {

std::string errno_text(int err) { return std::system_category().message(err); }

std::string peer_name(const sockaddr_storage& addr, socklen_t len) {
  char host[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, serv,
                  sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  if (addr.ss_family == AF_INET6) return std::string("[") + host + "]:" + serv;
  return std::string(host) + ":" + serv;
}

std::uint64_t source_of(const sockaddr_storage& addr) {
  const unsigned char* bytes = nullptr;
  std::size_t n = 0;
  if (addr.ss_family == AF_INET) {
    bytes = reinterpret_cast<const unsigned char*>(&reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr);
    n = 4;
  } else if (addr.ss_family == AF_INET6) {
    bytes = reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr.s6_addr;
    n = 16;
    static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::equal(bytes, bytes + 12, v4_mapped)) {
      bytes += 12;
      n = 4;
    }
  }
  if (n == 4) {
    return (std::uint64_t{1} << 32) | (std::uint64_t{bytes[0]} << 24) | (std::uint64_t{bytes[1]} << 16) |
           (std::uint64_t{bytes[2]} << 8) | bytes[3];
  }
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

result<listener> listen_on(const std::string& bind, std::uint16_t port) {
  listener out;
  const std::string where = bind + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(bind.empty() ? nullptr : bind.c_str(),
                                   service.c_str(), &hints, &found);
      rc != 0) {
    return status(errc::invalid_argument,
                  "ops http: cannot resolve bind address '" + bind + "': " + gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            ai->ai_protocol);
    if (fd < 0) {
      last_error = errno_text(errno);
      continue;
    }
    // The longest accept queue the system allows (net.core.somaxconn): the loop empties it quickly
    // (a refusal costs microseconds), while a full queue drops new connections' SYNs, and a probe
    // whose SYN is dropped waits a second for its retransmission.
    const int one = 1;
    if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      last_error = errno_text(errno);
      ::close(fd);
      continue;
    }
    out.fd = fd;
    break;
  }
  ::freeaddrinfo(found);
  if (out.fd < 0) {
    return status(errc::io_error, "ops http: cannot listen on " + where + ": " + last_error);
  }

  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  if (::getsockname(out.fd, reinterpret_cast<sockaddr*>(&bound), &bound_len) != 0) {
    const std::string why = errno_text(errno);
    ::close(out.fd);
    return status(errc::io_error, "ops http: getsockname: " + why);
  }
  out.port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  return out;
}

}  // namespace ss::http::detail
