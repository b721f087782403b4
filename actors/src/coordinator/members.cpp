// The coordinator's members: registration (indexes, restarts, resume positions), heartbeats,
// leaving, silent members dropped, and the cluster view they all follow.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "state.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/read_positions.hpp"
#include "ss/core/embedding/sharding.hpp"

namespace ss::actors::coordinator_detail {

void add_counters(job::trainer_counters& into, const wire::member_progress& p) {
  into.examples += p.examples;
  into.clicks += p.clicks;
  into.loss_sum += p.loss_sum;
  into.active_seconds = std::max(into.active_seconds, p.active_seconds);
}

namespace {

// Shards, readers and sync servers hold an index of the job; trainers come and go by name.
bool is_indexed(wire::role role) {
  return role == wire::role::shard || role == wire::role::reader || role == wire::role::sync;
}

// The member id at an indexed role's index; 0 = vacant.
std::uint64_t& slot_of(coordinator_state& st, wire::role role, int index) {
  auto& slots = role == wire::role::shard ? st.shard_slots : role == wire::role::reader ? st.reader_slots : st.sync_slots;
  return slots[static_cast<std::size_t>(index)];
}

// A member leaves (or is dropped): free its index and keep what it did in the job's totals.
void retire(coordinator_state& st, std::uint64_t id, const member_info& m) {
  if (m.role == wire::role::trainer) {
    add_counters(st.departed, m.progress);
    keep_departed_window(st, m);
    st.retired_trainers[m.incarnation] = {m.name, m.progress};
    st.ghosts.erase(m.incarnation);  // its own report included what the snapshot had of it
  } else if (is_indexed(m.role) && slot_of(st, m.role, m.index) == id) {
    slot_of(st, m.role, m.index) = 0;
  }
}

// A shard, reader or sync server asks for an index: refused (an error reply) when the index is not
// the job's; nullptr when it is.
body_ptr check_index(const coordinator_state& st, const wire::register_request& r) {
  const auto& job = st.options.job;
  // Shards: while a resumed job moves its rows to another count, those of both counts.
  const int count = r.from == wire::role::shard    ? static_cast<int>(st.shard_slots.size())
                    : r.from == wire::role::reader ? job.readers
                                                   : job.sync_servers;
  if (r.from == wire::role::sync && r.index == 0)
    return make_body(wire::error_reply{errc::invalid_argument, "sync server 0 is the coordinator itself; extra sync "
                                                               "servers take indexes 1.." + std::to_string(count - 1)});
  if (r.from == wire::role::shard && r.index >= count && r.index < static_cast<int>(st.reshaped_from))
    return make_body(wire::error_reply{errc::out_of_range, "shard " + std::to_string(r.index) + " is no longer in the "
                                                           "job: its rows moved to the job's " + std::to_string(count) +
                                                           " shards; it has nothing to serve (its data directory may go)"});
  if (r.from == wire::role::shard && r.index >= count && st.options.grow_shards &&
      r.index < static_cast<std::int32_t>(embedding::max_shards)) {
    // `unavailable`: the shard registers again on its next heartbeat, until the job can grow.
    const std::string why = st.reshape                                   ? "another change of its shard count is under way"
                            : st.state != wire::job_state::running ? std::string("it is ") + wire::to_string(st.state)
                                                                   : st.last_reshape_error;
    return make_body(wire::error_reply{errc::unavailable, "shard " + std::to_string(r.index) + " is beyond the job's " +
                                                              std::to_string(count) + " shards, and the job cannot "
                                                              "grow now (" + why + ", --grow-shards)"});
  }
  if (r.index < 0 || r.index >= count)
    return make_body(wire::error_reply{errc::out_of_range, std::string(wire::to_string(r.from)) + " index " +
                                                               std::to_string(r.index) + " is outside the job's 0.." +
                                                               std::to_string(count - 1)});
  if (r.endpoint.empty())
    return make_body(wire::error_reply{errc::invalid_argument, r.name + " registered without an endpoint"});
  return nullptr;
}

// --grow-shards: a shard that registers beyond the job's count while the job runs as it was makes
// it grow to include it (the shards between, if any, must register too: the reshard waits for them
// up to --peer-wait). Not an index the job gave up by shrinking: check_index refuses that one.
void grow_for(coordinator_actor* self, const wire::register_request& r) {
  auto& st = self->state;
  const auto count = static_cast<std::int32_t>(st.shard_slots.size());
  if (!st.options.grow_shards || r.from != wire::role::shard || r.index < count ||
      r.index >= static_cast<std::int32_t>(embedding::max_shards) ||
      r.index < static_cast<std::int32_t>(st.reshaped_from) || st.reshape || st.state != wire::job_state::running)
    return;
  spdlog::info("{}: {} registers beyond the job's {} shards (--grow-shards): the job grows to {}", st.options.name,
               r.name, count, r.index + 1);
  request_reshard(self, static_cast<std::uint32_t>(r.index) + 1);
}

// The member holding the place registration `r` asks for (its index, or a trainer's name), held
// by another process; members.end() when the place is free or held by this very process.
std::map<std::uint64_t, member_info>::iterator holder_of(coordinator_state& st, const wire::register_request& r) {
  if (is_indexed(r.from)) {
    auto it = st.members.find(slot_of(st, r.from, r.index));
    return it != st.members.end() && it->second.incarnation != r.incarnation ? it : st.members.end();
  }
  if (r.from != wire::role::trainer) return st.members.end();
  // A trainer's name, or its endpoint: no two live processes listen at one address, so a new one
  // there (a container restarted, under a new name of its own) means the holder is gone, or a
  // misconfiguration that is refused like a duplicate name.
  return std::find_if(st.members.begin(), st.members.end(), [&r](const auto& entry) {
    const member_info& m = entry.second;
    return m.role == wire::role::trainer && m.incarnation != r.incarnation &&
           (m.name == r.name || (!r.endpoint.empty() && m.endpoint == r.endpoint));
  });
}

std::string place_of(wire::role role, const std::string& name, std::int32_t index) {
  return is_indexed(role) ? std::string(wire::to_string(role)) + " " + std::to_string(index) : "trainer name " + name;
}

std::string place_of(const wire::register_request& r) { return place_of(r.from, r.name, r.index); }

std::string process_of(std::uint64_t incarnation, const std::string& host, std::uint32_t pid,
                       const std::string& endpoint) {
  char inc[24];
  std::snprintf(inc, sizeof inc, "%016llx", static_cast<unsigned long long>(incarnation));
  std::string out = std::string("incarnation ") + inc;
  if (pid != 0) out += ", pid " + std::to_string(pid);
  if (!host.empty()) out += " on " + host;
  if (!endpoint.empty()) out += ", " + endpoint;
  return out;
}

enum class claim_verdict { take, wait, refuse };

// Another process claims the place `holder` holds. Only the holder's own silence tells a restart
// (the holder is dead) from a duplicate (it is alive): it heartbeats every heartbeat_interval, so a
// heartbeat heard a margin after the claim began proves it alive, and none within its claim window
// (two intervals and half a second) hands the place over.
claim_verdict judge_claim(coordinator_state& st, const std::string& place, const member_info& holder,
                          const wire::register_request& r, clock_type::time_point now) {
  auto& claim = st.claims[place];
  if (claim.incarnation != r.incarnation) claim = {r.incarnation, now};
  const auto interval = holder.heartbeat_interval;
  const auto window = 2 * interval + std::chrono::milliseconds(500);
  const auto margin = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(200), interval / 2);
  claim_verdict verdict = claim_verdict::wait;
  if (now - holder.last_seen > window) verdict = claim_verdict::take;
  else if (holder.last_seen > claim.since + margin) verdict = claim_verdict::refuse;
  if (verdict != claim_verdict::wait) st.claims.erase(place);
  return verdict;
}

// A registration for a place another process holds: nullptr once the place is free for it (the
// holder was dead and is retired now), else the answer: wait (the member asks again) or refused.
body_ptr claim_place(coordinator_actor* self, const std::string& place,
                     std::map<std::uint64_t, member_info>::iterator holder, const wire::register_request& r) {
  auto& st = self->state;
  const auto now = self->clock().now();
  const auto& h = holder->second;
  const auto holder_process = process_of(h.incarnation, h.host, h.pid, h.endpoint);
  const auto claimant = process_of(r.incarnation, r.host, r.pid, r.endpoint);
  const double heard = seconds_between(h.last_seen, now);
  switch (judge_claim(st, place, h, r, now)) {
    case claim_verdict::take:
      spdlog::info("{}: {} re-registered ({} replaces {}, silent for {:.1f}s)", st.options.name, r.name, claimant,
                   holder_process, heard);
      retire(st, holder->first, h);
      st.members.erase(holder);
      return nullptr;
    case claim_verdict::refuse: {
      st.counters.claims_refused.add();
      std::string why = place + " is held by a live process (" + holder_process + ", heard " +
                        std::to_string(static_cast<int>(heard * 1000)) + " ms ago); this one (" + claimant +
                        ") may not take it: give each process a name of its own (or none), or stop the other";
      spdlog::warn("{}: refused a registration: {}", st.options.name, why);
      return make_body(wire::error_reply{errc::already_exists, std::move(why)});
    }
    case claim_verdict::wait:
      break;
  }
  return make_body(wire::error_reply{
      errc::unavailable, place + " is held by " + holder_process + ", heard " +
                             std::to_string(static_cast<int>(heard * 1000)) +
                             " ms ago: waiting to learn whether it is alive (a restart takes its place)"});
}

// A trainer joins: what the resumed snapshot had of it is in its own reports from now on, and one
// dropped for missed heartbeats that comes back reports all it did again.
void take_trainer(coordinator_state& st, const wire::register_request& r) {
  st.ghosts.erase(r.incarnation);
  forget_departed_window(st, r.incarnation);
  auto back = st.retired_trainers.find(r.incarnation);
  if (back != st.retired_trainers.end()) {
    const auto& p = back->second.progress;
    st.departed.examples -= std::min(st.departed.examples, p.examples);
    st.departed.clicks -= std::min(st.departed.clicks, p.clicks);
    st.departed.loss_sum -= p.loss_sum;
    st.retired_trainers.erase(back);
  }
}

// A reader (re)starts at the committed position the coordinator knows; every row after it is
// read again (a replay when it had been trained after the reader's last heartbeat). Since a
// resume on another reader count, its files begin where the plan says.
void add_resume_position(const coordinator_state& st, int reader, wire::register_reply& reply) {
  put_progress(job::progress_of_reader(st.options.job, st.read_plan, reader), reply);
  for (const auto& w : job::windows_of_reader(st.options.job, st.read_plan, reader))
    reply.windows_left.push_back(to_wire(w));
  if (!st.read_plan.empty())
    reply.schedule_examples = st.read_plan.examples / static_cast<std::uint64_t>(std::max(1, st.options.job.readers));
  const auto& c = st.reader_commits[static_cast<std::size_t>(reader)];
  if (!c.valid) return;
  reply.has_resume_position = true;
  reply.resume_position = to_wire(c);
  reply.resume_examples = c.examples;
  reply.resume_bad_rows = c.bad_rows;
}

// What member `id` is told when it registers: the job, the view, and what it joined into (a
// running job, a snapshot to restore, a reader's resume position).
body_ptr registration_reply(const coordinator_state& st, std::uint64_t id, const member_info& m) {
  wire::register_reply reply;
  reply.member_id = id;
  reply.job_config = st.job_text;
  reply.view = st.view;
  reply.state = st.state;
  reply.job_id = st.job_id;
  reply.job_was_running = m.joined_running;
  reply.restore_snapshot = m.restore_snapshot;
  reply.membership = m.membership;
  if (m.role == wire::role::shard && m.restore_snapshot > 0) reply.restore_shards = restore_shards_of(st);
  if (m.role == wire::role::reader) add_resume_position(st, m.index, reply);
  return make_body(std::move(reply));
}

// The registration of this very process again (same role, name and incarnation): a retry, not a
// restart. Answered as the first one was, so that it neither replaces the member nor tells it that
// the job was running when it joined (a shard told so would take its empty storage for lost rows).
body_ptr repeat_registration(coordinator_actor* self, std::uint64_t id, const member_info& m) {
  auto& st = self->state;
  spdlog::info("{}: {} registered again (a retry of incarnation {}): answered as before", st.options.name, m.name,
               m.incarnation);
  return registration_reply(st, id, m);
}

// A trainer's membership from this registration on. It keeps the one it asks for when it rejoins a
// coordinator that restarted moments ago (every member does; the readers still wait for it, and
// it finishes its batches). It gets the next one when the job went on without it: this coordinator
// dropped it for silence, or has run long enough without it that the readers may have handed its
// batches to others (they wait --member-timeout; half of that leaves room for the view to reach
// them). Then what it sent and trained under the old membership is refused and handed on.
std::uint64_t membership_for(const coordinator_state& st, const wire::register_request& r,
                             clock_type::time_point now) {
  if (r.membership == 0) return 1;
  const bool dropped_here =
      std::find(st.dropped_trainers.begin(), st.dropped_trainers.end(), r.incarnation) != st.dropped_trainers.end();
  const double age = seconds_between(st.started_at, now);
  const bool settled = age >= st.options.job.member_timeout / 2;
  return dropped_here || settled ? r.membership + 1 : r.membership;
}

}  // namespace

