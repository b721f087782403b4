// The coordinator's durable side: the live central dense copy, cluster snapshots (shard
// checkpoints + dense state + reader positions under one id, manifest last), and resuming.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "state.hpp"
#include "ss/actors/read_positions.hpp"
#include "ss/actors/sync_server.hpp"
#include "ss/core/sync/sync_algorithms.hpp"

namespace ss::actors::coordinator_detail {
namespace {

caf::timespan seconds_span(double s) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(s));
}

// Asks sync server `k` (0: the one in this process) for its slice's state.
void ask_slice(coordinator_actor* self, std::uint32_t k, std::function<void(const wire::dense_reply*)> done) {
  auto& st = self->state;
  auto env = std::make_shared<const wire::envelope>(wire::envelope{wire::protocol_version, 0, wire::dense_request{}});
  const auto timeout = seconds_span(st.options.job.request_timeout);
  if (k == 0) {
    if (!st.options.local_sync) return done(nullptr);
    self->request(st.options.local_sync, timeout, serve_atom::value, env)
        .then([done](const body_ptr& b) { done(std::get_if<wire::dense_reply>(b.get())); },
              [done](const caf::error&) { done(nullptr); });
    return;
  }
  const std::string endpoint = k < st.view.syncs.size() ? st.view.syncs[k] : std::string();
  call_endpoint(
      self, endpoint, make_body(wire::dense_request{}), timeout,
      [done](const envelope_ptr& e) { done(std::get_if<wire::dense_reply>(&e->message)); },
      [done](const std::string&) { done(nullptr); });
}

// ---- snapshots ----------------------------------------------------------------------------

void answer_waiters(snapshot_in_progress& snap, const body_ptr& answer) {
  for (auto& w : snap.waiters) w.deliver(answer);
  snap.waiters.clear();
}

void abandon(coordinator_actor* self, const std::string& why) {
  auto& st = self->state;
  auto& snap = *st.snapshot;
  st.counters.snapshots_failed.add();
  st.last_snapshot_error = "snapshot " + std::to_string(snap.id) + ": " + why;
  spdlog::warn("{}: snapshot {} abandoned: {} (the previous snapshot stays the latest)", st.options.name, snap.id,
               why);
  answer_waiters(snap, make_body(wire::error_reply{errc::unavailable, "snapshot " + std::to_string(snap.id) +
                                                                          " abandoned: " + why}));
  st.last_snapshot_at = self->clock().now();  // try again a full interval later
  st.snapshot.reset();
  reshape_snapshot_done(self, false, why);
}

// Snapshot ids to keep besides the one being taken: the newest retain - 1 complete ones.
std::vector<std::uint64_t> ids_to_keep(coordinator_state& st) {
  std::vector<std::uint64_t> keep;
  auto ids = st.options.snapshots->list();
  if (!ids.is_ok()) return keep;
  const std::size_t n = static_cast<std::size_t>(std::max(0, st.options.snapshot_retain - 1));
  for (auto it = ids->rbegin(); it != ids->rend() && keep.size() < n; ++it) keep.push_back(*it);
  return keep;
}

void complete_if_done(coordinator_actor* self) {
  auto& st = self->state;
  if (!st.snapshot) return;
  auto& snap = *st.snapshot;
  if (!snap.failure.empty()) return abandon(self, snap.failure);
  if (!snap.cut_taken || !snap.dense_done || snap.shards_pending > 0) return;
  auto& store = *st.options.snapshots;
  const auto keep = ids_to_keep(st);
  if (auto w = store.write(snap.manifest, snap.dense, st.job_text); !w.is_ok())
    return abandon(self, "writing it to " + store.location() + ": " + w.message());
  // Retention: everything older than the kept ones goes (the shards dropped their checkpoints).
  if (auto ids = store.list(); ids.is_ok()) {
    for (auto id : *ids) {
      if (id == snap.id || std::find(keep.begin(), keep.end(), id) != keep.end()) continue;
      if (auto r = store.remove(id); !r.is_ok()) spdlog::warn("{}: pruning: {}", st.options.name, r.message());
    }
  }
  const double seconds = seconds_between(snap.started, self->clock().now());
  std::uint64_t rows = 0, bytes = 0;  // a reshape's counts hold the rows that moved away twice
  for (const auto& s : snap.manifest.shards) {
    rows += s.rows;
    bytes += s.bytes;
  }
  st.counters.snapshots_taken.add();
  st.last_snapshot_error.clear();
  st.last_snapshot_id = snap.id;
  st.last_snapshot_at = self->clock().now();
  st.last_snapshot_seconds = seconds;
  st.last_snapshot_rows = rows;
  st.last_snapshot_bytes = bytes;
  std::uint64_t committed = 0;
  for (const auto& r : snap.manifest.readers) committed += r.examples;
  spdlog::info("{}: snapshot {} complete in {:.2f}s: {} examples committed, {} embedding rows ({:.1f} MB on the "
               "shards), {} dense parameters, at {}",
               st.options.name, snap.id, seconds, committed, rows, static_cast<double>(bytes) / 1e6,
               snap.dense.params.size(), store.path_of(snap.id));
  answer_waiters(snap, make_body(wire::snapshot_reply{snap.id, store.path_of(snap.id), rows, bytes, 0, seconds}));
  st.snapshot.reset();
  reshape_snapshot_done(self, true, "");
}

