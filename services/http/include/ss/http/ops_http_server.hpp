// ops_http_server: a minimal HTTP/1.1 server for operations endpoints (health, readiness,
// Prometheus metrics), and for `shadowsync serve`'s predictions. It is not a general web server:
//
//  - one background thread runs poll() over non-blocking sockets; the handler is called on that
//    thread, one request at a time, so it must be quick (take a snapshot, render, return) and
//    safe to call concurrently with the service's own threads;
//  - every response carries "Connection: close" and the connection is closed after it (no
//    keep-alive, no pipelining); the bodies of GET and HEAD requests are never read;
//  - GET and HEAD reach the handler (for HEAD the body is computed, its length sent, the body
//    not); any other method gets 405 with "Allow: GET, HEAD";
//  - with max_body_bytes > 0, POST is allowed too (405 then says "Allow: GET, HEAD, POST"): its
//    body, Content-Length bytes read whole before the request is handled, reaches body_handler,
//    which runs on `workers` threads of its own (each makes its handler once), never on the loop.
//    A POST without Content-Length gets 411, with Transfer-Encoding 501, with a Content-Length
//    over max_body_bytes 413 (at once: the body is not read), and "Expect: 100-continue" its
//    interim 100. When max_connections + reserve requests are queued or being handled, a new one
//    gets 503 at once (shed);
//  - a malformed request line or header gets 400, a request line longer than max_request_bytes
//    414, a request head (line + headers) longer than max_request_bytes 431, an HTTP version
//    other than 1.0/1.1 505, a head not complete within read_timeout of the accept 408 (bytes that
//    trickle in do not extend it: a slowloris client is dropped), and a handler that throws 500;
//  - connections are bounded, and a new one is always read, so that idle or slow clients beyond
//    max_connections (even ones that reconnect as fast as they are dropped) cannot starve probes:
//      * a connection is read as soon as it is accepted: a request already complete is answered
//        at once, without waiting for a place;
//      * one still waiting for its request head takes one of max_connections reading places, or
//        when they are taken a place in a reserve of max(2, max_connections / 4). When the places
//        are taken, a connection may make room (503): one open 100 ms or more without a complete
//        head (counted as evicted) or, with the reserve full, one in the reserve (refused); of
//        these, the one whose client address holds the most reading places, the oldest among
//        equals, and only if its address holds at least as many as the new one's. Otherwise the
//        new one takes the reserve, or, when the reserve is full, is refused itself. So a flood
//        from a few addresses pushes out its own connections, not others'; a connection in a
//        place keeps it for its first 100 ms; and one is dropped for another only while it waits
//        for its request head;
//      * connections past their request head (writing an answer, or draining after it) are at
//        most max_connections plus the reserve: beyond, the oldest is closed (one that has
//        written its whole answer first);
//      * each pass of the loop serves the open connections first, then accepts up to 256 new ones;
//      * with body_handler, requests being handled are at most max_connections plus the reserve
//        (the queue's bound, above);
//    so at most 2 * (max_connections + reserve) + 1 client sockets are open at once (3 * ... with
//    body_handler). A request's head and body must arrive within read_timeout of the accept. Drops
//    are logged at most once a minute, and counted (stats());
//  - stop() (or the destructor) wakes the thread through a self-pipe and returns promptly, even
//    while clients hold connections open.
//
// Thread-safety: port() and stats() may be called from any thread; stop() from any thread (from
// inside the handler it only requests the stop; the thread ends after the handler returns).
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
  std::string body;  // POST: its body (Content-Length bytes); otherwise empty

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
  int max_connections = 64;  // connections waiting for their request head (plus a reserve: above)
  // POST requests: 0 = none (405). Otherwise the largest body read, and body_handler's workers.
  std::size_t max_body_bytes = 0;
  std::function<http_handler()> body_handler;  // required with max_body_bytes: made once per worker
  int workers = 1;
};

// What a server has done since it started: counters, except the gauges at the end. Each field is
// read atomically, not the struct as a whole.
struct ops_http_stats {
  std::uint64_t connections_accepted = 0;
  // Dropped with a 503 to make room at max_connections: open 100 ms or more without a complete
  // request head (slow or idle clients).
  std::uint64_t connections_evicted = 0;
  // Dropped with a 503 when the places and the reserve were full: newer than 100 ms (a burst),
  // in the reserve or new.
  std::uint64_t connections_refused = 0;
  std::uint64_t requests = 0;         // complete request heads answered (handler, or 405)
  std::uint64_t bad_requests = 0;     // answered 400, 411, 414, 431, 501 or 505
  std::uint64_t read_timeouts = 0;    // answered 408: no complete head within read_timeout
  std::uint64_t accept_failures = 0;  // accept() failed (out of descriptors...): accepting paused 100 ms
  std::uint64_t bodies_too_large = 0;  // answered 413: a Content-Length over max_body_bytes
  std::uint64_t requests_shed = 0;     // answered 503: body_handler's queue was full
  std::uint64_t connections_open = 0;  // gauge: reading, answering or draining now
  std::uint64_t max_connections = 0;   // gauge: the option
  std::uint64_t reserve = 0;           // gauge: the reserve's places
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

  // The counters so far (still readable after stop()).
  ops_http_stats stats() const noexcept;

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
