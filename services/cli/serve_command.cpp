// shadowsync serve: answers POST /predict with click probabilities from a model, over HTTP, with
// /healthz, /readyz and /metrics beside it (ss/http/predict_routes.hpp). The listener starts first
// (live, not ready), then the model loads (ready), then requests are served until SIGINT or SIGTERM.
// The model is a serving::served_model: it scores as `shadowsync predict` does. With --model it is
// a model file's; with --publish-dir a serving::publish_follower keeps it at the newest publication
// of a training job (its base and deltas), polling the directory every --poll-interval.
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "command_line.hpp"
#include "commands.hpp"
#include "ops_endpoint.hpp"
#include "ss/core/clock.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/core/serving/publish_follower.hpp"
#include "ss/core/serving/served_model.hpp"
#include "ss/http/ops_http_server.hpp"
#include "ss/http/predict_routes.hpp"
#include "ss/service/format.hpp"
#include "ss/service/shutdown_signal.hpp"

namespace ss::cli {
namespace {

struct serve_options {
  std::string model;
  std::string publish_dir;
  double poll_interval = 0.2;
  std::string listen = "127.0.0.1:8080";
  int workers = 2;
  std::int64_t max_request_bytes = std::int64_t{1} << 20;
  int max_request_rows = 1000;
  int max_connections = 64;
  log_flags log;
};

const char* const serve_help =
    "Serves click predictions from a model (a model file, or the newest publication of a publish directory, "
    "followed as new ones appear) over HTTP: POST /predict takes rows in the model's input format (text, "
    "one row per line, or JSON {\"rows\": [...]}; the label column may be left out) and answers "
    "{\"version\": N, \"predictions\": [...]}, the probabilities `shadowsync predict` computes for those rows. "
    "/healthz, /readyz (ready once the model is loaded) and /metrics (Prometheus) beside it. Runs until SIGINT or "
    "SIGTERM.";

void add_serve_flags(config::option_set& opts, serve_options& o) {
  opts.add("model", &o.model, "The model file (.ssm) to serve (`shadowsync train --export`, `shadowsync export`).");
  opts.add("publish-dir", &o.publish_dir,
           "Serve the newest publication of this publish directory instead (a training job's --publish-dir), and "
           "follow it: new deltas are applied, a newer base loaded.");
  opts.add("poll-interval", &o.poll_interval, "Seconds between two looks at --publish-dir.").range(0.01, 60.0);
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
  // Whether it was set within `seconds`.
  bool wait_for(double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopped_; });
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

// The follower's part of /metrics: how far behind the newest publication the model is, and why.
void append_follow_metrics(metrics::prometheus_text& p, const serving::publish_follower& f) {
  const serving::follow_status s = f.status();
  const auto n = [](std::uint64_t v) { return static_cast<double>(v); };
  p.gauge("shadowsync_serve_newest_publication", "The newest publication's sequence in --publish-dir.",
          n(s.newest_sequence));
  p.gauge("shadowsync_serve_publications_behind", "Publications newer than the version served.", n(s.behind));
  p.counter("shadowsync_serve_bases_loaded", "Bases loaded from --publish-dir.", n(s.bases_loaded));
  p.counter("shadowsync_serve_deltas_applied", "Deltas applied from --publish-dir.", n(s.deltas_applied));
  if (s.problem)
    p.gauge("shadowsync_serve_follow_stopped",
            "1 while the model stops short of the newest publication, labelled with why.", 1,
            {{"reason", s.problem->reason}});
  for (const auto& [reason, count] : f.problems())
    p.counter("shadowsync_serve_publication_problems",
              "Publications that could not be taken, by reason (each counted once): gap, bad_manifest, bad_data, "
              "other_job, other_model, broken_link, no_base, bad_base, bad_delta, unreadable.",
              n(count), {{"reason", reason}});
}

std::string follow_detail(const serving::publish_follower& f) {
  const serving::follow_status s = f.status();
  const auto m = f.model();
  std::string out = "version " + std::to_string(m ? m->version().sequence : 0);
  if (s.behind > 0) {
    out += ", " + std::to_string(s.behind) + " publication" + (s.behind == 1 ? "" : "s") + " behind the newest (" +
           std::to_string(s.newest_sequence) + ")";
    if (s.problem) out += ": " + s.problem->message;
  }
  return out;
}

// Polls the publish directory until stopped; serves each new model object.
void follow_publications(serving::publish_follower& follower, http::predict_routes& routes, double interval,
                         stop_request& stop) {
  std::optional<std::pair<std::string, std::uint64_t>> logged;  // the problem last logged
  do {
    const auto step = follower.poll();
    const auto model = follower.model();
    const auto st = follower.status();
    if (step.new_model) {
      routes.serve(model);
      const auto s = model->stats();
      spdlog::info("serve: serving version {} from {} ({} embedding rows, trained on {} examples)",
                   s.version.sequence, follower.dir().string(), service::with_commas(s.rows),
                   service::with_commas(s.version.examples_trained));
    } else if (step.new_version) {
      spdlog::debug("serve: version {}", model->version().sequence);
    }
    if (st.problem && (!logged || logged->first != st.problem->reason || logged->second != st.problem->sequence)) {
      spdlog::warn("serve: {} ({}; serving {})", st.problem->message, st.problem->reason,
                   model ? "version " + std::to_string(model->version().sequence) : std::string("nothing yet"));
      logged = std::make_pair(st.problem->reason, st.problem->sequence);
    } else if (!st.problem) {
      logged.reset();
    }
    if (model == nullptr)
      routes.not_ready("no usable base in " + follower.dir().string() +
                       (st.problem ? ": " + st.problem->message : std::string(" yet")));
  } while (!stop.wait_for(interval));
}

std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int run_serve(const args& a, const config::environment& env) {
  serve_options o;
  command_line cmd({"serve", ""}, serve_help);
  add_serve_flags(cmd.options(), o);
  if (auto done = cmd.parse(a, env, &o.log)) return *done;
  if (o.model.empty() == o.publish_dir.empty())
    return cmd.refuse("give --model or --publish-dir (one of them; see --help)");
  if (auto where = parse_host_port("--listen", o.listen); !where.is_ok()) return cmd.refuse(where.error().message());

  stop_request stop;
  service::shutdown_signal signals([&stop](int sig) {
    spdlog::warn("serve: signal {}: stopping", sig);
    stop.set();
  });
  // After the signal mask: the server's threads inherit it.
  std::optional<serving::publish_follower> follower;
  if (!o.publish_dir.empty()) follower.emplace(o.publish_dir);
  steady_clock_source clock;
  http::predict_route_options ro;
  ro.max_rows = static_cast<std::size_t>(o.max_request_rows);
  ro.clock = &clock;
  ro.wall_unix_ms = wall_clock_ms;
  if (follower) {
    ro.ready_detail = [&follower] { return follow_detail(*follower); };
    ro.more_metrics = [&follower](metrics::prometheus_text& p) { append_follow_metrics(p, *follower); };
  }
  http::predict_routes routes(std::move(ro));
  routes.not_ready(follower ? "no usable base in " + o.publish_dir + " yet" : "loading the model " + o.model);
  auto server = start_server(o, routes);
  if (!server.is_ok()) {
    spdlog::error("serve: {}", server.error().message());
    return 1;
  }
  const std::string address = "http://" + parse_host_port("--listen", o.listen)->first + ":" +
                              std::to_string((*server)->port());
  spdlog::info("serve: listening on {} (POST /predict; /healthz, /readyz, /metrics)", address);

  if (follower) {
    follow_publications(*follower, routes, o.poll_interval, stop);
  } else {
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
