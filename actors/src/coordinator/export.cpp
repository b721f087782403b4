// The coordinator's model export: the final model at the job's end (--export) and on request
// (`shadowsync export`). The exporter actor does the work; this file gives it the model's header,
// the dense state and the shards.
#include <spdlog/spdlog.h>

#include "state.hpp"
#include "ss/actors/exporter.hpp"
#include "ss/core/job/preflight.hpp"

namespace ss::actors::coordinator_detail {
namespace {

result<exporter_input> export_input(coordinator_actor* self, const std::string& path, std::vector<float> dense,
                                    double click_rate, std::uint64_t examples) {
  auto& st = self->state;
  if (path.empty()) return status(errc::invalid_argument, "no path to export to");
  job::job_options job = st.options.job;
  SS_RETURN_IF_ERROR(job::resolve_feature_counts(job));
  auto header = model::header_for_job(job, click_rate, examples, "shadowsync coordinator, job " + std::to_string(st.job_id));
  if (!header.is_ok()) return header.error();
  if (dense.size() != header->dense_params)
    return status(errc::internal, "the dense state has " + std::to_string(dense.size()) + " parameters, the model " +
                                      std::to_string(header->dense_params));
  exporter_input in;
  in.path = path;
  in.header = std::move(*header);
  in.dense = std::move(dense);
  in.shard_endpoints = st.view.shards;
  in.shard_incarnations = st.view.shard_incarnations;
  in.page_rows = static_cast<std::uint32_t>(st.options.job.export_page_rows);
  // A page is answered in well under a second; the watch on the view catches a dead shard sooner.
  in.timeout = std::chrono::milliseconds(static_cast<long>(std::max(10.0, st.options.job.request_timeout) * 1000));
  // Long enough for a shard to be dropped and restarted, and to load its rows.
  in.shard_wait = std::chrono::milliseconds(static_cast<long>(st.options.job.peer_wait * 1000));
  return in;
}

}  // namespace

void start_export(coordinator_actor* self, const std::vector<float>& dense, double click_rate,
                        std::uint64_t examples) {
  auto& st = self->state;
  auto in = export_input(self, st.options.export_path, dense, click_rate, examples);
  if (!in.is_ok()) {
    self->send(self, exported_atom::value, make_body(wire::error_reply{in.error().code(), in.error().message()}));
    return;
  }
  spdlog::info("{}: writing the model to {}", st.options.name, st.options.export_path);
  spawn_exporter(self->system(), st.gateway, std::move(*in), exporter_listener_actor{self}, view_source_actor{self},
                 st.options.detached_evaluator);
}

caf::result<body_ptr> serve_export(coordinator_actor* self, const wire::export_request& req, double click_rate,
                                   std::uint64_t examples) {
  auto& st = self->state;
  if (st.state != wire::job_state::running && st.state != wire::job_state::draining)
    // Waiting: asking again may find it running; done or failed: it will not.
    return make_body(wire::error_reply{st.state == wire::job_state::waiting ? errc::unavailable : errc::invalid_argument,
                                       std::string("the job is ") + wire::to_string(st.state) +
                                           ": export while it runs, or use the coordinator's --export for the final "
                                           "model"});
  auto target = job::resolve_export_request(req.path, st.options.export_dir, st.options.protected_dirs);
  if (!target.is_ok()) {
    spdlog::warn("{}: {}", st.options.name, target.error().message());
    return make_body(wire::error_reply{target.error().code(), target.error().message()});
  }
  auto p = self->make_response_promise<body_ptr>();
  const std::string path = *target;
  gather_central(self, [self, p, path, click_rate, examples](job::dense_state d) mutable {
    auto in = export_input(self, path, std::move(d.params), click_rate, examples);
    if (!in.is_ok()) {
      p.deliver(make_body(wire::error_reply{in.error().code(), in.error().message()}));
      return;
    }
    // A relay answers the request when the exporter reports, or when the exporter ends without
    // a report (it stops with the coordinator). The promise is a spawn argument, not a capture:
    // CAF 0.17 binds a null reference for an actor spawned without arguments (UBSan). It gets
    // the export's outcome, and the exporter itself (to watch it).
    using relay_actor = exporter_listener_actor::extend<caf::reacts_to<exporter_actor>>;
    auto relay = self->spawn(
        [](relay_actor::pointer a, caf::response_promise promise) -> relay_actor::behavior_type {
          a->set_down_handler([a, promise](const caf::down_msg&) {
            auto answer = promise;  // delivering is not const
            answer.deliver(make_body(wire::error_reply{errc::unavailable, "the export stopped before it finished"}));
            a->quit();
          });
          return {[a, promise](exported_atom, const body_ptr& b) mutable {
                    promise.deliver(b);
                    a->quit();
                  },
                  [a](const exporter_actor& exporter) { a->monitor(exporter); }};
        },
        p);
    spdlog::info("{}: exporting the model to {} (on request)", self->state.options.name, path);
    auto exporter = spawn_exporter(self->system(), self->state.gateway, std::move(*in), relay, view_source_actor{self},
                                   self->state.options.detached_evaluator);
    self->send(relay, exporter);
  });
  return p;
}

}  // namespace ss::actors::coordinator_detail
