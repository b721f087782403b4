// The coordinator between epochs, when the job scores --validation: readers hand out one epoch
// at a time (the view's epochs_open) and wait; once every reader has handed out and seen trained
// every batch of the epoch, the model is scored on the validation files. The best epoch so far
// (lowest validation log loss) is also scored on the test files and written to --export, so its
// model need not be kept; then the next epoch opens, or, after --early-stop-patience epochs
// without a better one, the job ends (the view's epochs_stop). The last epoch's model is scored
// in the job's final path, after the last snapshot. Before an epoch's model is gathered, the
// trainers fold their last progress into it by a closing round (close_epoch).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "state.hpp"
#include "ss/core/sync/sync_algorithms.hpp"
#include "ss/core/train/dense_model.hpp"

namespace ss::actors::coordinator_detail {
namespace {

// The epochs every reader in a slot has finished (handed out, every batch trained); the largest
// value when no slot is filled or no reader has files.
std::uint32_t epochs_every_reader_did(const coordinator_state& st) {
  std::uint32_t done = std::numeric_limits<std::uint32_t>::max();
  for (auto id : st.reader_slots)
    if (auto it = st.members.find(id); it != st.members.end()) done = std::min(done, it->second.progress.epochs_done);
  return done;
}

bool from_sync_servers(const coordinator_state& st) {
  auto spec = sync::parse_sync(st.options.job.sync);
  return spec.is_ok() && (spec->algo == sync::algorithm::easgd || spec->algo == sync::algorithm::bmuf);
}

// The model after an epoch, as the job's final model is built: EASGD and BMUF, the central copy;
// MA and none, the trainers' replicas averaged by the examples each trained. Empty when no
// trainer answered.
void gather_epoch_model(coordinator_actor* self, std::function<void(std::vector<float>)> done) {
  auto& st = self->state;
  if (from_sync_servers(st)) {
    gather_central(self, [done](job::dense_state d) { done(std::move(d.params)); });
    return;
  }
  gather_replicas(self, std::move(done));
}

// Before an epoch's model is taken, every live trainer runs a closing round (docs/sync.md): the
// progress each made since its last sync is then in the model scored. Bounded: a trainer that
// does not answer within its closing deadline (two round trips with the round timeout) plus a
// request timeout is not waited for.
void close_epoch(coordinator_actor* self, std::uint32_t epoch, std::function<void()> then) {
  auto& st = self->state;
  auto spec = sync::parse_sync(st.options.job.sync);
  std::vector<std::string> trainers;
  for (const auto& [id, m] : st.members)
    if (m.role == wire::role::trainer && !m.endpoint.empty()) trainers.push_back(m.endpoint);
  if (!spec.is_ok() || spec->algo == sync::algorithm::none || trainers.empty()) return then();
  const auto& job = st.options.job;
  const auto timeout = std::chrono::duration<double>(3 * job.request_timeout + 2 * job.sync_round_timeout);
  auto pending = std::make_shared<std::size_t>(trainers.size());
  auto one_done = [pending, then] {
    if (--*pending == 0) then();
  };
  for (const auto& endpoint : trainers)
    call_endpoint(self, endpoint, make_body(wire::sync_close{epoch}),
                  std::chrono::duration_cast<caf::timespan>(timeout),
                  [one_done](const envelope_ptr&) { one_done(); }, [one_done](const std::string&) { one_done(); });
}

void start_validation(coordinator_actor* self) {
  auto& st = self->state;
  st.scoring = scoring_stage::validation;
  if (score_model(self, st.scored_model, st.options.job.passes.validation, "validation data"))
    spdlog::info("{}: epoch {} of {} trained; scoring the validation data", st.options.name, st.scoring_epoch,
                 st.options.job.passes.epochs);
}

// The epoch is scored (and its model exported when it is the best): open the next one or stop.
void next_epoch(coordinator_actor* self) {
  auto& st = self->state;
  st.scoring = scoring_stage::none;
  const int patience = st.options.job.passes.early_stop_patience;
  if (patience > 0 && st.since_best >= patience) {
    st.stopped_early = true;
    st.view.epochs_stop = static_cast<std::uint32_t>(st.scoring_epoch);
    spdlog::info("{}: early stop after epoch {}: no better validation log loss for {} epoch{} (best: epoch {})",
                 st.options.name, st.scoring_epoch, st.since_best, st.since_best == 1 ? "" : "s", st.best_epoch);
  } else {
    st.view.epochs_open = static_cast<std::uint32_t>(st.scoring_epoch + 1);
  }
  change_view(self);
}

// Scoring is complete (validation, and the test when the epoch was the best).
void epoch_scored(coordinator_actor* self) {
  auto& st = self->state;
  if (st.scoring_final) {
    st.scoring = scoring_stage::none;
    // --export gets the final model only when it is the best; an earlier best epoch's is there.
    if (st.best_epoch != st.scoring_epoch) st.export_stage = 2;
    finish(self, st.best_test ? &*st.best_test : nullptr, st.best_test_bad_rows);
    return;
  }
  if (st.best_epoch == st.scoring_epoch && !st.options.export_path.empty()) {
    const totals t = sum_up(st);
    st.exporting_epoch = true;
    start_export(self, st.scored_model, click_rate_of(t), t.examples);
    return;
  }
  next_epoch(self);
}

}  // namespace

bool validates(const coordinator_state& st) { return !st.options.job.passes.validation.empty(); }

namespace {

// --eval-every: once the job has trained the next multiple of it, the model as it is now (the
// trainers go on) is scored on the validation files.
void evaluation_tick(coordinator_actor* self, const totals& t) {
  auto& st = self->state;
  const std::uint64_t every = st.options.job.passes.eval_every;
  if (every == 0 || t.examples < std::max(st.next_evaluation_at, every)) return;
  st.next_evaluation_at = (t.examples / every + 1) * every;
  st.scoring = scoring_stage::periodic;
  st.evaluation_examples = t.examples;
  gather_epoch_model(self, [self](std::vector<float> dense) {
    auto& s = self->state;
    if (s.state != wire::job_state::running || dense.empty() ||
        train::non_finite_count(dense.data(), dense.size()) > 0) {
      s.scoring = scoring_stage::none;  // skipped; the job's own checks catch a diverged model
      return;
    }
    score_model(self, dense, s.options.job.passes.validation, "validation data");
  });
}

}  // namespace

namespace {

// The epoch's model is gathered: check it and score it on the validation files.
void validate_epoch_model(coordinator_actor* self, std::vector<float> dense) {
  auto& s = self->state;
  if (s.state != wire::job_state::running) return;
  if (dense.empty()) {  // no trainer answered (all restarting): try again on a later tick
    s.scoring = scoring_stage::none;
    return;
  }
  if (const std::size_t bad = train::non_finite_count(dense.data(), dense.size()); bad > 0)
    return fail_job(self, "training diverged in epoch " + std::to_string(s.scoring_epoch) + ": " +
                              std::to_string(bad) + " of " + std::to_string(dense.size()) +
                              " dense parameters are NaN or infinite; lower --learning-rate or "
                              "--embedding-learning-rate");
  s.scored_model = std::move(dense);
  start_validation(self);
}

}  // namespace

void epochs_tick(coordinator_actor* self, const totals& t) {
  auto& st = self->state;
  if (!validates(st) || st.scoring != scoring_stage::none || st.exporting_epoch) return;
  if (live_reshape(st)) return;  // scoring reads every shard: after the shard count changed
  if (st.view.epochs_stop > 0) return;
  for (auto id : st.reader_slots)
    if (id == 0 || st.members.count(id) == 0) return;  // a reader is away: wait for it
  const std::uint32_t done = epochs_every_reader_did(st);
  const auto epochs = static_cast<std::uint32_t>(st.options.job.passes.epochs);
  // The last epoch is scored in the final path. A coordinator that restarted between epochs
  // learns where the readers are from them (it forgot earlier epochs' scores).
  if (done < std::max<std::uint32_t>(st.view.epochs_open, 1) || done >= epochs) return evaluation_tick(self, t);
  if (done > st.view.epochs_open) st.view.epochs_open = done;
  st.scoring = scoring_stage::validation;  // taken: gathering the model
  st.scoring_epoch = static_cast<int>(done);
  st.scoring_final = false;
  close_epoch(self, done, [self] {
    gather_epoch_model(self, [self](std::vector<float> dense) { validate_epoch_model(self, std::move(dense)); });
  });
}

void finish_validated(coordinator_actor* self) {
  auto& st = self->state;
  const int last = st.view.epochs_stop > 0 ? static_cast<int>(st.view.epochs_stop) : st.options.job.passes.epochs;
  st.scoring_epoch = last;
  st.scoring_final = true;
  st.scored_model = st.central;
  // An early stop: the model did not change since its epoch was scored.
  if (!st.epoch_scores.empty() && st.epoch_scores.back().epoch == last) return epoch_scored(self);
  start_validation(self);
}

void on_scored(coordinator_actor* self, const metrics::summary& m, std::uint64_t bad_rows) {
  auto& st = self->state;
  if (st.state == wire::job_state::failed || st.state == wire::job_state::done) return;
  const scoring_stage stage = st.scoring;
  if (stage == scoring_stage::periodic) {
    st.scoring = scoring_stage::none;
    st.validation_bad_rows = bad_rows;
    // The epoch under way: one past the epochs every reader has finished.
    const std::uint32_t done = epochs_every_reader_did(st);
    const int epoch = done == std::numeric_limits<std::uint32_t>::max() ? 1 : static_cast<int>(done) + 1;
    st.evaluations.push_back({epoch, st.evaluation_examples, m});
    spdlog::info("{}: epoch {}, {} examples: validation log loss {:.5f} NE {:.5f} AUC {:.5f}", st.options.name,
                 epoch, st.evaluation_examples, m.log_loss, m.ne, m.auc);
    return;
  }
  if (!validates(st)) {  // the test of the final model
    st.scoring = scoring_stage::none;
    return finish(self, &m, bad_rows);
  }
  if (stage == scoring_stage::test) {
    st.best_test = m;
    st.best_test_bad_rows = bad_rows;
    return epoch_scored(self);
  }
  if (stage != scoring_stage::validation) return;
  st.validation_bad_rows = bad_rows;  // the same files every epoch: their bad rows count once
  st.epoch_scores.push_back({st.scoring_epoch, m});
  const bool better = st.best_epoch == 0 || m.log_loss < st.best_loss;
  if (better) {
    st.best_epoch = st.scoring_epoch;
    st.best_loss = m.log_loss;
    st.since_best = 0;
    st.best_test.reset();
  } else {
    ++st.since_best;
  }
  spdlog::info("{}: epoch {}/{}: validation log loss {:.5f} NE {:.5f} AUC {:.5f}{}", st.options.name,
               st.scoring_epoch, st.options.job.passes.epochs, m.log_loss, m.ne, m.auc,
               better ? " (best so far)" : "");
  if (better && !st.options.job.test.empty()) {
    st.scoring = scoring_stage::test;
    score_model(self, st.scored_model, st.options.job.test, "test data");
    return;
  }
  epoch_scored(self);
}

void on_epoch_exported(coordinator_actor* self, const body_ptr& reply) {
  auto& st = self->state;
  st.exporting_epoch = false;
  if (const auto* r = std::get_if<wire::export_reply>(reply.get())) {
    st.exported = *r;
    st.export_error.clear();
    st.best_exported = true;
    spdlog::info("{}: wrote the model of epoch {} to {}", st.options.name, st.scoring_epoch, r->path);
  } else {
    const auto* e = std::get_if<wire::error_reply>(reply.get());
    st.export_error = e != nullptr ? e->message : "the exporter reported nothing";
    return fail_job(self, "the model of epoch " + std::to_string(st.scoring_epoch) + " was not written: " +
                              st.export_error);
  }
  if (st.state == wire::job_state::running) next_epoch(self);
}

}  // namespace ss::actors::coordinator_detail