body_ptr on_register(coordinator_actor* self, const wire::register_request& r) {
  auto& st = self->state;
  for (const auto& [id, m] : st.members)
    if (m.role == r.from && m.name == r.name && m.incarnation == r.incarnation && m.index == r.index)
      return repeat_registration(self, id, m);
  const bool indexed = is_indexed(r.from);
  if (indexed) {
    grow_for(self, r);
    if (auto refused = check_index(st, r)) return refused;
  }
  const std::uint64_t membership =
      r.from == wire::role::trainer ? membership_for(st, r, self->clock().now()) : 0;
  // A member dropped for silence is back, or its place or endpoint has another process now.
  const auto place = place_of(r);
  for (auto it = st.dropped.begin(); it != st.dropped.end();)
    it = it->first == r.incarnation || it->second.place == place ||
                 (!r.endpoint.empty() && it->second.endpoint == r.endpoint)
             ? st.dropped.erase(it)
             : std::next(it);
  st.dropped_trainers.erase(std::remove(st.dropped_trainers.begin(), st.dropped_trainers.end(), r.incarnation),
                            st.dropped_trainers.end());
  // A place (an index, a trainer's name) held by another process: a restart takes it once the
  // holder is known dead; a second live process is refused.
  auto holder = holder_of(st, r);
  if (holder != st.members.end()) {
    const bool by_name = indexed || holder->second.name == r.name;
    if (auto answer = claim_place(self, by_name ? place : "trainer endpoint " + r.endpoint, holder, r)) return answer;
  }
  if (r.from == wire::role::trainer) take_trainer(st, r);
  // Resuming (until the job runs again): shards load the snapshot's checkpoint, sync servers
  // its state. Afterwards a restarted shard keeps its own newer rows. Decided before this
  // registration can start the job (the last member to join must resume too).
  const bool resuming = st.resumed_from > 0 && !st.running_seen;
  const bool was_running = st.running_seen;
  member_info m;
  m.role = r.from;
  m.name = r.name;
  m.index = r.index;
  m.endpoint = r.endpoint;
  m.incarnation = r.incarnation;
  if (r.heartbeat_interval_ms > 0) m.heartbeat_interval = std::chrono::milliseconds(r.heartbeat_interval_ms);
  m.host = r.host;
  m.pid = r.pid;
  m.last_seen = self->clock().now();
  // A shard that joins a live reshard starts with no rows: what it holds comes by the move.
  const bool joins_reshard = r.from == wire::role::shard && st.reshape && st.reshape->live &&
                             r.index >= static_cast<std::int32_t>(st.reshape->from);
  m.joined_running = was_running && !joins_reshard;
  m.membership = membership;
  if (r.from == wire::role::trainer && r.membership != 0 && membership != r.membership)
    spdlog::warn("{}: {} is back after the job went on without it: membership {} (its work under {} is refused and "
                 "handed to others)",
                 st.options.name, r.name, membership, r.membership);
  if (r.from == wire::role::shard && resuming) m.restore_snapshot = st.resumed_from;
  // A sync server then waits for the snapshot's state (restore_sync_server) before its first round.
  if (r.from == wire::role::sync && resuming && st.resumed_dense && !st.resumed_dense->params.empty())
    m.restore_snapshot = st.resumed_from;
  const std::uint64_t id = st.next_member_id++;
  st.members.emplace(id, m);
  if (indexed) slot_of(st, r.from, r.index) = id;
  change_view(self);
  spdlog::info("{}: {} joined ({}{})", st.options.name, r.name, wire::to_string(r.from),
               r.endpoint.empty() ? "" : " at " + r.endpoint);
  tick(self);
  if (r.from == wire::role::sync && resuming) restore_sync_server(self, static_cast<std::uint32_t>(r.index), r.endpoint);
  return registration_reply(st, id, m);
}

