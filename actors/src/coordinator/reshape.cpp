// A job that resumes on another shard count: before it trains, the rows move to the shards that own
// them under the new placement, in three stages, each asked again (whole) when a shard restarts
// during it or it fails:
//   moving    every shard of the new count pulls, from the shards that held them, the rows it now
//             owns (take_rows_request). Nothing is dropped yet: the old owners keep every row, so
//             a stage asked again, or a coordinator that restarts, starts over from the same rows.
//   snapshot  a snapshot of the new shape (its checkpoints still hold the rows that moved away;
//             its manifest says reshaped_from): the commit. Before it, a restart resumes the old
//             snapshot and moves again; after it, the new one.
//   dropping  every shard drops the rows it gave away (drop_rows_request); those without a place
//             in the new count then leave the job. A job resumed from a snapshot that says
//             reshaped_from starts here. Only then may the job run; the shards then hold every
//             row of the old snapshot exactly once, which the kept counts must add up to.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <numeric>

#include "state.hpp"
#include "ss/core/embedding/sharding.hpp"

namespace ss::actors::coordinator_detail {
namespace {

// A stage that fails this many times in a row fails the job (the old snapshot stays the job's).
constexpr int max_attempts = 5;
constexpr auto retry_after = std::chrono::seconds(1);
// A shard's take or drop may read and write every row it holds.
constexpr auto stage_timeout = std::chrono::minutes(30);

const char* stage_name(reshape_in_progress::stage_kind s) {
  switch (s) {
    case reshape_in_progress::stage_kind::moving: return "moving rows";
    case reshape_in_progress::stage_kind::snapshot: return "the snapshot of the new shape";
    case reshape_in_progress::stage_kind::dropping: return "dropping the rows that moved";
  }
  return "?";
}

std::string shape(const reshape_in_progress& r) {
  return std::to_string(r.from) + " -> " + std::to_string(r.to) + " shards";
}

// The shard slots the stage needs, 0 to this: every shard of both counts, while dropping only
// those of the new one (a leaving shard may be gone already).
std::size_t stage_shards(const coordinator_state& st, const reshape_in_progress& r) {
  return r.stage == reshape_in_progress::stage_kind::dropping ? r.to : st.shard_slots.size();
}

// The stage's shards are all registered.
bool stage_members_present(const coordinator_state& st, const reshape_in_progress& r) {
  for (std::size_t i = 0; i < stage_shards(st, r); ++i)
    if (st.shard_slots[i] == 0) return false;
  return true;
}

// The stage before `next` is done: `next` is asked at the next tick, with its own failures and waits.
void enter_stage(coordinator_actor* self, reshape_in_progress::stage_kind next) {
  auto& r = *self->state.reshape;
  r.stage = next;
  r.asked = false;
  r.failures = 0;
  r.unavailable_since.reset();
  tick(self);
}

// The stage went wrong: asked again a second later, or, after max_attempts in a row, the job fails
// with the reason (it resumes from its last snapshot when started again). A shard that is not
// serving yet (`unavailable`: it registers before it has loaded its rows) is waited for instead,
// up to --peer-wait from the start of the reshape.
void stage_failed(coordinator_actor* self, const std::string& why, errc code = errc::internal) {
  auto& st = self->state;
  auto& r = *st.reshape;
  ++r.attempt;  // answers to this attempt no longer count
  r.asked = false;
  r.last_error = why;
  if (code == errc::unavailable && !r.unavailable_since) r.unavailable_since = self->clock().now();
  const bool waiting = code == errc::unavailable &&
                       seconds_between(*r.unavailable_since, self->clock().now()) < st.options.job.peer_wait;
  if (waiting) {
    spdlog::info("{}: resuming on {}: {}; asking again shortly", st.options.name, shape(r), why);
    r.retry_at = self->clock().now() + std::chrono::milliseconds(200);
    return;
  }
  if (++r.failures >= max_attempts)
    return fail_job(self, "resuming on " + shape(r) + ": " + stage_name(r.stage) + " failed " +
                              std::to_string(r.failures) + " times, the last: " + why +
                              (r.stage == reshape_in_progress::stage_kind::dropping
                                   ? std::string("; the snapshot of the new shape is written: resume again")
                                   : "; the job's state is still snapshot " + std::to_string(r.old_snapshot) + " of " +
                                         std::to_string(r.from) + " shards: resume it with --shards " +
                                         std::to_string(r.from) + ", or mend the cause and resume again"));
  spdlog::warn("{}: resuming on {}: {} failed ({}); asking again in {} s", st.options.name, shape(r),
               stage_name(r.stage), why, std::chrono::duration_cast<std::chrono::seconds>(retry_after).count());
  r.retry_at = self->clock().now() + retry_after;
}

void ask_to_take(coordinator_actor* self) {
  auto& st = self->state;
  auto& r = *st.reshape;
  const auto sources = embedding::move_sources(embedding::placement(r.from), embedding::placement(r.to));
  r.asked = true;
  r.pending = r.to;
  r.stage_members = st.shard_slots;
  r.stage_started = self->clock().now();
  r.rows_moved = r.bytes_moved = 0;
  const std::uint64_t attempt = r.attempt;
  spdlog::info("{}: resuming on {}: the shards take the rows they now own", st.options.name, shape(r));
  for (std::uint32_t j = 0; j < r.to; ++j) {
    wire::take_rows_request req;
    req.placement_shards = r.to;
    for (auto i : sources[j]) req.sources.push_back(st.members.at(st.shard_slots[i]).endpoint);
    call_endpoint(
        self, st.members.at(st.shard_slots[j]).endpoint, make_body(std::move(req)), stage_timeout,
        [self, j, attempt](const envelope_ptr& env) {
          auto& s = self->state;
          if (!s.reshape || s.reshape->attempt != attempt) return;
          auto& rs = *s.reshape;
          const auto* taken = std::get_if<wire::take_rows_reply>(&env->message);
          if (taken == nullptr) {
            const auto* err = std::get_if<wire::error_reply>(&env->message);
            return stage_failed(self, "shard " + std::to_string(j) + ": " +
                                          (err != nullptr ? err->message : wire::message_name(env->message)),
                                err != nullptr ? err->code : errc::internal);
          }
          rs.rows_moved += taken->rows;
          rs.bytes_moved += taken->bytes;
          if (--rs.pending > 0) return;
          rs.move_seconds = seconds_between(rs.stage_started, self->clock().now());
          spdlog::info("{}: resuming on {}: {} rows ({:.1f} MB) moved in {:.2f}s; now the snapshot of the new shape",
                       s.options.name, shape(rs), rs.rows_moved, static_cast<double>(rs.bytes_moved) / 1e6,
                       rs.move_seconds);
          enter_stage(self, reshape_in_progress::stage_kind::snapshot);
        },
        [self, j, attempt](const std::string& why) {
          auto& s = self->state;
          if (!s.reshape || s.reshape->attempt != attempt) return;
          stage_failed(self, "shard " + std::to_string(j) + ": " + why);
        });
  }
}

// The reshape is over: the shard slots shrink to the new count, the shards beyond it leave.
void complete(coordinator_actor* self) {
  auto& st = self->state;
  auto& r = *st.reshape;
  const std::uint64_t kept = std::accumulate(r.kept_by.begin(), r.kept_by.end(), std::uint64_t{0});
  const std::uint64_t dropped = std::accumulate(r.dropped_by.begin(), r.dropped_by.end(), std::uint64_t{0});
  // Every row that moved was dropped where it was, once; and the shards hold the snapshot's rows.
  if (r.expected_rows > 0 && dropped != r.rows_moved)
    return fail_job(self, "resuming on " + shape(r) + ": " + std::to_string(r.rows_moved) + " rows moved, but the " +
                              "shards they left dropped " + std::to_string(dropped) + "; the snapshot of the new shape "
                              "must not be trained on: move it away and resume from the one before");
  if (r.expected_rows > 0 && kept != r.expected_rows)
    return fail_job(self, "resuming on " + shape(r) + ": the shards hold " + std::to_string(kept) +
                              " rows after the move, where snapshot " + std::to_string(r.old_snapshot) + " held " +
                              std::to_string(r.expected_rows) + ": rows were lost or doubled, or the shards did not "
                              "start from the snapshot (a change of shard count needs every shard started afresh: "
                              "stop the whole job, then resume it with the new count). The snapshot of the new shape "
                              "must not be trained on: move it away and resume from the one before");
  for (auto it = st.members.begin(); it != st.members.end();) {
    if (it->second.role == wire::role::shard && it->second.index >= static_cast<std::int32_t>(r.to)) {
      spdlog::info("{}: {} left the job: its rows moved to the other shards", st.options.name, it->second.name);
      it = st.members.erase(it);
    } else {
      ++it;
    }
  }
  st.shard_slots.resize(r.to);
  st.reshaped_from = r.from;
  st.counters.reshapes.add();
  st.counters.rows_moved.add(r.rows_moved);
  const double seconds = seconds_between(r.started, self->clock().now());
  spdlog::info("{}: resumed on {} in {:.2f}s: {} rows moved ({:.2f} s per million), {} dropped where they were; the "
               "shards hold {} rows",
               st.options.name, shape(r), seconds, r.rows_moved,
               r.rows_moved > 0 ? r.move_seconds * 1e6 / static_cast<double>(r.rows_moved) : 0.0, dropped, kept);
  st.reshape.reset();
  change_view(self);
}

void ask_to_drop(coordinator_actor* self) {
  auto& st = self->state;
  auto& r = *st.reshape;
  r.asked = true;
  r.pending = 0;
  r.stage_members = st.shard_slots;
  r.kept_by.assign(st.shard_slots.size(), 0);
  r.dropped_by.resize(st.shard_slots.size(), 0);
  r.stage_failure.clear();
  const std::uint64_t attempt = r.attempt;
  // Every shard registered is asked, those leaving too (they drop all, then leave); the stage ends
  // once each answered, so that no leaving shard is forgotten while it still drops.
  auto answered = [self, attempt](std::uint32_t shard, bool leaving, const std::string& why, errc code) {
    auto& s = self->state;
    if (!s.reshape || s.reshape->attempt != attempt) return;
    auto& rs = *s.reshape;
    if (!why.empty()) {
      if (leaving)
        spdlog::warn("{}: shard {} (leaving the job) could not drop its rows: {}", s.options.name, shard, why);
      else if (rs.stage_failure.empty()) {
        rs.stage_failure = "shard " + std::to_string(shard) + ": " + why;
        rs.stage_failure_code = code;
      }
    }
    if (--rs.pending > 0) return;
    if (!rs.stage_failure.empty()) return stage_failed(self, rs.stage_failure, rs.stage_failure_code);
    complete(self);
  };
  for (std::uint32_t i = 0; i < st.shard_slots.size(); ++i)
    if (st.shard_slots[i] != 0) ++r.pending;
  for (std::uint32_t i = 0; i < st.shard_slots.size(); ++i) {
    if (st.shard_slots[i] == 0) continue;  // a leaving shard that is gone already
    const bool leaving = i >= r.to;
    call_endpoint(
        self, st.members.at(st.shard_slots[i]).endpoint, make_body(wire::drop_rows_request{r.to}), stage_timeout,
        [self, i, leaving, attempt, answered](const envelope_ptr& env) {
          auto& s = self->state;
          if (!s.reshape || s.reshape->attempt != attempt) return;
          auto& rs = *s.reshape;
          if (const auto* dropped = std::get_if<wire::drop_rows_reply>(&env->message)) {
            rs.dropped_by[i] = std::max(rs.dropped_by[i], dropped->dropped);
            rs.kept_by[i] = dropped->kept;
            return answered(i, leaving, "", errc::ok);
          }
          const auto* err = std::get_if<wire::error_reply>(&env->message);
          answered(i, leaving, err != nullptr ? err->message : wire::message_name(env->message),
                   err != nullptr ? err->code : errc::internal);
        },
        [i, leaving, answered](const std::string& why) { answered(i, leaving, why, errc::unavailable); });
  }
}

}  // namespace

void plan_reshape(coordinator_actor* self, const job::snapshot_manifest& m) {
  auto& st = self->state;
  const auto now_shards = static_cast<std::uint32_t>(st.options.job.shards);
  const auto snapshot_shards = static_cast<std::uint32_t>(m.shards.size());
  reshape_in_progress r;
  r.to = now_shards;
  r.old_snapshot = m.snapshot_id;
  r.started = self->clock().now();
  if (m.reshaped_from != 0) {
    // Resumed from the snapshot that committed a change of shape: its shards may still hold the
    // rows that moved away.
    r.from = m.reshaped_from;
    r.stage = reshape_in_progress::stage_kind::dropping;
  } else if (snapshot_shards != now_shards) {
    r.from = snapshot_shards;
    r.stage = reshape_in_progress::stage_kind::moving;
    for (const auto& s : m.shards) r.expected_rows += s.rows;
  } else {
    return;
  }
  if (r.stage == reshape_in_progress::stage_kind::moving)
    spdlog::info("{}: snapshot {} has {} shards, the job {}: the rows move to their new owners before training",
                 st.options.name, m.snapshot_id, r.from, r.to);
  else
    spdlog::info("{}: snapshot {} is the first of {} shards (from {}): the shards drop the rows that moved away "
                 "before training", st.options.name, m.snapshot_id, r.to, r.from);
  st.shard_slots.assign(std::max(r.from, r.to), 0);
  st.reshape.emplace(r);
}

std::uint32_t restore_shards_of(const coordinator_state& st) {
  if (!st.reshape || st.reshape->stage == reshape_in_progress::stage_kind::dropping) return 0;
  return st.reshape->from;
}

bool reshape_tick(coordinator_actor* self) {
  auto& st = self->state;
  if (!st.reshape) return false;
  auto& r = *st.reshape;
  if (r.asked || self->clock().now() < r.retry_at) return true;
  if (!stage_members_present(st, r)) {
    // The shards of both counts are needed to move the rows: the job waits for them as long as for
    // a shard that went away (--peer-wait), then fails, its snapshot untouched.
    if (!r.missing_since) r.missing_since = self->clock().now();
    if (seconds_between(*r.missing_since, self->clock().now()) > st.options.job.peer_wait) {
      std::string missing;
      for (std::size_t i = 0; i < stage_shards(st, r); ++i)
        if (st.shard_slots[i] == 0) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
      fail_job(self, "resuming on " + shape(r) + ": shard(s) " + missing + " did not register within --peer-wait " +
                         std::to_string(static_cast<long>(st.options.job.peer_wait)) + " s; moving the rows needs the "
                         "shards of both counts (0 to " + std::to_string(st.shard_slots.size() - 1) + ")" +
                         (r.stage == reshape_in_progress::stage_kind::moving
                              ? ": start them, or resume with --shards " + std::to_string(r.from) + " (snapshot " +
                                    std::to_string(r.old_snapshot) + " is untouched)"
                              : ": start them and resume again"));
    }
    return true;
  }
  r.missing_since.reset();
  switch (r.stage) {
    case reshape_in_progress::stage_kind::moving:
      ask_to_take(self);
      break;
    case reshape_in_progress::stage_kind::snapshot:
      if (st.snapshot) break;  // one under way: it is this one
      r.asked = true;
      r.stage_members = st.shard_slots;
      begin_snapshot(self, std::nullopt);
      break;
    case reshape_in_progress::stage_kind::dropping:
      ask_to_drop(self);
      break;
  }
  return true;
}

void reshape_snapshot_done(coordinator_actor* self, bool written, const std::string& why) {
  auto& st = self->state;
  if (!st.reshape || st.reshape->stage != reshape_in_progress::stage_kind::snapshot) return;
  auto& r = *st.reshape;
  if (!written) return stage_failed(self, why);
  // The commit: a restart resumes the new shape from here on.
  st.resumed_from = st.last_snapshot_id;
  spdlog::info("{}: resuming on {}: snapshot {} holds the new shape; the shards drop the rows they gave away",
               st.options.name, shape(r), st.last_snapshot_id);
  enter_stage(self, reshape_in_progress::stage_kind::dropping);
}

std::string reshape_status(const coordinator_state& st) {
  if (!st.reshape) return {};
  return shape(*st.reshape) + ": " + stage_name(st.reshape->stage);
}

void check_reshape_members(coordinator_actor* self) {
  auto& st = self->state;
  if (!st.reshape || !st.reshape->asked) return;
  auto& r = *st.reshape;
  for (std::size_t i = 0; i < stage_shards(st, r); ++i) {
    if (st.shard_slots[i] == r.stage_members[i]) continue;
    // A restarted shard restored the snapshot again: what it took, or dropped, is to be done again.
    spdlog::warn("{}: resuming on {}: shard {} restarted or left during {}: that stage starts over", st.options.name,
                 shape(r), i, stage_name(r.stage));
    ++r.attempt;
    r.asked = false;
    if (r.stage == reshape_in_progress::stage_kind::snapshot) r.stage = reshape_in_progress::stage_kind::moving;
    return;
  }
}

}  // namespace ss::actors::coordinator_detail
