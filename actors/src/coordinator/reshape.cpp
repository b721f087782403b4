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
    case reshape_in_progress::stage_kind::joining: return "waiting for the new shards to register";
    case reshape_in_progress::stage_kind::copying: return "copying rows while the job trains";
    case reshape_in_progress::stage_kind::holding: return "holding the input until nothing is being trained";
    case reshape_in_progress::stage_kind::moving: return "moving rows";
    case reshape_in_progress::stage_kind::switching: return "switching the members to the new count";
    case reshape_in_progress::stage_kind::snapshot: return "the snapshot of the new shape";
    case reshape_in_progress::stage_kind::dropping: return "dropping the rows that moved";
  }
  return "?";
}

std::string shape(const reshape_in_progress& r) {
  return std::to_string(r.from) + " -> " + std::to_string(r.to) + " shards";
}

// What the job is doing, for messages: "resuming on 2 -> 3 shards", "resharding 2 -> 4 shards".
std::string doing(const reshape_in_progress& r) { return (r.live ? "resharding " : "resuming on ") + shape(r); }

// "shard 2", "shards 2 to 3": the indexes from `first` up to `end` (exclusive).
std::string shard_range(std::uint32_t first, std::uint32_t end) {
  if (end == first + 1) return "shard " + std::to_string(first);
  return "shards " + std::to_string(first) + " to " + std::to_string(end - 1);
}

// The vacant shard slots from `first` up to `end` (exclusive): "2, 3".
std::string vacant_shards(const coordinator_state& st, std::size_t first, std::size_t end) {
  std::string missing;
  for (std::size_t i = first; i < end; ++i)
    if (st.shard_slots[i] == 0) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
  return missing;
}