body_ptr on_heartbeat(coordinator_actor* self, const wire::heartbeat& hb) {
  auto& st = self->state;
  wire::heartbeat_reply reply;
  auto it = st.members.find(hb.member_id);
  if (it == st.members.end()) {
    reply.known = false;
  } else {
    it->second.last_seen = self->clock().now();
    it->second.progress = hb.progress;
    take_window(self, it->second, it->second.progress);
    const auto& m = it->second;
    if (m.role == wire::role::reader && hb.progress.has_committed &&
        st.reader_slots[static_cast<std::size_t>(m.index)] == hb.member_id) {
      st.reader_commits[static_cast<std::size_t>(m.index)] =
          commit_of(hb.progress.committed, hb.progress.committed_examples, hb.progress.committed_bad_rows);
    }
    reshape_heard(self);
  }
  reply.state = st.state;
  reply.view = st.view;
  return make_body(std::move(reply));
}

void close_input(coordinator_actor* self, const std::string& why) {
  auto& st = self->state;
  if (!st.options.job.follow.enabled || st.view.input_closed) return;
  if (st.state == wire::job_state::done || st.state == wire::job_state::failed) return;
  spdlog::info("{}: following ends ({}): the readers hand out no new batches; the job ends once those handed out "
               "are trained",
               st.options.name, why);
  st.input_closed_why = why;
  st.view.input_closed = true;
  change_view(self);
}

