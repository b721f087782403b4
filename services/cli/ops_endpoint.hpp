// The operations endpoint of a service process (--ops-listen HOST:PORT): /healthz, /readyz and
// /metrics (Prometheus) over HTTP, for orchestrators and scrapers. The service registers itself
// once it is up and withdraws before it stops; until then the endpoint is live but not ready.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "ss/actors/service.hpp"
#include "ss/core/status.hpp"
#include "ss/http/ops_http_server.hpp"

namespace ss::cli {

class ops_endpoint {
 public:
  // "" = no endpoint (start returns an inactive one). Errors: a malformed address, a busy port.
  static result<std::unique_ptr<ops_endpoint>> start(const std::string& listen, const std::string& service_name);
  ~ops_endpoint();

  // The running service whose status feeds /metrics and /readyz; nullptr withdraws it (waits for
  // a request that is using it to finish, so the caller may then destroy the service).
  void attach(actors::running_service* service);
  // The process is on its way out: /healthz keeps answering, /readyz says why it is not ready.
  void stopping(const std::string& why);
  std::uint16_t port() const;

 private:
  ops_endpoint() = default;
  http::http_response handle(const http::http_request& request);

  std::string name_;
  mutable std::mutex mu_;  // guards service_ and why_not_ready_; held while a request reads status
  actors::running_service* service_ = nullptr;
  std::string why_not_ready_ = "starting";
  std::unique_ptr<http::ops_http_server> server_;
};

}  // namespace ss::cli