// A reshape's snapshot (the commit of its rows' move), the one snapshot taken before the job runs.
bool reshape_snapshot(const coordinator_state& st) {
  return st.reshape && st.reshape->stage == reshape_in_progress::stage_kind::snapshot;
}

// The shards of the job's count (a reshape's leaving shards are not in it), and the first of
// them with no member (a snapshot waits for it), if any.
std::size_t snapshot_shards(const coordinator_state& st) {
  return reshape_snapshot(st) ? st.reshape->to : st.shard_slots.size();
}
std::optional<std::string> absent_shard(const coordinator_state& st) {
  for (std::size_t i = 0; i < snapshot_shards(st); ++i)
    if (st.shard_slots[i] == 0) return "shard " + std::to_string(i) + " is absent";
  return std::nullopt;
}

// What the manifest records of the trainers: the departed total, and each live trainer and
// ghost by incarnation.
void record_trainers(const coordinator_state& st, job::snapshot_manifest& m) {
  m.departed = st.departed;
  m.departed.incarnation = 0;
  for (const auto& [id, mi] : st.members) {
    if (mi.role != wire::role::trainer) continue;
    const auto& p = mi.progress;
    m.trainers.push_back({mi.incarnation, p.examples, p.loss_sum, p.clicks, p.active_seconds});
  }
  for (const auto& [inc, g] : st.ghosts) m.trainers.push_back(g);
}

}  // namespace