void follow_tick(coordinator_actor* self, clock_type::time_point now) {
  auto& st = self->state;
  const double limit = st.options.job.follow.for_seconds;
  if (st.state != wire::job_state::running || limit <= 0 || seconds_between(st.running_at, now) < limit) return;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", limit);
  close_input(self, std::string("--follow-for ") + seconds + " s passed");
}

void change_view(coordinator_actor* self) {
  auto& st = self->state;
  ++st.view.epoch;
  st.view.coordinator = st.options.incarnation;
  st.view.shards.assign(st.shard_slots.size(), "");
  st.view.readers.assign(st.reader_slots.size(), "");
  st.view.reader_incarnations.assign(st.reader_slots.size(), 0);
  st.view.shard_incarnations.assign(st.shard_slots.size(), 0);
  st.view.syncs.assign(st.sync_slots.size(), "");
  st.view.sync_incarnations.assign(st.sync_slots.size(), 0);
  if (!st.view.syncs.empty()) {
    st.view.syncs[0] = st.options.endpoint;
    st.view.sync_incarnations[0] = st.options.incarnation;
  }
  st.view.trainers.clear();
  st.view.trainer_incarnations.clear();
  st.view.trainer_memberships.clear();
  st.view.dropped_trainers = st.dropped_trainers;
  st.view.hold_input = st.hold_input;
  st.view.placement_shards = st.placement_shards;
  st.view.reshaping = live_reshape(st);
  for (const auto& [id, m] : st.members) {
    if (m.role == wire::role::shard) {
      st.view.shards[m.index] = m.endpoint;
      st.view.shard_incarnations[m.index] = m.incarnation;
    }
    if (m.role == wire::role::reader) {
      st.view.readers[m.index] = m.endpoint;
      st.view.reader_incarnations[m.index] = m.incarnation;
    }
    if (m.role == wire::role::sync) {
      st.view.syncs[m.index] = m.endpoint;
      st.view.sync_incarnations[m.index] = m.incarnation;
    }
    if (m.role == wire::role::trainer) {
      st.view.trainers.push_back(m.name);
      st.view.trainer_incarnations.push_back(m.incarnation);
      st.view.trainer_memberships.push_back(m.membership);
    }
  }
  if (st.options.local_sync) self->send(st.options.local_sync, view_atom::value, st.view);
  // The reshape first: a shard restarted during the snapshot of a new shard count lost the rows it
  // took, so the move starts over (the snapshot is then abandoned, which the reshape ignores).
  check_reshape_members(self);
  check_snapshot_members(self);
}

