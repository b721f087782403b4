// ops_http_server: a minimal HTTP/1.1 server for operations endpoints (health, readiness,
// Prometheus metrics). It is not a general web server:
//
//  - one background thread runs poll() over non-blocking sockets; the handler is called on that
//    thread, one request at a time, so it must be quick (take a snapshot, render, return) and
//    safe to call concurrently with the service's own threads;
//  - every response carries "Connection: close" and the connection is closed after it (no
//    keep-alive, no pipelining); request bodies are never read;
//  - GET and HEAD reach the handler (for HEAD the body is computed, its length sent, the body
//    not); any other method gets 405 with "Allow: GET, HEAD";
//  - a malformed request line or header gets 400, a request line longer than max_request_bytes
//    414, a request head (line + headers) longer than max_request_bytes 431, an HTTP version
//    other than 1.0/1.1 505, a head not complete within read_timeout of the accept 408, and a
//    handler that throws 500;
//  - at max_connections (those reading a request or writing an answer), a new connection drops
//    the one that has waited longest for its request head (503, if it has waited 100 ms), so
//    slow or idle clients cannot starve health probes; when none can be dropped, the new one
//    gets 503 and is closed;
//  - stop() (or the destructor) wakes the thread through a self-pipe and returns promptly, even
//    while clients hold connections open.
//
// Thread-safety: port() may be called from any thread; stop() from any thread (from inside the
// handler it only requests the stop; the thread ends after the handler returns).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::http {

struct http_request {
  std::string method;   // as sent, e.g. "GET", "HEAD"
  std::string path;     // the target without the query, e.g. "/metrics" (not percent-decoded)
  std::string query;    // after '?', without it; "" when there is none
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  // Header names lower-cased, values trimmed, in arrival order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string peer;  // the client's address, "127.0.0.1:53422"

  // The first header with this (case-insensitive) name, or nullptr.
  const std::string* header(std::string_view name) const;
};

struct http_response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";  // no Content-Type line when empty
  std::string body;
  // Extra headers. Names must be tokens and values must not hold CR/LF (bad ones are dropped);
  // Content-Length, Content-Type and Connection are the server's and are dropped here too.
  std::vector<std::pair<std::string, std::string>> headers;
};

using http_handler = std::function<http_response(const http_request&)>;

struct ops_http_options {
  std::string bind = "0.0.0.0";  // a numeric IPv4/IPv6 address or a host name
  std::uint16_t port = 0;        // 0 = any free port (read it back with port())
  http_handler handler;          // required
  std::size_t max_request_bytes = 16384;      // request line + headers
  std::chrono::milliseconds read_timeout{5000};  // from accept to a complete request head
  int max_connections = 64;                   // connections reading or answering at once
};

class ops_http_server {
 public:
  // Binds (SO_REUSEADDR), listens and starts the thread. invalid_argument for bad options or an
  // unresolvable bind address, io_error when the socket cannot be bound (port in use...).
  static result<std::unique_ptr<ops_http_server>> start(ops_http_options options);

  ops_http_server(const ops_http_server&) = delete;
  ops_http_server& operator=(const ops_http_server&) = delete;
  ~ops_http_server();  // stop()

  // The port actually bound (the chosen one when options.port was 0).
  std::uint16_t port() const noexcept;

  // Closes the listening socket and every connection, and joins the thread. Idempotent.
  void stop();

 private:
  struct impl;
  explicit ops_http_server(std::unique_ptr<impl> state);
  std::unique_ptr<impl> impl_;
};

// The standard reason phrase of a status code ("Not Found"); "Unknown" for others.
const char* reason_phrase(int status) noexcept;

}  // namespace ss::http
