#include "ss/http/ops_routes.hpp"

#include "ss/core/metrics/prometheus.hpp"

namespace ss::http {

http_response ops_routes(const ops_probe& probe, const http_request& request) {
  http_response r;
  if (request.path == "/healthz") {
    const bool live = !probe.live || probe.live();
    r.status = live ? 200 : 503;
    r.body = live ? "ok\n" : "not live\n";
    return r;
  }
  if (request.path == "/readyz") {
    std::pair<bool, std::string> ready{true, {}};
    if (probe.ready) ready = probe.ready();
    r.status = ready.first ? 200 : 503;
    r.body = ready.first ? "ready\n" : "not ready: " + ready.second + "\n";
    return r;
  }
  if (request.path == "/metrics") {
    r.content_type = metrics::prometheus_content_type;
    if (probe.metrics) r.body = probe.metrics();
    return r;
  }
  r.status = 404;
  r.body = "not found\n";
  return r;
}

void append_ops_http_metrics(metrics::prometheus_text& out, const ops_http_stats& s,
                             const metrics::prometheus_labels& labels) {
  const auto n = [](std::uint64_t v) { return static_cast<double>(v); };
  out.counter("shadowsync_ops_http_connections_accepted", "Connections the ops endpoint accepted.",
              n(s.connections_accepted), labels);
  out.counter("shadowsync_ops_http_connections_evicted",
              "Ops endpoint connections dropped (503) to make room at its connection limit: open 100 ms or more "
              "without a complete request (slow or idle clients).",
              n(s.connections_evicted), labels);
  out.counter("shadowsync_ops_http_connections_refused",
              "Ops endpoint connections newer than 100 ms dropped (503) to make room when its places and reserve "
              "were full (a burst).",
              n(s.connections_refused), labels);
  out.counter("shadowsync_ops_http_requests", "Requests the ops endpoint answered.", n(s.requests), labels);
  out.counter("shadowsync_ops_http_bad_requests", "Malformed requests the ops endpoint refused (400, 411, 414, 431, 501, 505).",
              n(s.bad_requests), labels);
  out.counter("shadowsync_ops_http_read_timeouts",
              "Ops endpoint connections answered 408: no complete request within the read timeout.",
              n(s.read_timeouts), labels);
  out.counter("shadowsync_ops_http_accept_failures",
              "Times the ops endpoint could not accept a connection (out of descriptors...).", n(s.accept_failures),
              labels);
  out.counter("shadowsync_ops_http_bodies_too_large",
              "POST requests refused (413) for a Content-Length over the endpoint's body limit.",
              n(s.bodies_too_large), labels);
  out.counter("shadowsync_ops_http_requests_shed",
              "POST requests refused (503) because the workers' queue was full.", n(s.requests_shed), labels);
  out.gauge("shadowsync_ops_http_connections_open", "Connections the ops endpoint holds open.",
            n(s.connections_open), labels);
  out.gauge("shadowsync_ops_http_max_connections",
            "Connections the ops endpoint lets wait for their request, besides its reserve.",
            n(s.max_connections), labels);
  out.gauge("shadowsync_ops_http_reserve",
            "Places beyond the ops endpoint's max_connections for bursts of new connections.", n(s.reserve),
            labels);
}

}  // namespace ss::http