// Ticks come every 250 ms at most: a gap much longer than that means this process did not run
// (SIGSTOP, a frozen VM, starvation), and the members' heartbeats could not be heard meanwhile,
// so that time does not count against them (their heartbeats are waiting in the mailbox).
void drop_silent_members(coordinator_actor* self, clock_type::time_point now) {
  auto& st = self->state;
  const auto timeout = std::chrono::duration<double>(st.options.job.member_timeout);
  if (st.last_tick && now - *st.last_tick > std::chrono::seconds(1)) {
    const auto gap = now - *st.last_tick;
    spdlog::warn("{}: did not run for {:.1f}s (paused or starved): that time does not count against the members' "
                 "heartbeats",
                 st.options.name, std::chrono::duration<double>(gap).count());
    for (auto& [id, m] : st.members) m.last_seen = std::min(now, m.last_seen + gap);
    for (auto& [slot, since] : st.vacant_since) since = std::min(now, since + gap);
  }
  st.last_tick = now;
  bool changed = false;
  for (auto it = st.members.begin(); it != st.members.end();) {
    if (now - it->second.last_seen > timeout) {
      spdlog::warn("{}: {} missed heartbeats for {:.1f}s: dropped from the job", st.options.name, it->second.name,
                   st.options.job.member_timeout);
      st.dropped[it->second.incarnation] = {place_of(it->second.role, it->second.name, it->second.index),
                                            it->second.endpoint};
      if (it->second.role == wire::role::trainer) {
        st.dropped_trainers.push_back(it->second.incarnation);
        if (st.dropped_trainers.size() > 64) st.dropped_trainers.erase(st.dropped_trainers.begin());
      }
      retire(st, it->first, it->second);
      it = st.members.erase(it);
      changed = true;
    } else {
      ++it;
    }
  }
  if (changed) change_view(self);
}