std::int64_t wall_ms(const coordinator_state& st) {
  if (st.options.wall_clock_ms) return st.options.wall_clock_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void adopt_snapshot(coordinator_actor* self, const job::loaded_snapshot& snapshot) {
  auto& st = self->state;
  const auto& m = snapshot.manifest;
  st.job_id = m.job_id;
  st.resumed_from = m.snapshot_id;
  st.last_snapshot_id = m.snapshot_id;
  st.departed = m.departed;
  for (const auto& t : m.trainers) st.ghosts[t.incarnation] = t;
  for (std::size_t i = 0; i < m.readers.size() && i < st.reader_commits.size(); ++i) st.reader_commits[i] = m.readers[i];
  st.read_plan = m.read_plan;
  st.resumed_dense = snapshot.dense;
  st.gathered_optimizer = {snapshot.dense.optimizer, snapshot.dense.optimizer_steps};
  // After a stored switch the snapshot's count is the one being left: nothing to plan from it.
  if (!st.options.switched) plan_reshape(self, m);
  std::uint64_t committed = m.read_plan.examples;
  for (const auto& r : m.readers) committed += r.examples;
  const std::string optimizer =
      snapshot.dense.optimizer.empty()
          ? std::string()
          : fmt::format(" (and the trainers' optimizer state after {} updates)", snapshot.dense.optimizer_steps);
  spdlog::info("{}: resuming job {:016x} from snapshot {}: {} examples committed, {} dense parameters{}, {} shard "
               "checkpoint(s)",
               st.options.name, m.job_id, m.snapshot_id, committed, snapshot.dense.params.size(), optimizer,
               m.shards.size());
  // Slice 0 of the sync state lives here.
  if (st.options.local_sync && !snapshot.dense.params.empty()) {
    const auto slices = static_cast<std::uint32_t>(st.options.job.sync_servers);
    const auto [offset, length] = slice_bounds(snapshot.dense.params.size(), 0, slices);
    wire::sync_restore r;
    r.slice = 0;
    r.params.assign(snapshot.dense.params.begin() + static_cast<std::ptrdiff_t>(offset),
                    snapshot.dense.params.begin() + static_cast<std::ptrdiff_t>(offset + length));
    if (snapshot.dense.momentum.size() == snapshot.dense.params.size())
      r.momentum.assign(snapshot.dense.momentum.begin() + static_cast<std::ptrdiff_t>(offset),
                        snapshot.dense.momentum.begin() + static_cast<std::ptrdiff_t>(offset + length));
    auto env = std::make_shared<const wire::envelope>(wire::envelope{wire::protocol_version, 0, std::move(r)});
    // A request, not a send: the answer must come back as a response, not as a stray message.
    self->request(st.options.local_sync, caf::infinite, serve_atom::value, env)
        .then([](const body_ptr&) {},
              [name = st.options.name](const caf::error& e) {
                spdlog::warn("{}: the local sync server did not take the snapshot's state: {}", name,
                             caf::to_string(e));
              });
  }
}

void restore_sync_server(coordinator_actor* self, std::uint32_t slice, const std::string& endpoint, int attempt) {
  auto& st = self->state;
  if (!st.resumed_dense || st.resumed_dense->params.empty()) return;
  const auto& d = *st.resumed_dense;
  const auto [offset, length] = slice_bounds(d.params.size(), slice, static_cast<std::uint32_t>(st.options.job.sync_servers));
  wire::sync_restore r;
  r.slice = slice;
  r.params.assign(d.params.begin() + static_cast<std::ptrdiff_t>(offset),
                  d.params.begin() + static_cast<std::ptrdiff_t>(offset + length));
  if (d.momentum.size() == d.params.size())
    r.momentum.assign(d.momentum.begin() + static_cast<std::ptrdiff_t>(offset),
                      d.momentum.begin() + static_cast<std::ptrdiff_t>(offset + length));
  const std::string name = st.options.name;
  call_endpoint(
      self, endpoint, make_body(std::move(r)), seconds_span(st.options.job.request_timeout),
      [self, name, slice, endpoint, attempt](const envelope_ptr& e) {
        const auto* err = std::get_if<wire::error_reply>(&e->message);
        if (err == nullptr) return;
        // It registers before its role runs (the job's settings come with the registration):
        // `unavailable` until then. Send the state again shortly; give up after about 10 s.
        if (err->code == errc::unavailable && attempt < 50) {
          self->delayed_send(self, std::chrono::milliseconds(200), renew_atom::value, slice, endpoint, attempt + 1);
          return;
        }
        spdlog::warn("{}: sync server {} refused the snapshot's state: {}", name, slice, err->message);
      },
      [name, slice](const std::string& why) {
        spdlog::warn("{}: could not send sync server {} the snapshot's state ({}); it starts from the first replica",
                     name, slice, why);
      });
}

void gather_replicas(coordinator_actor* self, std::function<void(std::vector<float>)> done, bool with_optimizer) {
  auto& st = self->state;
  struct trainer_to_ask {
    std::string endpoint;
    std::uint64_t incarnation = 0;
    coordinator_state::seen_replica seen;  // its name and examples trained, the replica to come
  };
  std::vector<trainer_to_ask> trainers;
  for (const auto& [id, m] : st.members)
    if (m.role == wire::role::trainer && !m.endpoint.empty())
      trainers.push_back({m.endpoint, m.incarnation, {m.name, {}, m.progress.examples}});
  // Averaged over what is kept, so that the incarnations this gathering did not reach (killed
  // since) count as the final model will count them.
  if (trainers.empty()) return done(average_replicas(st));
  // The optimizer states that come back, weighted as the replicas are.
  struct optimizer_sum {
    std::vector<double> weighted;
    double weight = 0;
    std::uint64_t steps = 0;
  };
  auto optimizers = std::make_shared<optimizer_sum>();
  auto pending = std::make_shared<std::size_t>(trainers.size());
  auto one_done = [self, pending, optimizers, done] {
    if (--*pending > 0) return;
    if (optimizers->weight > 0) {
      auto& kept = self->state.gathered_optimizer;
      kept.values.resize(optimizers->weighted.size());
      for (std::size_t i = 0; i < kept.values.size(); ++i)
        kept.values[i] = static_cast<float>(optimizers->weighted[i] / optimizers->weight);
      kept.steps = optimizers->steps;
    }
    done(average_replicas(self->state));
  };
  for (auto& [endpoint, incarnation, seen] : trainers) {
    call_endpoint(
        self, endpoint, make_body(wire::dense_request{with_optimizer}), seconds_span(st.options.job.request_timeout),
        [self, one_done, optimizers, incarnation = incarnation, seen = std::move(seen)](const envelope_ptr& e) mutable {
          if (const auto* r = std::get_if<wire::dense_reply>(&e->message); r != nullptr && !r->params.empty()) {
            // Weighted by the examples it trained as it answered (its last heartbeat's can be an
            // interval old, and two replicas that never synced average to a model that is
            // sensitive to the weights).
            if (r->examples > 0) seen.examples = r->examples;
            auto& o = *optimizers;
            if (!r->optimizer.empty() && (o.weighted.empty() || o.weighted.size() == r->optimizer.size())) {
              // By examples trained, as the replicas; one that trained none yet counts once.
              const double w = static_cast<double>(std::max<std::uint64_t>(1, seen.examples));
              o.weighted.resize(r->optimizer.size(), 0.0);
              for (std::size_t i = 0; i < r->optimizer.size(); ++i) o.weighted[i] += w * r->optimizer[i];
              o.weight += w;
              o.steps = std::max(o.steps, r->optimizer_steps);
            }
            seen.params = r->params;
            self->state.last_seen_replicas[incarnation] = std::move(seen);
          }
          one_done();
        },
        [one_done](const std::string&) { one_done(); });
  }
}

void gather_central(coordinator_actor* self, std::function<void(job::dense_state)> done,
                    std::vector<float> replicas) {
  auto& st = self->state;
  const auto slices = static_cast<std::uint32_t>(std::max(1, st.options.job.sync_servers));
  struct gathering {
    std::vector<std::vector<float>> params, momentum;
    std::uint32_t pending = 0;
  };
  auto g = std::make_shared<gathering>();
  g->params.resize(slices);
  g->momentum.resize(slices);
  g->pending = slices;
  auto assemble = [self, g, slices, done, replicas = std::move(replicas)]() {
    // The full size: from any slice's neighbours is not enough; take it from the replicas or the
    // snapshot when a slice is missing.
    bool complete = true;
    for (const auto& p : g->params) complete = complete && !p.empty();
    auto build = [g, slices, done](const std::vector<float>& fallback) {
      job::dense_state d;
      std::size_t n = fallback.size();
      if (n == 0) {
        for (const auto& p : g->params) n += p.size();
      }
      bool with_momentum = true;
      for (const auto& m : g->momentum) with_momentum = with_momentum && !m.empty();
      d.params.assign(n, 0.0f);
      if (with_momentum) d.momentum.assign(n, 0.0f);
      for (std::uint32_t k = 0; k < slices; ++k) {
        const auto [offset, length] = slice_bounds(n, k, slices);
        const auto& p = g->params[k];
        if (p.size() == length) {
          std::copy(p.begin(), p.end(), d.params.begin() + static_cast<std::ptrdiff_t>(offset));
          if (with_momentum && g->momentum[k].size() == length)
            std::copy(g->momentum[k].begin(), g->momentum[k].end(), d.momentum.begin() + static_cast<std::ptrdiff_t>(offset));
        } else if (fallback.size() == n) {
          std::copy(fallback.begin() + static_cast<std::ptrdiff_t>(offset),
                    fallback.begin() + static_cast<std::ptrdiff_t>(offset + length),
                    d.params.begin() + static_cast<std::ptrdiff_t>(offset));
        } else {
          d.params.clear();  // nothing to fill the slice with
          d.momentum.clear();
          break;
        }
      }
      done(std::move(d));
    };
    if (complete) return build({});
    if (!replicas.empty()) return build(replicas);
    gather_replicas(self, [self, build](std::vector<float> replica) {
      auto& s2 = self->state;
      if (replica.empty() && s2.resumed_dense) replica = s2.resumed_dense->params;
      build(replica);
    });
  };
  for (std::uint32_t k = 0; k < slices; ++k) {
    ask_slice(self, k, [g, k, assemble](const wire::dense_reply* r) {
      if (r != nullptr) {
        g->params[k] = r->params;
        g->momentum[k] = r->momentum;
      }
      if (--g->pending == 0) assemble();
    });
  }
}

caf::result<body_ptr> serve_dense_request(coordinator_actor* self) {
  auto& st = self->state;
  // Before the job runs, trainers start from the snapshot resumed from, or (empty answer) from
  // the seeded initialization they all share.
  // Both with the optimizer state as last gathered (a resume's: the snapshot's), so that a
  // trainer's first updates continue the job's rather than start a fresh optimizer.
  const auto& optimizer = st.gathered_optimizer;
  if (!st.running_seen) {
    if (st.resumed_dense)
      return make_body(wire::dense_reply{st.resumed_from, st.resumed_dense->params, {}, optimizer.values, optimizer.steps});
    return make_body(wire::dense_reply{});
  }
  auto p = self->make_response_promise<body_ptr>();
  gather_central(self, [self, p](job::dense_state d) mutable {
    wire::dense_reply reply{1, std::move(d.params), {}, {}, 0};
    if (!reply.params.empty()) {
      reply.optimizer = self->state.gathered_optimizer.values;
      reply.optimizer_steps = self->state.gathered_optimizer.steps;
    }
    p.deliver(make_body(std::move(reply)));
  });
  return p;
}

// The cut, once the reader positions are in: the shards' checkpoints and the dense state, taken
// after the positions. Every example before them was trained and pushed, so the checkpoints hold
// its updates; examples acked after them may be in the checkpoints too, and are trained again on
// resume.
void take_cut(coordinator_actor* self, std::uint64_t attempt, std::vector<job::reader_commit> positions) {
  auto& st = self->state;
  auto& snap = *st.snapshot;
  const std::uint64_t snapshot_id = snap.id;
  snap.cut_taken = true;
  if (auto absent = absent_shard(st)) return abandon(self, *absent);  // left while the readers answered
  const std::size_t shards = snapshot_shards(st);
  auto& m = snap.manifest;
  m.job_id = st.job_id;
  m.snapshot_id = snapshot_id;
  m.created_unix_ms = wall_ms(st);
  m.readers = std::move(positions);
  m.read_plan = st.read_plan;
  record_trainers(st, m);
  m.shards.resize(shards);
  if (reshape_snapshot(st)) m.reshaped_from = st.reshape->from;
  if (static_cast<std::uint32_t>(st.options.job.shards) != st.shards_flag) m.shards_flag = st.shards_flag;
  const auto timeout = seconds_span(st.options.snapshot_timeout);
  wire::snapshot_request req;
  req.snapshot_id = snapshot_id;
  req.keep = ids_to_keep(st);
  snap.shards_pending = shards;
  snap.shard_members.assign(st.shard_slots.begin(), st.shard_slots.begin() + static_cast<std::ptrdiff_t>(shards));
  for (std::size_t i = 0; i < shards; ++i) {
    const std::string endpoint = st.members.at(st.shard_slots[i]).endpoint;
    call_endpoint(
        self, endpoint, make_body(req), timeout,
        [self, i, attempt](const envelope_ptr& e) {
          auto& s = self->state;
          if (!s.snapshot || s.snapshot->attempt != attempt) return;
          auto& sn = *s.snapshot;
          --sn.shards_pending;
          if (const auto* r = std::get_if<wire::snapshot_reply>(&e->message)) {
            sn.manifest.shards[i] = job::shard_checkpoint{r->snapshot_id, r->rows, r->bytes, r->checksum, r->path};
          } else if (sn.failure.empty()) {
            const auto* err = std::get_if<wire::error_reply>(&e->message);
            sn.failure = "shard " + std::to_string(i) + ": " + (err != nullptr ? err->message : wire::message_name(e->message));
          }
          complete_if_done(self);
        },
        [self, i, attempt](const std::string& why) {
          auto& s = self->state;
          if (!s.snapshot || s.snapshot->attempt != attempt) return;
          --s.snapshot->shards_pending;
          if (s.snapshot->failure.empty()) s.snapshot->failure = "shard " + std::to_string(i) + ": " + why;
          complete_if_done(self);
        });
  }
  // The trainers' optimizer states first (their replicas come along, whose average a job without
  // a central copy then uses), then the central copy.
  gather_replicas(
      self,
      [self, attempt](std::vector<float> replicas) {
        auto take = [self, attempt](job::dense_state d) {
          auto& s = self->state;
          if (!s.snapshot || s.snapshot->attempt != attempt) return;
          d.optimizer = s.gathered_optimizer.values;
          d.optimizer_steps = s.gathered_optimizer.steps;
          s.snapshot->dense = std::move(d);
          s.snapshot->dense_done = true;
          complete_if_done(self);
        };
        gather_central(self, take, std::move(replicas));
      },
      true);
}

// The readers' committed positions as they stand now, then the cut. Their last heartbeats' can be
// an interval old (a second by default), and every example trained since would be trained twice
// after a resume. A reader that does not answer within a heartbeat interval (paused, gone) keeps
// its heartbeat's, which is as fresh as an answer that late.
void ask_positions(coordinator_actor* self, std::uint64_t attempt) {
  auto& st = self->state;
  auto positions = std::make_shared<std::vector<job::reader_commit>>(st.reader_commits);
  std::vector<std::pair<std::size_t, std::string>> readers;
  for (std::size_t i = 0; i < st.reader_slots.size() && i < positions->size(); ++i) {
    auto it = st.members.find(st.reader_slots[i]);
    if (it != st.members.end() && !it->second.endpoint.empty()) readers.emplace_back(i, it->second.endpoint);
  }
  auto pending = std::make_shared<std::size_t>(readers.size());
  auto all_in = [self, attempt, positions] {
    auto& s = self->state;
    if (s.snapshot && s.snapshot->attempt == attempt) take_cut(self, attempt, std::move(*positions));
  };
  if (readers.empty()) return all_in();
  const auto timeout =
      std::min(seconds_span(st.options.job.request_timeout), seconds_span(st.options.job.heartbeat_interval));
  for (const auto& [index, endpoint] : readers) {
    call_endpoint(
        self, endpoint, make_body(wire::position_request{}), timeout,
        [positions, pending, all_in, index = index](const envelope_ptr& e) {
          if (const auto* r = std::get_if<wire::position_reply>(&e->message); r != nullptr && r->has_committed)
            (*positions)[index] = commit_of(r->committed, r->committed_examples, r->committed_bad_rows);
          if (--*pending == 0) all_in();
        },
        [pending, all_in](const std::string&) {
          if (--*pending == 0) all_in();
        });
  }
}

void begin_snapshot(coordinator_actor* self, std::optional<caf::response_promise> waiter) {
  auto& st = self->state;
  auto refuse = [&waiter](errc code, const std::string& why) {
    if (waiter) waiter->deliver(make_body(wire::error_reply{code, why}));
  };
  if (!st.options.snapshots) return refuse(errc::invalid_argument, "the coordinator has no --snapshot-dir");
  // Before the job runs, only the snapshot of a new shard count (the commit of its rows' move).
  const bool reshaping = reshape_snapshot(st);
  if (st.state != wire::job_state::running && st.state != wire::job_state::draining && !reshaping)
    return refuse(errc::unavailable, std::string("the job is ") + wire::to_string(st.state) + ", not running");
  // A live reshard takes its own snapshot (the new shape's); no other until it is done.
  if (live_reshape(st) && !reshaping)
    return refuse(errc::unavailable, "the job is changing its shard count (" + reshape_status(st) + ")");
  if (st.snapshot) {  // one at a time: join the one under way
    if (waiter) st.snapshot->waiters.push_back(*waiter);
    return;
  }
  if (auto absent = absent_shard(st)) return refuse(errc::unavailable, *absent);
  auto ids = st.options.snapshots->list();
  if (!ids.is_ok()) {
    // The store is unusable (gone, not a directory, unreadable): a failed snapshot, said loudly,
    // not a silent skip; tried again an interval later.
    st.counters.snapshots_failed.add();
    st.last_snapshot_error = "the snapshot store: " + ids.error().message();
    st.last_snapshot_at = self->clock().now();
    spdlog::warn("{}: no snapshot: {}", st.options.name, st.last_snapshot_error);
    return refuse(ids.error().code(), ids.error().message());
  }
  const std::uint64_t id = std::max(st.last_snapshot_id, ids->empty() ? 0 : ids->back()) + 1;
  st.snapshot.emplace();
  auto& snap = *st.snapshot;
  snap.id = id;
  snap.attempt = ++st.snapshot_attempts;
  snap.started = self->clock().now();
  if (waiter) snap.waiters.push_back(*waiter);
  spdlog::info("{}: snapshot {} started", st.options.name, id);
  ask_positions(self, snap.attempt);
}

void check_snapshot_members(coordinator_actor* self) {
  auto& st = self->state;
  if (!st.snapshot) return;
  const auto& members = st.snapshot->shard_members;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (i >= st.shard_slots.size() || st.shard_slots[i] != members[i])
      return abandon(self, "shard " + std::to_string(i) + " restarted or left while it was under way");
}

void snapshot_tick(coordinator_actor* self) {
  auto& st = self->state;
  if (!st.options.snapshots || st.options.snapshot_interval <= 0 || st.snapshot) return;
  if (st.state != wire::job_state::running || live_reshape(st)) return;
  if (seconds_between(st.last_snapshot_at, self->clock().now()) < st.options.snapshot_interval) return;
  begin_snapshot(self, std::nullopt);
}

}  // namespace ss::actors::coordinator_detail
