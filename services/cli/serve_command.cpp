// shadowsync serve: answers POST /predict with click probabilities from a model, over HTTP, with
// /healthz, /readyz and /metrics beside it (ss/http/predict_routes.hpp). The listener starts first
// (live, not ready), then the model loads (ready), then requests are served until SIGINT or SIGTERM.
// The model is a serving::served_model: it scores as `shadowsync predict` does, and takes updates
// (serving::model_update) and replacements while it serves, which a publish directory's follower
// feeds it.
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "command_line.hpp"
#include "commands.hpp"
#include "ops_endpoint.hpp"
#include "ss/core/clock.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/core/serving/served_model.hpp"
#include "ss/http/ops_http_server.hpp"
#include "ss/http/predict_routes.hpp"
#include "ss/service/format.hpp"
#include "ss/service/shutdown_signal.hpp"

namespace ss::cli {
namespace {

struct serve_options {
  std::string model;
  std::string listen = "127.0.0.1:8080";
  int workers = 2;
  std::int64_t max_request_bytes = std::int64_t{1} << 20;
  int max_request_rows = 1000;
  int max_connections = 64;
  log_flags log;
};

const char* const serve_help =
    "Serves click predictions from a model over HTTP: POST /predict takes rows in the model's input format (text, "
    "one row per line, or JSON {\"rows\": [...]}; the label column may be left out) and answers "
    "{\"version\": N, \"predictions\": [...]}, the probabilities `shadowsync predict` computes for those rows. "
    "/healthz, /readyz (ready once the model is loaded) and /metrics (Prometheus) beside it. Runs until SIGINT or "
    "SIGTERM.";

void add_serve_flags(config::option_set& opts, serve_options& o) {
  opts.add("model", &o.model, "The model file (.ssm) to serve (`shadowsync train --export`, `shadowsync export`).");
  opts.add("listen", &o.listen, "HTTP address to serve on, HOST:PORT (port 0: any free port, logged).");
  opts.add("workers", &o.workers, "Threads that read and score POST /predict requests.").range(1, 256);
  opts.add("max-request-bytes", &o.max_request_bytes,
           "Largest request body read; a larger Content-Length is refused with 413 before it is read.")
      .range(std::int64_t{64}, std::int64_t{1} << 30);
  opts.add("max-request-rows", &o.max_request_rows, "Most rows in one request; more are refused with 413.")
      .range(1, 1 << 20);
  opts.add("max-connections", &o.max_connections,
           "Connections waiting for their request (plus a reserve of a quarter); as many requests may wait for a "
           "worker, further ones are refused with 503.")
      .range(1, 65536);
  add_log_flags(opts, o.log);
}

// Waits for SIGINT or SIGTERM.
class stop_request {
 public:
  void set() {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    cv_.notify_all();
  }
  bool is_set() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_;
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stopped_; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

result<std::unique_ptr<http::ops_http_server>> start_server(const serve_options& o, http::predict_routes& routes) {
  auto where = parse_host_port("--listen", o.listen);
  if (!where.is_ok()) return where.error();
  http::ops_http_options h;
  h.bind = where->first;
  h.port = where->second;
  h.handler = [&routes](const http::http_request& r) { return routes.handle(r); };
  h.max_body_bytes = static_cast<std::size_t>(o.max_request_bytes);
  h.body_handler = [&routes] { return routes.make_worker_handler(); };
  h.workers = o.workers;
  h.max_connections = o.max_connections;
  auto server = http::ops_http_server::start(std::move(h));
  if (!server.is_ok()) return server.error().with_context("--listen " + o.listen);
  routes.attach(server->get());
  return server;
}

// Loads the model file and serves it (as version 0, trained on what its header says).
result<std::shared_ptr<serving::served_model>> load_served_model(const std::string& path,
                                                                 const steady_clock_source& clock) {
  const double t0 = clock.now_seconds();
  auto loaded = model::load_model(path);
  if (!loaded.is_ok()) return loaded.error().with_context("cannot load the model");
  // Scoring needs the model's input schema: a model whose schema is gone cannot read requests.
  if (auto schema = model::model_schema(loaded->header, loaded->job); !schema.is_ok())
    return schema.error().with_context("cannot read the model's input schema");
  spdlog::info("serve: model {}: {}, {} embedding rows, trained on {} examples, loaded in {}", path,
               loaded->setup.dlrm.describe(), service::with_commas(loaded->stats.rows),
               service::with_commas(loaded->header.train_examples),
               service::human_seconds(clock.now_seconds() - t0));
  const serving::model_version version{0, loaded->header.train_examples, loaded->header.created_unix_ms};
  return std::make_shared<serving::served_model>(std::move(*loaded), version);
}

}  // namespace

int run_serve(const args& a, const config::environment& env) {
  serve_options o;
  command_line cmd({"serve", ""}, serve_help);
  add_serve_flags(cmd.options(), o);
  if (auto done = cmd.parse(a, env, &o.log)) return *done;
  if (o.model.empty()) return cmd.refuse("--model is required (see --help)");
  if (auto where = parse_host_port("--listen", o.listen); !where.is_ok()) return cmd.refuse(where.error().message());

  stop_request stop;
  service::shutdown_signal signals([&stop](int sig) {
    spdlog::warn("serve: signal {}: stopping", sig);
    stop.set();
  });
  // After the signal mask: the server's threads inherit it.
  steady_clock_source clock;
  http::predict_route_options ro;
  ro.max_rows = static_cast<std::size_t>(o.max_request_rows);
  ro.clock = &clock;
  ro.wall_unix_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  http::predict_routes routes(std::move(ro));
  routes.not_ready("loading the model " + o.model);
  auto server = start_server(o, routes);
  if (!server.is_ok()) {
    spdlog::error("serve: {}", server.error().message());
    return 1;
  }
  const std::string address = "http://" + parse_host_port("--listen", o.listen)->first + ":" +
                              std::to_string((*server)->port());
  spdlog::info("serve: listening on {} (POST /predict; /healthz, /readyz, /metrics)", address);

  auto model = load_served_model(o.model, clock);
  if (!model.is_ok()) {
    spdlog::error("serve: {}", model.error().message());
    routes.not_ready(model.error().message());
    (*server)->stop();
    return 1;
  }
  if (!stop.is_set()) {
    routes.serve(*model);
    spdlog::info("serve: ready at {}/predict ({} workers, at most {} rows and {} bytes a request)", address,
                 o.workers, o.max_request_rows, o.max_request_bytes);
    stop.wait();
  }
  routes.not_ready("stopping");
  (*server)->stop();
  const auto& c = routes.counters();
  spdlog::info("serve: stopped after {} requests ({} rows scored)", service::with_commas(c.predict_requests.load()),
               service::with_commas(c.rows_scored.load()));
  return 0;
}

std::vector<std::string> serve_option_names() { return names_of_options<serve_options>(add_serve_flags); }

}  // namespace ss::cli