// The shards from index `count` on leave the job (said with `why`), and its slots end at `count`.
void shards_leave(coordinator_state& st, std::uint32_t count, const std::string& why) {
  for (auto it = st.members.begin(); it != st.members.end();) {
    if (it->second.role == wire::role::shard && it->second.index >= static_cast<std::int32_t>(count)) {
      spdlog::info("{}: {} left the job: {}", st.options.name, it->second.name, why);
      it = st.members.erase(it);
    } else {
      ++it;
    }
  }
  st.shard_slots.resize(count);
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
void roll_back(coordinator_actor* self, const std::string& why);
void copy_ended(coordinator_actor* self, bool copied, const std::string& why);

void stage_failed(coordinator_actor* self, const std::string& why, errc code = errc::internal) {
  auto& st = self->state;
  auto& r = *st.reshape;
  // Live and growing, before the members switched: rows moved only to the new shards, which leave,
  // and the old owners hold every row as it was when the input was held, so the job can go on as
  // it was. A refusal (a shard without storage cannot take rows) is final at once; anything else
  // after max_attempts. (Shrinking, the shards that stay may have taken rows already: as on a
  // resume, the move is asked again, and the job fails after max_attempts.)
  if (r.live && r.stage == reshape_in_progress::stage_kind::moving && r.to > r.from &&
      (code == errc::invalid_argument || code == errc::permission_denied || r.failures + 1 >= max_attempts))
    return roll_back(self, stage_name(r.stage) + std::string(" failed: ") + why);
  ++r.attempt;  // answers to this attempt no longer count
  r.asked = false;
  r.last_error = why;
  if (code == errc::unavailable && !r.unavailable_since) r.unavailable_since = self->clock().now();
  const bool waiting = code == errc::unavailable &&
                       seconds_between(*r.unavailable_since, self->clock().now()) < st.options.job.peer_wait;
  if (waiting) {
    spdlog::info("{}: {}: {}; asking again shortly", st.options.name, doing(r), why);
    r.retry_at = self->clock().now() + std::chrono::milliseconds(200);
    return;
  }
  // The copy while the job trains only saves time under the hold: without it, every row moves then.
  if (r.stage == reshape_in_progress::stage_kind::copying) return copy_ended(self, false, why);
  if (++r.failures >= max_attempts)
    return fail_job(self, doing(r) + ": " + stage_name(r.stage) + " failed " +
                              std::to_string(r.failures) + " times, the last: " + why +
                              (r.stage == reshape_in_progress::stage_kind::dropping
                                   ? std::string("; the snapshot of the new shape is written: resume again")
                               : r.live ? "; the job's state is its last snapshot, of " + std::to_string(r.from) +
                                              " shards: resume it with --shards " + std::to_string(r.from)
                                        : "; the job's state is still snapshot " + std::to_string(r.old_snapshot) +
                                              " of " + std::to_string(r.from) + " shards: resume it with --shards " +
                                              std::to_string(r.from) + ", or mend the cause and resume again"));
  spdlog::warn("{}: {}: {} failed ({}); asking again in {} s", st.options.name, doing(r),
               stage_name(r.stage), why, std::chrono::duration_cast<std::chrono::seconds>(retry_after).count());
  r.retry_at = self->clock().now() + retry_after;
}

// Every shard of the new count takes the rows it now owns, `pass` of them (a resume, or a live
// reshard under the hold: every row, or only those changed since the copy while the job trained;
// the copy itself while it trains).
void ask_to_take(coordinator_actor* self, wire::move_pass pass) {
  auto& st = self->state;
  auto& r = *st.reshape;
  const auto sources = embedding::move_sources(embedding::placement(r.from), embedding::placement(r.to));
  r.asked = true;
  r.pending = r.to;
  r.stage_members = st.shard_slots;
  r.stage_started = self->clock().now();
  r.rows_moved = r.bytes_moved = 0;
  const std::uint64_t attempt = r.attempt;
  spdlog::info("{}: {}: the shards take the rows they now own{}", st.options.name, doing(r),
               pass == wire::move_pass::copy      ? ", copied while the job trains"
               : pass == wire::move_pass::changed ? ", those changed since their copy"
                                                  : "");
  for (std::uint32_t j = 0; j < r.to; ++j) {
    wire::take_rows_request req;
    req.placement_shards = r.to;
    req.pass = pass;
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
          if (rs.stage == reshape_in_progress::stage_kind::copying) return copy_ended(self, true, "");
          rs.move_seconds = seconds_between(rs.stage_started, self->clock().now());
          spdlog::info("{}: {}: {} rows ({:.1f} MB) moved in {:.2f}s; now {}", s.options.name, doing(rs),
                       rs.rows_moved, static_cast<double>(rs.bytes_moved) / 1e6, rs.move_seconds,
                       rs.live ? "the members switch to the new count" : "the snapshot of the new shape");
          enter_stage(self, rs.live ? reshape_in_progress::stage_kind::switching
                                    : reshape_in_progress::stage_kind::snapshot);
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
    return fail_job(self, doing(r) + ": " + std::to_string(r.rows_moved) + " rows moved, but the " +
                              "shards they left dropped " + std::to_string(dropped) + "; the snapshot of the new shape "
                              "must not be trained on: move it away and resume from the one before");
  if (r.expected_rows > 0 && kept != r.expected_rows)
    return fail_job(self, doing(r) + ": the shards hold " + std::to_string(kept) +
                              " rows after the move, where snapshot " + std::to_string(r.old_snapshot) + " held " +
                              std::to_string(r.expected_rows) + ": rows were lost or doubled, or the shards did not "
                              "start from the snapshot (a change of shard count needs every shard started afresh: "
                              "stop the whole job, then resume it with the new count). The snapshot of the new shape "
                              "must not be trained on: move it away and resume from the one before");
  shards_leave(st, r.to, "its rows moved to the other shards");
  st.reshaped_from = r.from;
  st.placement_shards = 0;  // the job's --shards is the new count now
  st.counters.reshapes.add();
  st.counters.rows_moved.add(r.rows_moved + r.rows_copied);
  const double seconds = seconds_between(r.started, self->clock().now());
  const auto per_million = [](double s, std::uint64_t rows) { return rows > 0 ? s * 1e6 / static_cast<double>(rows) : 0.0; };
  const std::string copied =
      r.copied ? std::to_string(r.rows_copied) + " rows copied while training (" +
                     fmt::format("{:.2f}", per_million(r.copy_seconds, r.rows_copied)) + " s per million), then "
               : std::string();
  if (r.resumed_at_switch)
    spdlog::info("{}: resharded {} in {:.2f}s from this coordinator's start (the rows had moved before it, under the "
                 "hold), {} dropped where they were; the shards hold {} rows",
                 st.options.name, shape(r), seconds, dropped, kept);
  else
    spdlog::info("{}: {} {} in {:.2f}s: {}{} rows moved{} ({:.2f}s, {:.2f} s per million), {} dropped where they were; "
                 "the shards hold {} rows",
                 st.options.name, r.live ? "resharded" : "resumed on", shape(r), seconds, copied, r.rows_moved,
                 r.live ? " under the hold" : "", r.move_seconds, per_million(r.move_seconds, r.rows_moved), dropped,
                 kept);
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

namespace {

// How long the input may take to settle (every batch handed out trained) before a live reshard
// gives up: a trainer that died holding batches gives them back after --member-timeout.
double hold_limit_seconds(const coordinator_state& st) {
  return std::max(30.0, 2 * st.options.job.member_timeout + st.options.job.request_timeout);
}

// A live reshard that cannot go on before the rows moved: the job goes on with its old count.
void roll_back(coordinator_actor* self, const std::string& why) {
  auto& st = self->state;
  auto& r = *st.reshape;
  spdlog::warn("{}: {} rolled back: {}; the job goes on with {} shards", st.options.name, doing(r), why, r.from);
  st.counters.reshapes_refused.add();
  st.last_reshape_error = doing(r) + " rolled back: " + why;
  const std::uint32_t from = r.from;
  st.reshape.reset();
  st.hold_input = false;
  // The shards that came for the new count (their registrations are refused from now on).
  shards_leave(st, from, "the reshard it came for was rolled back");
  change_view(self);
}

// Live, joining: the shards of the new count register (those beyond the old count are started
// by the operator, or by `local`), for at most --peer-wait.
void joining_tick(coordinator_actor* self) {
  auto& st = self->state;
  auto& r = *st.reshape;
  if (stage_members_present(st, r)) {
    spdlog::info("{}: {}: every shard registered; the rows are copied while the job trains", st.options.name,
                 doing(r));
    return enter_stage(self, reshape_in_progress::stage_kind::copying);
  }
  if (seconds_between(r.started, self->clock().now()) > st.options.job.peer_wait) {
    roll_back(self, "shard(s) " + vacant_shards(st, r.from, st.shard_slots.size()) +
                        " did not register within --peer-wait " +
                        std::to_string(static_cast<long>(st.options.job.peer_wait)) + " s");
  }
}

// Every member of `role` (those with an index below `below`, for shards) has applied view
// `epoch`, and has no batch being trained (which only readers report).
bool members_applied(const coordinator_state& st, wire::role role, std::uint64_t epoch, std::size_t below) {
  for (const auto& [id, m] : st.members) {
    if (m.role != role) continue;
    if (role == wire::role::shard && m.index >= static_cast<std::int32_t>(below)) continue;
    if (m.progress.view_epoch < epoch || m.progress.batches_in_flight > 0) return false;
  }
  return true;
}

// Live, copying: the shards of the new count copy the rows they will own while the job trains
// (each source clears a row's move mark as it copies it, and a change marks it again).
void copying_tick(coordinator_actor* self) {
  auto& st = self->state;
  auto& r = *st.reshape;
  if (!r.copy_over) {
    if (!r.asked && self->clock().now() >= r.retry_at) ask_to_take(self, wire::move_pass::copy);
    return;
  }
  // Nothing else may be under way while the input is held: what is, finishes first.
  if (st.snapshot || st.publishing || st.evaluating || st.scoring != scoring_stage::none) return;
  // The readers heartbeat often once they saw the reshard (the view's reshaping), so the hold
  // reaches them within milliseconds: waited for, up to two heartbeats.
  bool fast = true;
  for (const auto& [id, m] : st.members)
    if (m.role == wire::role::reader && m.progress.view_epoch < r.request_epoch) fast = false;
  if (!fast && seconds_between(r.started, self->clock().now()) < 2 * st.options.job.heartbeat_interval) return;
  spdlog::info("{}: {}: the input is held until what was handed out is trained", st.options.name, doing(r));
  st.hold_input = true;
  change_view(self);
  r.view_epoch = st.view.epoch;
  r.stage = reshape_in_progress::stage_kind::holding;
  r.stage_started = r.hold_started = self->clock().now();
}

// The copy while the job trains ended: copied, or not (why), when every row moves under the hold.
void copy_ended(coordinator_actor* self, bool copied, const std::string& why) {
  auto& st = self->state;
  auto& r = *st.reshape;
  ++r.attempt;  // answers still on their way no longer count
  r.copy_over = true;
  r.copied = copied;
  r.copy_seconds = seconds_between(r.stage_started, self->clock().now());
  if (copied) {
    r.copied_members = r.stage_members;
    r.rows_copied = r.rows_moved;
    spdlog::info("{}: {}: {} rows ({:.1f} MB) copied in {:.2f}s while the job trained; under the hold only those "
                 "changed since move",
                 st.options.name, doing(r), r.rows_copied, static_cast<double>(r.bytes_moved) / 1e6, r.copy_seconds);
  } else {
    spdlog::warn("{}: {}: no copy while the job trains ({}); every row moves while the input is held",
                 st.options.name, doing(r), why);
  }
  r.rows_moved = r.bytes_moved = 0;
  copying_tick(self);
}

// Live, holding: readers hand out nothing; once every reader saw that and none has a batch being
// trained, nothing is looked up or pushed, and the rows move.
void holding_tick(coordinator_actor* self) {
  auto& st = self->state;
  auto& r = *st.reshape;
  for (auto id : st.reader_slots)
    if (id == 0) return;  // a reader is away: its successor registers under the hold
  if (members_applied(st, wire::role::reader, r.view_epoch, 0)) {
    spdlog::info("{}: {}: the input settled in {:.2f}s; the rows move", st.options.name, doing(r),
                 seconds_between(r.stage_started, self->clock().now()));
    return enter_stage(self, reshape_in_progress::stage_kind::moving);
  }
  if (seconds_between(r.stage_started, self->clock().now()) > hold_limit_seconds(st))
    roll_back(self, "batches handed out were still being trained " +
                        std::to_string(static_cast<long>(hold_limit_seconds(st))) + " s after the input was held");
}

// Live, switching: the view says the new count; once every shard of it and every trainer applied
// it, the input is released.
void switching_tick(coordinator_actor* self) {
  auto& st = self->state;
  auto& r = *st.reshape;
  if (st.placement_shards != r.to) {
    // Stored first: a coordinator that stops from here until the snapshot of the new shape comes
    // back with this count, not the snapshot's (the rows trained after the release are only on
    // their new owners).
    if (st.options.snapshots) {
      const job::reshard_switch sw{r.from, r.to, st.job_id, st.last_snapshot_id};
      if (auto w = st.options.snapshots->write_reshard_switch(sw); !w.is_ok()) {
        const std::string why = "the switch cannot be stored: " + w.message();
        if (r.to > r.from) return roll_back(self, why);
        return fail_job(self, doing(r) + ": " + why + " (the shards that stay took rows they do not own under " +
                                  std::to_string(r.from) + " shards); resume the job with --shards " +
                                  std::to_string(r.from) + " from its last snapshot");
      }
    }
    st.placement_shards = r.to;
    // Members that register from now on (a restart) are told the new count, and so are later
    // snapshots' job settings.
    st.options.job.shards = static_cast<int>(r.to);
    st.job_text = job::job_config_text(st.options.job);
    change_view(self);
    r.view_epoch = st.view.epoch;
    r.stage_started = self->clock().now();
    return;
  }
  // A coordinator that came back to a stored switch: each of its views says the new count, and
  // every place must be taken first (a member yet to register again may route by the old count).
  if (r.resumed_at_switch && !st.running_seen) return;
  if (r.view_epoch == 0) r.view_epoch = st.view.epoch;
  if (!members_applied(st, wire::role::shard, r.view_epoch, r.to) ||
      !members_applied(st, wire::role::trainer, r.view_epoch, 0)) {
    if (seconds_between(r.stage_started, self->clock().now()) > hold_limit_seconds(st))
      fail_job(self, doing(r) + ": members did not apply the new shard count within " +
                         std::to_string(static_cast<long>(hold_limit_seconds(st))) + " s (the rows moved; resume " +
                         "the job from its last snapshot)");
    return;
  }
  st.hold_input = false;
  spdlog::info("{}: {}: the members route by {} shards; the input is released after {:.2f}s held; now the snapshot "
               "of the new shape",
               st.options.name, doing(r), r.to, seconds_between(r.hold_started, self->clock().now()));
  change_view(self);
  r.asked = false;
  r.stage = reshape_in_progress::stage_kind::snapshot;
}

}  // namespace

bool live_reshape(const coordinator_state& st) { return st.reshape && st.reshape->live; }

// A coordinator that starts after a live reshard switched the members (a stored switch): the rows
// are on their new owners, and those trained since the release only there. The input is held and
// the members switched again (one may have missed the switch), then come the snapshot of the new
// shape and the drop, as after any switch. Nothing needs moving again: the move ended before the
// switch was stored.
void resume_switch(coordinator_actor* self, const job::reshard_switch& sw) {
  auto& st = self->state;
  reshape_in_progress r;
  r.live = true;
  r.from = sw.from;
  r.to = sw.to;
  r.old_snapshot = sw.base_snapshot;
  r.stage = reshape_in_progress::stage_kind::switching;
  r.resumed_at_switch = true;
  r.started = r.stage_started = r.hold_started = self->clock().now();
  st.shard_slots.assign(std::max(r.from, r.to), 0);
  st.hold_input = true;
  st.placement_shards = r.to;
  st.reshape.emplace(r);
  spdlog::info("{}: {}: the input is held until every member routes by {} shards", st.options.name, doing(r), r.to);
}

void reshape_heard(coordinator_actor* self) {
  const auto& st = self->state;
  if (!live_reshape(st)) return;
  const auto stage = st.reshape->stage;
  if (stage == reshape_in_progress::stage_kind::copying || stage == reshape_in_progress::stage_kind::holding ||
      stage == reshape_in_progress::stage_kind::switching)
    reshape_tick(self);
}

wire::reshard_reply request_reshard(coordinator_actor* self, std::uint32_t shards) {
  auto& st = self->state;
  const auto from = st.reshape ? st.reshape->from : static_cast<std::uint32_t>(st.shard_slots.size());
  wire::reshard_reply reply;
  reply.from = from;
  reply.to = shards;
  auto refuse = [&](const std::string& why) {
    st.counters.reshapes_refused.add();
    st.last_reshape_error = "reshard to " + std::to_string(shards) + " shards refused: " + why;
    spdlog::warn("{}: reshard to {} shards refused: {}", st.options.name, shards, why);
    reply.message = why;
    return reply;
  };
  if (st.reshape)
    return refuse("another change of the shard count is under way (" + doing(*st.reshape) + ": " +
                  stage_name(st.reshape->stage) + ")");
  if (st.state != wire::job_state::running)
    return refuse(std::string("the job is ") + wire::to_string(st.state) +
                  ": a shard count changes while it runs (or on a resume: --shards)");
  if (shards == 0 || shards > embedding::max_shards)
    return refuse("a job has 1 to " + std::to_string(embedding::max_shards) + " shards, not " +
                  std::to_string(shards));
  if (shards == from) return refuse("the job has " + std::to_string(from) + " shards already");
  reshape_in_progress r;
  r.live = true;
  r.from = from;
  r.to = shards;
  r.stage = reshape_in_progress::stage_kind::joining;
  r.started = r.stage_started = self->clock().now();
  st.reshape.emplace(r);
  st.shard_slots.resize(std::max(from, shards), 0);
  change_view(self);
  st.reshape->request_epoch = st.view.epoch;
  spdlog::info("{}: {}: {}", st.options.name, doing(r),
               shards > from ? "waiting for " + shard_range(from, shards) + " to register"
                             : "the rows of " + shard_range(shards, from) + " move to the others");
  reply.accepted = true;
  const std::string moving = "the rows are copied while the job trains, then the input is held while those changed "
                             "since move";
  reply.message = shards > from ? "start " + shard_range(from, shards) + " (shard --index K) within --peer-wait " +
                                      std::to_string(static_cast<long>(st.options.job.peer_wait)) + " s; " + moving
                                : moving + "; " + shard_range(shards, from) + " leave the job after";
  return reply;
}

bool reshape_tick(coordinator_actor* self) {
  auto& st = self->state;
  if (!st.reshape) return false;
  auto& r = *st.reshape;
  if (r.live) {
    switch (r.stage) {
      case reshape_in_progress::stage_kind::joining: return joining_tick(self), true;
      case reshape_in_progress::stage_kind::copying: return copying_tick(self), true;
      case reshape_in_progress::stage_kind::holding: return holding_tick(self), true;
      case reshape_in_progress::stage_kind::switching: return switching_tick(self), true;
      default: break;  // the stages a resume has too, below
    }
  }
  if (r.asked || self->clock().now() < r.retry_at) return true;
  if (!stage_members_present(st, r)) {
    // The shards of both counts are needed to move the rows: the job waits for them as long as for
    // a shard that went away (--peer-wait), then fails, its snapshot untouched.
    if (!r.missing_since) r.missing_since = self->clock().now();
    if (seconds_between(*r.missing_since, self->clock().now()) > st.options.job.peer_wait) {
      fail_job(self, doing(r) + ": shard(s) " + vacant_shards(st, 0, stage_shards(st, r)) +
                         " did not register within --peer-wait " +
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
      // Live, after a copy by the same shards (none restarted since: its marks are theirs), only
      // the rows changed since it move.
      ask_to_take(self, r.live && r.copied && st.shard_slots == r.copied_members ? wire::move_pass::changed
                                                                                  : wire::move_pass::whole);
      break;
    case reshape_in_progress::stage_kind::snapshot:
      if (!st.options.snapshots) {
        // A live reshard of a job without --snapshot-dir: no snapshot to commit the new shape to (a
        // restart resumes nothing), and none may hold it up: the drop follows the switch.
        spdlog::info("{}: {}: no --snapshot-dir, so no snapshot of the new shape; the shards drop the rows they "
                     "gave away",
                     st.options.name, doing(r));
        enter_stage(self, reshape_in_progress::stage_kind::dropping);
        break;
      }
      if (st.snapshot) break;  // one under way: it is this one
      r.asked = true;
      r.stage_members = st.shard_slots;
      begin_snapshot(self, std::nullopt);
      break;
    case reshape_in_progress::stage_kind::dropping:
      ask_to_drop(self);
      break;
    case reshape_in_progress::stage_kind::joining:
    case reshape_in_progress::stage_kind::copying:
    case reshape_in_progress::stage_kind::holding:
    case reshape_in_progress::stage_kind::switching:
      break;  // a live reshard's own stages, above
  }
  return true;
}

void reshape_snapshot_done(coordinator_actor* self, bool written, const std::string& why) {
  auto& st = self->state;
  if (!st.reshape || st.reshape->stage != reshape_in_progress::stage_kind::snapshot) return;
  auto& r = *st.reshape;
  if (!written) return stage_failed(self, why);
  // The commit: a restart resumes the new shape from here on (a stored switch is spent).
  st.resumed_from = st.last_snapshot_id;
  if (r.live && st.options.snapshots) {
    if (auto rm = st.options.snapshots->remove_reshard_switch(); !rm.is_ok())
      spdlog::warn("{}: {} (a restart ignores it: snapshot {} is newer)", st.options.name, rm.message(),
                   st.last_snapshot_id);
  }
  spdlog::info("{}: {}: snapshot {} holds the new shape; the shards drop the rows they gave away",
               st.options.name, doing(r), st.last_snapshot_id);
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
    spdlog::warn("{}: {}: shard {} restarted or left during {}: that stage starts over", st.options.name,
                 doing(r), i, stage_name(r.stage));
    ++r.attempt;
    r.asked = false;
    // Resuming, the snapshot needs the rows the restarted shard took again. Live, once the members
    // switched, the shards hold rows trained since: moving the old copies again would undo that
    // training, so the snapshot is only taken again (the restarted shard serves its stored rows).
    if (r.stage == reshape_in_progress::stage_kind::snapshot && !r.live)
      r.stage = reshape_in_progress::stage_kind::moving;
    return;
  }
}

}  // namespace ss::actors::coordinator_detail