bool every_slot_taken(const coordinator_state& st) {
  bool all = true;
  for (auto id : st.shard_slots) all = all && id != 0;
  for (auto id : st.reader_slots) all = all && id != 0;
  for (std::size_t k = 1; k < st.sync_slots.size(); ++k) all = all && st.sync_slots[k] != 0;
  return all;
}

std::string vacant_too_long(coordinator_state& st, clock_type::time_point now) {
  if (!st.running_seen) return {};  // before the start, members may take their time to come
  const auto bound = std::chrono::duration<double>(st.options.job.peer_wait);
  std::string gone;
  auto check = [&](const std::string& slot, std::uint64_t id) {
    if (id != 0) {
      st.vacant_since.erase(slot);
      return;
    }
    const auto since = st.vacant_since.emplace(slot, now).first->second;
    if (gone.empty() && now - since > bound)
      gone = slot + " has been away for " + std::to_string(static_cast<long>(seconds_between(since, now))) +
             " s, longer than --peer-wait " + std::to_string(static_cast<long>(st.options.job.peer_wait)) +
             " s: the job cannot go on without it (is it crash-looping? see its log)";
  };
  // A live reshard's new shards are waited for by the reshard itself, which rolls back without them.
  const bool joining = st.reshape && st.reshape->live && st.reshape->stage == reshape_in_progress::stage_kind::joining;
  for (std::size_t i = 0; i < st.shard_slots.size(); ++i)
    if (!joining || i < st.reshape->from) check("shard " + std::to_string(i), st.shard_slots[i]);
  for (std::size_t i = 0; i < st.reader_slots.size(); ++i) check("reader " + std::to_string(i), st.reader_slots[i]);
  for (std::size_t k = 1; k < st.sync_slots.size(); ++k) check("sync server " + std::to_string(k), st.sync_slots[k]);
  return gone;
}

body_ptr on_leave(coordinator_actor* self, const wire::leave& l) {
  auto& st = self->state;
  auto it = st.members.find(l.member_id);
  if (it != st.members.end()) {
    spdlog::info("{}: {} left: {}", st.options.name, it->second.name, l.reason);
    retire(st, it->first, it->second);
    st.members.erase(it);
    change_view(self);
  }
  return make_body(wire::ack{});
}

body_ptr on_dense_report(coordinator_actor* self, const wire::dense_report& rep) {
  auto& st = self->state;
  st.replicas[rep.trainer] = {rep.params, rep.examples};
  for (auto& [id, mi] : st.members)
    if (mi.role == wire::role::trainer && mi.incarnation == rep.trainer) mi.reported_replica = true;
  return make_body(wire::ack{});
}

}  // namespace ss::actors::coordinator_detail
