#include "ops_endpoint.hpp"

#include <spdlog/spdlog.h>

#include "ss/core/json_value.hpp"
#include "ss/core/metrics/status_metrics.hpp"
#include "ss/http/ops_routes.hpp"

namespace ss::cli {

result<std::unique_ptr<ops_endpoint>> ops_endpoint::start(const std::string& listen, const std::string& service_name) {
  std::unique_ptr<ops_endpoint> ep(new ops_endpoint());
  ep->name_ = service_name;
  if (listen.empty()) return ep;
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size())
    return status(errc::invalid_argument, "--ops-listen " + listen + ": expected HOST:PORT, e.g. 0.0.0.0:9100");
  std::uint64_t port = 0;
  for (std::size_t i = colon + 1; i < listen.size(); ++i) {
    if (listen[i] < '0' || listen[i] > '9' || port > 65535)
      return status(errc::invalid_argument, "--ops-listen " + listen + ": the port is not a number from 0 to 65535");
    port = port * 10 + static_cast<std::uint64_t>(listen[i] - '0');
  }
  if (port > 65535)
    return status(errc::invalid_argument, "--ops-listen " + listen + ": the port is not a number from 0 to 65535");
  http::ops_http_options o;
  o.bind = listen.substr(0, colon);
  if (o.bind.empty()) o.bind = "0.0.0.0";
  o.port = static_cast<std::uint16_t>(port);
  auto* self = ep.get();
  o.handler = [self](const http::http_request& r) { return self->handle(r); };
  auto server = http::ops_http_server::start(std::move(o));
  if (!server.is_ok()) return server.error().with_context(service_name + ": --ops-listen " + listen);
  ep->server_ = std::move(*server);
  spdlog::info("{}: health and metrics at http://{}:{}/metrics", service_name, listen.substr(0, colon),
               ep->server_->port());
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

void ops_endpoint::stopping(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  service_ = nullptr;
  why_not_ready_ = why;
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
    // The listed fields of the service's status (what `shadowsync status` shows).
    if (service_ != nullptr) {
      if (auto status = json_value::parse(service_->status()); status.is_ok())
        metrics::append_status_metrics(text, *status, labels);
      else
        spdlog::warn("{}: /metrics: the status does not parse: {}", name_, status.error().message());
    }
    return text.str();
  };
  return http::ops_routes(probe, request);
}

}  // namespace ss::cli
