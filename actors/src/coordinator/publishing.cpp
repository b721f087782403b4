// The coordinator's side of delta publishing (--publish-dir): when to publish, with what dense
// state, and what came of it. The publisher actor writes the files (publisher.hpp).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "state.hpp"

namespace ss::actors::coordinator_detail {
namespace {

void request_publication(coordinator_actor* self, std::vector<float> dense, const totals& t, bool final) {
  auto& st = self->state;
  auto r = std::make_shared<publication_request>();
  r->dense = std::move(dense);
  r->examples_trained = t.committed;
  r->click_rate = click_rate_of(t);
  r->shard_endpoints = st.view.shards;
  r->shard_incarnations = st.view.shard_incarnations;
  r->final = final;
  st.publishing = true;
  self->send(st.publisher, publish_atom::value, publication_request_ptr(std::move(r)));
}

}  // namespace

bool start_publishing(coordinator_actor* self) {
  auto& st = self->state;
  if (st.options.publish_dir.empty() || st.result) return true;
  publisher_options o;
  o.dir = st.options.publish_dir;
  o.job_id = fmt::format("{:016x}", st.job_id);
  o.job = st.options.job;
  o.base_every = static_cast<std::uint32_t>(st.options.publish_base_every);
  o.retain = static_cast<std::uint32_t>(st.options.publish_retain);
  // "exact": the rows as the shards keep them (16-bit rows publish losslessly at half fp32's bytes).
  auto encoding = publish::parse_row_encoding(st.options.publish_rows == "exact" ? st.options.job.model.row_precision
                                                                                  : st.options.publish_rows);
  if (!encoding.is_ok()) {
    fail_job(self, "--publish-rows: " + encoding.error().message());
    return false;
  }
  o.encoding = *encoding;
  o.page_rows = static_cast<std::uint32_t>(st.options.job.export_page_rows);
  o.timeout = std::chrono::milliseconds(static_cast<long>(std::max(10.0, st.options.job.request_timeout) * 1000));
  o.shard_wait = std::chrono::milliseconds(static_cast<long>(st.options.job.peer_wait * 1000));
  o.detached = st.options.detached_evaluator;
  o.wall_clock_ms = st.options.wall_clock_ms;
  auto publisher = spawn_publisher(self->system(), st.gateway, publisher_listener_actor{self}, view_source_actor{self},
                                   std::move(o));
  if (!publisher.is_ok()) {
    fail_job(self, "cannot publish: " + publisher.error().message());
    return false;
  }
  st.publisher = std::move(*publisher);
  return true;
}

void publish_tick(coordinator_actor* self, const totals& t) {
  auto& st = self->state;
  // A live reshard: rows are on two shards until the drop, and counts change; publish after it.
  if (!st.publisher || st.publishing || st.final_publish_stage != 0 || live_reshape(st)) return;
  if (st.state != wire::job_state::running && st.state != wire::job_state::draining) return;
  const auto now = self->clock().now();
  if (st.last_publish_at && seconds_between(*st.last_publish_at, now) < st.options.publish_interval) return;
  // The last publication held no row and nothing was trained since (training is over, or
  // waits): nothing to publish until the final model, which is published last. (Trainings are
  // reported with heartbeats, so an unchanged count alone says little at a short interval.)
  if (st.last_publication && st.last_publication->rows == 0 && t.examples == st.examples_at_last_publish) return;
  st.last_publish_at = now;
  st.examples_at_last_publish = t.examples;
  st.publishing = true;
  gather_central(self, [self, t](job::dense_state d) {
    auto& s = self->state;
    if (s.final_publish_stage != 0 || d.params.empty()) {
      s.publishing = false;  // the job ended meanwhile, or there is no model yet
      return;
    }
    request_publication(self, std::move(d.params), t, false);
  });
}

bool publish_final(coordinator_actor* self, const totals& t) {
  auto& st = self->state;
  if (!st.publisher || st.final_publish_stage == 2 || st.state == wire::job_state::failed || st.central.empty())
    return false;
  if (st.final_publish_stage == 0) {
    st.final_publish_stage = 1;
    spdlog::info("{}: publishing the final model to {}", st.options.name, st.options.publish_dir);
    request_publication(self, st.central, t, true);
  }
  return true;
}

void on_published(coordinator_actor* self, const publication_outcome& out) {
  auto& st = self->state;
  st.publishing = false;
  if (out.result.is_ok()) {
    st.counters.publications.add(1);
    st.counters.published_rows.add(out.rows);
    st.counters.published_tombstones.add(out.tombstones);
    st.counters.published_bytes.add(out.bytes);
    st.publish_error.clear();
    st.last_publication = out;
    spdlog::debug("{}: published {} {}: {} rows, {} tombstones, {} bytes in {:.3f} s", st.options.name,
                  publish::to_string(out.kind), out.sequence, out.rows, out.tombstones, out.bytes, out.seconds);
  } else {
    st.counters.publications_failed.add(1);
    if (st.publish_error != out.result.message())
      spdlog::warn("{}: {} (tried again in {} s)", st.options.name, out.result.message(), st.options.publish_interval);
    st.publish_error = out.result.message();
  }
  if (!out.final || st.final_publish_stage != 1 || st.result) return;
  st.final_publish_stage = 2;
  if (!out.result.is_ok()) {
    // The job's model is exported and scored; what serving has is older than it. The result says so.
    spdlog::error("{}: the final publication failed: {}", st.options.name, out.result.message());
  } else {
    spdlog::info("{}: published the final model as {} {} ({} rows)", st.options.name, publish::to_string(out.kind),
                 out.sequence, out.rows);
  }
  finish(self, st.final_test ? &*st.final_test : nullptr, st.final_test_bad_rows);
}

}  // namespace ss::actors::coordinator_detail
