#include "ops_endpoint.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "ss/actors/status_metrics.hpp"
#include "ss/core/json.hpp"
#include "ss/core/json_value.hpp"
#include "ss/http/dashboard_routes.hpp"
#include "ss/http/ops_routes.hpp"

namespace ss::cli {
namespace {

bool is_loopback(const std::string& host) {
  return host.rfind("127.", 0) == 0 || host == "::1" || host == "[::1]" || host == "localhost";
}

}  // namespace

result<std::pair<std::string, std::uint16_t>> parse_host_port(const std::string& flag, const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size())
    return status(errc::invalid_argument, flag + " " + text + ": expected HOST:PORT, e.g. 0.0.0.0:9100");
  std::uint64_t port = 0;
  for (std::size_t i = colon + 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || port > 65535)
      return status(errc::invalid_argument, flag + " " + text + ": the port is not a number from 0 to 65535");
    port = port * 10 + static_cast<std::uint64_t>(text[i] - '0');
  }
  if (port > 65535)
    return status(errc::invalid_argument, flag + " " + text + ": the port is not a number from 0 to 65535");
  std::string host = text.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  return std::make_pair(std::move(host), static_cast<std::uint16_t>(port));
}

result<std::unique_ptr<ops_endpoint>> ops_endpoint::start(const std::string& listen, const std::string& service_name,
                                                         bool dashboard) {
  std::unique_ptr<ops_endpoint> ep(new ops_endpoint());
  ep->name_ = service_name;
  ep->dashboard_ = dashboard;
  if (listen.empty()) return ep;
  auto where = parse_host_port("--ops-listen", listen);
  if (!where.is_ok()) return where.error();
  http::ops_http_options o;
  o.bind = where->first;
  o.port = where->second;
  auto* self = ep.get();
  o.handler = [self](const http::http_request& r) { return self->handle(r); };
  auto server = http::ops_http_server::start(std::move(o));
  if (!server.is_ok()) return server.error().with_context(service_name + ": --ops-listen " + listen);
  {
    std::lock_guard<std::mutex> lock(ep->mu_);  // the handler reads server_ for /metrics
    ep->server_ = std::move(*server);
  }
  const std::string& host = where->first;
  ep->address_ = "http://" + host + ":" + std::to_string(ep->server_->port());
  spdlog::info("{}: health and metrics at {}/metrics", service_name, ep->address_);
  if (dashboard) spdlog::info("{}: dashboard at {}/", service_name, ep->address_);
  if (!is_loopback(host)) {
    spdlog::warn("{}: --ops-listen {} reaches beyond this host: anyone who can connect reads {}; it is read-only "
                 "(GET and HEAD only) and shows nothing `shadowsync status` does not. Listen on 127.0.0.1, or limit "
                 "who can connect (a firewall, a NetworkPolicy)",
                 service_name, listen, dashboard ? "/metrics, the dashboard and its /api" : "/metrics");
  }
  return ep;
}

ops_endpoint::~ops_endpoint() {
  if (server_) server_->stop();
}

void ops_endpoint::attach(actors::running_service* service) {
  std::lock_guard<std::mutex> lock(mu_);
  service_ = service;
  if (service != nullptr) why_not_ready_.clear();
}

void ops_endpoint::job_ended() {
  std::lock_guard<std::mutex> lock(mu_);
  keep_final_state();
}

void ops_endpoint::keep_final_state() {
  if (!dashboard_ || service_ == nullptr || final_status_) return;
  final_status_ = service_->status();
  final_history_ = service_->history_json(-1);
}

void ops_endpoint::stopping(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  keep_final_state();
  service_ = nullptr;
  why_not_ready_ = why;
}

void ops_endpoint::linger(double seconds, const std::function<bool()>& stop_requested) const {
  if (!server_ || seconds <= 0) return;
  spdlog::info("{}: the ops endpoint{} stays up {:.0f} s with the job's final state (--ops-linger; a signal ends it)",
               name_, dashboard_ ? " and dashboard at " + address_ + "/" : std::string(), seconds);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until && !stop_requested())
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

std::optional<std::string> ops_endpoint::status_for_dashboard(std::string& why_not) {
  std::lock_guard<std::mutex> lock(mu_);
  if (final_status_) return final_status_;
  if (service_ != nullptr) return service_->status();
  why_not = why_not_ready_;
  return std::nullopt;
}

// The points after `since`; the final history (kept whole) is filtered by the page itself.
std::optional<std::string> ops_endpoint::history_for_dashboard(double since, std::string& why_not) {
  std::lock_guard<std::mutex> lock(mu_);
  if (final_history_) return final_history_;
  if (service_ != nullptr) return service_->history_json(since);
  why_not = why_not_ready_;
  return std::nullopt;
}

std::uint16_t ops_endpoint::port() const { return server_ ? server_->port() : 0; }

http::http_response ops_endpoint::handle(const http::http_request& request) {
  http::ops_probe probe;
  probe.live = [] { return true; };  // this thread answers: the process is not wedged
  probe.ready = [this]() -> std::pair<bool, std::string> {
    std::lock_guard<std::mutex> lock(mu_);
    if (service_ != nullptr) return {true, ""};
    return {false, why_not_ready_};
  };
  probe.metrics = [this] {
    metrics::prometheus_text text;
    const metrics::prometheus_labels labels{{"service", name_}};
    std::lock_guard<std::mutex> lock(mu_);
    text.gauge("shadowsync_up", "1 while the service is running and registered with its job",
               service_ != nullptr ? 1 : 0, labels);
    // The endpoint's own counters: connections evicted and refused under a flood, timeouts...
    if (server_) http::append_ops_http_metrics(text, server_->stats(), labels);
    // The counters and gauges of the service's status (what `shadowsync status` shows), by its
    // role's status table and the gateway's (ss/actors/status_metrics.hpp).
    if (service_ != nullptr) {
      if (auto status = json_value::parse(service_->status()); status.is_ok())
        actors::append_status_metrics(text, *status, labels);
      else
        spdlog::warn("{}: /metrics: the status does not parse: {}", name_, status.error().message());
    }
    return text.str();
  };
  if (dashboard_) {
    http::dashboard_source source;
    source.status = [this](std::string& why_not) { return status_for_dashboard(why_not); };
    source.history = [this](double since, std::string& why_not) { return history_for_dashboard(since, why_not); };
    source.fields = [] {
      // The coordinator's status fields as its table declares them: the page's labels and help.
      static const std::string fields =
          json_object()
              .add_raw("service", metrics::fields_json(actors::coordinator_field_list()))
              .add_raw("transport", metrics::fields_json(actors::gateway_field_list()))
              .str();
      return fields;
    };
    if (auto answer = http::dashboard_routes(source, request)) return *answer;
  }
  return http::ops_routes(probe, request);
}

}  // namespace ss::cli
