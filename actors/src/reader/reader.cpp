#include "ss/actors/reader.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <limits>

#include "state.hpp"
#include "ss/actors/actors.hpp"
#include "ss/actors/gateway.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/read_positions.hpp"
#include "ss/actors/status_metrics.hpp"
#include "ss/core/json.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace ss::actors::reader_detail {

void update_progress(reader_state& st) {
  auto& c = *st.counters;
  if (st.follow) {
    follow_progress(st);
  } else if (st.reader) {
    // Bytes over all epochs; rows of the current one; bad rows of the first (later ones re-read them).
    const auto& files = st.reader->current();
    const std::uint64_t in_epoch = st.reader->epoch_over() ? st.reader->epoch_bytes() : files.bytes_consumed();
    c.bytes_done.store(st.reader->epoch() * st.reader->epoch_bytes() + in_epoch, std::memory_order_relaxed);
    c.rows_read.store(files.counters().rows_read, std::memory_order_relaxed);
    c.bad_rows.store(st.options.resume_bad_rows + st.reader->first_epoch_bad_rows(), std::memory_order_relaxed);
    c.epoch.store(st.reader->epoch(), std::memory_order_relaxed);
    c.epochs_done.store(st.reader->epoch() + (st.reader->epoch_over() && st.unacked == 0 ? 1 : 0),
                        std::memory_order_relaxed);
  } else {
    c.epochs_done.store(std::numeric_limits<std::uint32_t>::max(), std::memory_order_relaxed);  // nothing to read
  }
  c.finished.store(c.exhausted.load() && st.unacked == 0, std::memory_order_relaxed);
  // Batches some trainer is training: while the input is held for a live reshard, those queued
  // again (their trainer went away) wait here, and the reshard need not wait for them (counted
  // only then: the walk is over every batch not yet committed).
  std::uint64_t training = st.unacked;
  if (st.hold_input) {
    training = 0;
    for (const auto& [seq, h] : st.in_flight) training += !h.acked && !h.queued ? 1 : 0;
  }
  c.batches_in_flight.store(static_cast<std::uint32_t>(training), std::memory_order_relaxed);
}

void report_bad_rows(reader_state& st, const std::vector<std::string>& reports) {
  if (reports.empty()) return;
  std::lock_guard<std::mutex> lock(st.counters->mu);
  std::string joined;
  for (const auto& r : reports) joined += r + "\n";
  if (joined == st.counters->bad_row_reports) return;
  for (std::size_t i = std::count(st.counters->bad_row_reports.begin(), st.counters->bad_row_reports.end(), '\n');
       i < reports.size(); ++i)
    spdlog::warn("{}: bad row {}", st.options.name, reports[i]);
  st.counters->bad_row_reports = joined;
}

namespace {

// Hands batch `sequence` (new or requeued) to the trainer of `pull`.
body_ptr hand(reader_self self, std::uint64_t sequence, const wire::pull_request& pull) {
  auto& h = self->state.in_flight.at(sequence);
  h.holder = pull.trainer;
  h.pull = pull.pull;
  h.queued = false;
  h.handed_at = self->clock().now();
  return std::make_shared<const wire::body>(*h.message);
}

// Puts a handed-out batch back in line for the next trainer that asks.
void requeue(reader_state& st, std::uint64_t sequence, reader_state::handed_out& h) {
  h.queued = true;
  st.requeue.push_back(sequence);
  st.counters->batches_requeued.fetch_add(1, std::memory_order_relaxed);
  st.counters->examples_requeued.fetch_add(h.message->batch.size(), std::memory_order_relaxed);
}

}  // namespace

// The input failed (an unreadable or changed file, too many bad rows): every later pull gets the
// error, and the membership agent reports it to the coordinator, which fails the job with it.
body_ptr reading_failed(reader_state& st, status why) {
  st.failure = std::move(why);
  spdlog::error("{}: reading stopped: {}", st.options.name, st.failure.message());
  {
    std::lock_guard<std::mutex> lock(st.counters->mu);
    st.counters->error = st.failure.message();
  }
  update_progress(st);
  return make_body(wire::error_reply{st.failure.code(), st.failure.message()});
}

namespace {

// The trainer gave up waiting for the answers to some of its pulls (this reader was paused, or
// the link was down): the batches handed out for them never reached it and go to the next pull.
void requeue_abandoned(reader_self self, const wire::pull_request& pull) {
  auto& st = self->state;
  if (pull.abandoned.empty()) return;
  constexpr std::size_t most = 1024;  // a trainer names at most its recent ones
  const std::set<std::uint64_t> given_up(pull.abandoned.begin(),
                                         pull.abandoned.begin() + std::min(most, pull.abandoned.size()));
  std::uint64_t lost = 0;
  for (auto& [seq, h] : st.in_flight) {
    if (h.acked || h.queued || h.holder != pull.trainer || h.pull == 0 || given_up.count(h.pull) == 0) continue;
    requeue(st, seq, h);
    ++lost;
  }
  if (lost > 0)
    spdlog::warn("{}: trainer {:x} gave up waiting for {} batch(es) handed to it (the answers came too late); they go "
                 "to the next pull",
                 st.options.name, pull.trainer, lost);
}

// The next batch of the files, epoch after epoch.
body_ptr serve_files_pull(reader_self self, const wire::pull_request& pull) {
  auto& st = self->state;
  auto m = std::make_shared<wire::batch_message>();
  auto more = st.reader->next(m->batch);
  if (st.reader->epoch() == 0) report_bad_rows(st, st.reader->current().bad_row_reports());  // later epochs re-read them
  if (!more.is_ok()) return reading_failed(st, more.error());
  if (!*more) {
    const std::uint32_t done = st.reader->epoch() + 1;  // epochs handed out
    const bool stopped = st.epochs_stop > 0 && done >= st.epochs_stop;
    if (done < st.reader->epochs() && !stopped && st.options.epoch_barrier && done >= st.epochs_open) {
      // Validation between epochs: the next one waits until the coordinator has scored this one.
      update_progress(st);
      return make_body(wire::error_reply{errc::unavailable, st.options.name + ": epoch " + std::to_string(done) +
                                                                " is over; the next begins once it is scored"});
    }
    auto next_epoch = stopped ? result<bool>(false) : st.reader->next_epoch();
    if (next_epoch.is_ok() && *next_epoch) {
      spdlog::info("{}: epoch {} of {} handed out; epoch {} begins", st.options.name, st.reader->epoch(),
                   st.reader->epochs(), st.reader->epoch() + 1);
      update_progress(st);
      return serve_files_pull(self, pull);
    }
    if (!next_epoch.is_ok())
      return reading_failed(st, next_epoch.error().with_context("epoch " + std::to_string(st.reader->epoch() + 2)));
    st.counters->exhausted.store(true);
    update_progress(st);
    spdlog::info("{}: all {} batches handed out", st.options.name, st.next_sequence);
    return serve_pull(self, pull);
  }
  m->end = to_wire(st.reader->position());
  return hand_new(self, std::move(m), st.options.resume_examples + st.reader->examples(),
                  st.options.resume_bad_rows + st.reader->first_epoch_bad_rows(), pull);
}

}  // namespace

body_ptr hand_new(reader_self self, std::shared_ptr<wire::batch_message> m, std::uint64_t examples_through,
                  std::uint64_t bad_through, const wire::pull_request& pull) {
  auto& st = self->state;
  m->reader_index = st.options.index;
  m->incarnation = st.options.incarnation;
  m->sequence = st.next_sequence++;
  const std::uint64_t n = m->batch.size();
  reader_state::handed_out h;
  h.examples_through = examples_through;
  m->examples_before = st.options.schedule_examples + h.examples_through - n;
  h.bad_through = bad_through;
  h.message = std::move(m);
  const std::uint64_t seq = h.message->sequence;
  st.in_flight.emplace(seq, std::move(h));
  ++st.unacked;
  st.counters->batches_sent.fetch_add(1, std::memory_order_relaxed);
  st.counters->examples_sent.fetch_add(n, std::memory_order_relaxed);
  update_progress(st);
  return hand(self, seq, pull);
}

body_ptr serve_pull(reader_self self, const wire::pull_request& pull) {
  auto& st = self->state;
  if (!st.failure.is_ok()) return make_body(wire::error_reply{st.failure.code(), st.failure.message()});
  if (st.hold_input) {
    // The batches a trainer gave up on stay queued: handed out now, they would be trained under
    // the shard count that is being changed.
    return make_body(wire::error_reply{errc::unavailable, st.options.name + ": held while the job changes its shard "
                                                                             "count; batches resume once the rows moved"});
  }
  requeue_abandoned(self, pull);
  // Batches whose trainer is gone come first: they are the oldest.
  while (!st.requeue.empty()) {
    const std::uint64_t seq = st.requeue.front();
    st.requeue.pop_front();
    auto it = st.in_flight.find(seq);
    if (it == st.in_flight.end() || it->second.acked || !it->second.queued) continue;  // acked meanwhile
    return hand(self, seq, pull);
  }
  if (st.counters->exhausted.load()) {
    if (st.unacked == 0) return make_body(wire::end_of_data{st.options.index, st.next_sequence});
    // Everything is handed out but not all trained: a batch may still come back (its trainer
    // dies). The trainer asks again shortly.
    return make_body(wire::error_reply{errc::unavailable, st.options.name + ": every batch is handed out; " +
                                                              std::to_string(st.unacked) + " not yet trained"});
  }
  return st.follow ? serve_follow_pull(self, pull) : serve_files_pull(self, pull);
}

namespace {

// A trainer trains its batches in about the order it got them. One it was handed before a batch
// it has acked, and still holds `lost_after` after it was handed out, never reached it: the answer
// to its pull came after it had given up the call (this reader was paused or slow). Nobody will
// ack that batch; it goes to the next trainer that asks (a replay in the rare case it was only slow).
void requeue_overtaken(reader_self self, std::uint64_t holder, clock_type::time_point acked_batch_handed_at) {
  auto& st = self->state;
  const auto now = self->clock().now();
  std::uint64_t lost = 0;
  for (auto& [seq, h] : st.in_flight) {
    if (h.acked || h.queued || h.holder != holder || h.handed_at >= acked_batch_handed_at) continue;
    if (now - h.handed_at < st.options.lost_after) continue;
    requeue(st, seq, h);
    ++lost;
  }
  if (lost > 0)
    spdlog::warn("{}: trainer {:x} never got {} batch(es) handed to it (their answer came too late); they go to the "
                 "next trainer", st.options.name, holder, lost);
}

body_ptr serve_ack(reader_self self, const wire::batch_ack& ack) {
  auto& st = self->state;
  if (ack.incarnation != st.options.incarnation)
    return make_body(wire::error_reply{errc::not_found, st.options.name + " restarted: batch " +
                                                            std::to_string(ack.sequence) +
                                                            " belongs to an earlier incarnation (it will be replayed)"});
  auto it = st.in_flight.find(ack.sequence);
  if (it == st.in_flight.end() || it->second.acked) {
    // A duplicate or unknown ack must not count twice.
    return make_body(wire::error_reply{errc::not_found, st.options.name + " has no batch " +
                                                            std::to_string(ack.sequence) + " in flight"});
  }
  if (ack.trainer != 0 && it->second.holder != ack.trainer && !it->second.queued) {
    // Its first trainer left the view (or gave the pull up) and the batch went to another: that
    // one's ack counts, so that nothing is committed on two trainers' word.
    return make_body(wire::error_reply{errc::not_found, st.options.name + ": batch " + std::to_string(ack.sequence) +
                                                            " was handed to another trainer since; its ack is theirs"});
  }
  it->second.acked = true;
  it->second.queued = false;
  --st.unacked;
  requeue_overtaken(self, it->second.holder, it->second.handed_at);
  st.counters->batches_acked.fetch_add(1, std::memory_order_relaxed);
  st.counters->examples_acked.fetch_add(it->second.message->batch.size(), std::memory_order_relaxed);
  bool moved = false;
  reader_state::handed_out last;
  while (!st.in_flight.empty() && st.in_flight.begin()->second.acked) {
    last = std::move(st.in_flight.begin()->second);
    st.in_flight.erase(st.in_flight.begin());
    moved = true;
  }
  if (moved) {
    std::lock_guard<std::mutex> lock(st.counters->mu);
    st.counters->has_committed = true;
    st.counters->committed = last.message->end;
    st.counters->committed_examples = last.examples_through;
    st.counters->committed_bad_rows = last.bad_through;
  }
  update_progress(st);
  return make_body(wire::ack{});
}

// Requeues the batches held longer than the lease by a trainer that is alive but acks nothing
// newer either (the last batches of a reader whose answers came too late).
void requeue_expired(reader_self self) {
  auto& st = self->state;
  if (st.unacked == 0) return;
  const auto now = self->clock().now();
  std::uint64_t expired = 0;
  for (auto& [seq, h] : st.in_flight) {
    if (h.acked || h.queued || now - h.handed_at < st.options.lease) continue;
    requeue(st, seq, h);
    ++expired;
  }
  if (expired > 0)
    spdlog::warn("{}: {} batch(es) not trained within the --batch-lease of {} s; they go to the next trainer",
                 st.options.name, expired, std::chrono::duration_cast<std::chrono::seconds>(st.options.lease).count());
}

// Requeues the batches of trainers missing from the view for longer than requeue_after, or at
// once when a new process of the same trainer is in the view.
void requeue_orphans(reader_self self) {
  auto& st = self->state;
  if (!st.have_view) return;
  const auto now = self->clock().now();
  // A settled coordinator dropped a missing holder after --member-timeout of silence: no more waiting.
  const bool settled = now - st.coordinator_since >= st.options.requeue_after;
  std::set<std::uint64_t> holding, gone, restarted;
  for (auto& [seq, h] : st.in_flight) {
    if (h.acked || h.queued || st.live_trainers.count(h.holder) > 0) continue;
    auto since = st.missing_since.emplace(h.holder, now).first->second;
    const auto name = st.trainer_names.find(h.holder);
    const bool again = name != st.trainer_names.end() && st.live_names.count(name->second) > 0;
    if (again || settled || now - since >= st.options.requeue_after) {
      requeue(st, seq, h);
      (again ? restarted : gone).insert(h.holder);
    } else {
      holding.insert(h.holder);
    }
  }
  for (auto holder : restarted)
    spdlog::warn("{}: trainer {} restarted (incarnation {:x} is gone) holding batches; they go to the next trainers",
                 st.options.name, st.trainer_names[holder], holder);
  for (auto holder : gone)
    spdlog::warn("{}: trainer {:x} left the cluster holding batches; they go to other trainers", st.options.name,
                 holder);
  for (auto holder : restarted) st.missing_since.erase(holder);
  for (auto holder : gone) st.missing_since.erase(holder);
  // Names are kept only while they may still matter: live, or holding batches.
  for (auto it = st.trainer_names.begin(); it != st.trainer_names.end();)
    it = st.live_trainers.count(it->first) > 0 || holding.count(it->first) > 0 ? std::next(it)
                                                                                : st.trainer_names.erase(it);
}

// What a reader's status reads its fields from.
struct reader_view {
  const reader_state& st;
  const reader_counters& c;
  const std::string& error;
  const wire::read_position& committed;
  std::uint64_t committed_examples;
};

// The reader's status, declared once: its JSON key, type and help on /metrics, and how it is read.
const metrics::status_table<reader_view>& reader_fields() {
  using v = const reader_view&;
  using t = metrics::metric_type;
  static const metrics::status_table<reader_view> table = metrics::concat<reader_view>({
      {
        {"role", t::status_only, "The service's role.", [](v) { return "reader"; }},
        {"name", t::status_only, "The reader's name.", [](v x) { return x.st.options.name; }},
        {"index", t::status_only, "The reader's index.", [](v x) { return x.st.options.index; }},
      },
      metrics::counter_fields<reader_counters, reader_view>([](v x) -> const reader_counters& { return x.c; }),
      {
        {"in_flight", t::gauge, "Batches handed out and not yet acknowledged.", [](v x) { return x.st.unacked; }},
        {"epoch", t::gauge, "Epoch being read (0-based).", [](v x) { return x.c.epoch.load() + 1; }},
        {"committed_epoch", t::status_only, "Epoch of the committed position.",
         [](v x) { return x.committed.epoch + 1; }},
        {"committed_file", t::status_only, "Input file of the committed position.",
         [](v x) { return x.committed.file_index; }},
        {"committed_offset", t::status_only, "Byte offset of the committed position in its file.",
         [](v x) { return x.committed.byte_offset; }},
        {"committed_window", t::status_only,
         "0: the committed position is in the reader's own files; k: in the k-th shuffle window it inherited "
         "from the readers before a change of reader count (committed_file and committed_offset: the window's start).",
         [](v x) { return x.committed.inherited; }},
        {"committed_file_name", t::status_only, "A followed input: the file of the committed position.",
         [](v x) { return x.committed.file_name; }},
        {"following", t::gauge, "1 while the reader follows its input (--follow) and the job was not stopped.",
         [](v x) { return x.st.follow && !x.c.exhausted.load(); }},
        {"committed_examples", t::gauge, "Examples committed at the reader's position.",
         [](v x) { return x.committed_examples; }},
        {"finished", t::gauge, "1 once this member finished its part of the job.",
         [](v x) { return x.c.finished.load(); }},
        {"error", t::status_only, "Why reading stopped, if it failed.", [](v x) { return x.error; }},
      },
  });
  return table;
}

body_ptr serve_status(reader_self self) {
  auto& st = self->state;
  auto& c = *st.counters;
  std::string error;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    error = c.error;
  }
  const auto now = c.committed_now();
  return make_body(wire::status_reply{
      metrics::to_json(reader_fields(), reader_view{st, c, error, now.committed, now.committed_examples})});
}

reader_actor::behavior_type reader(reader_self self, std::shared_ptr<reader_input> input, reader_options options,
                                   std::shared_ptr<reader_counters> counters) {
  auto& st = self->state;
  st.reader = std::move(input->files);
  st.follow = std::move(input->follow);
  st.options = std::move(options);
  st.counters = std::move(counters);
  if (st.reader) {
    st.counters->bytes_total.store(st.reader->epochs() * st.reader->epoch_bytes());
  } else if (st.follow) {
    st.caught_up_at = self->clock().now();
    follow_progress(st);
  } else {
    st.counters->exhausted.store(true);
    update_progress(st);
  }
  {
    std::lock_guard<std::mutex> lock(st.counters->mu);
    st.counters->committed_examples = st.options.resume_examples;
    st.counters->examples_before.store(st.options.resume_examples);
    st.counters->committed_bad_rows = st.options.resume_bad_rows;
  }
  const auto every = std::chrono::duration_cast<caf::timespan>(
      std::min<std::chrono::milliseconds>(std::chrono::milliseconds(250), st.options.requeue_after));
  self->delayed_send(self, every, tick_atom::value);
  return {
      [self](serve_atom, const envelope_ptr& env) -> body_ptr {
        if (const auto* pull = std::get_if<wire::pull_request>(&env->message)) return serve_pull(self, *pull);
        if (const auto* ack = std::get_if<wire::batch_ack>(&env->message)) return serve_ack(self, *ack);
        if (std::holds_alternative<wire::position_request>(env->message))
          return make_body(self->state.counters->committed_now());
        if (std::holds_alternative<wire::status_request>(env->message)) return serve_status(self);
        return make_body(wire::error_reply{errc::invalid_argument, std::string("a reader does not serve ") +
                                                                       wire::message_name(env->message)});
      },
      [self](view_atom, const wire::cluster_view& view) {
        auto& s = self->state;
        if (!s.have_view || view.coordinator != s.coordinator) {
          s.coordinator = view.coordinator;
          s.coordinator_since = self->clock().now();
        }
        s.have_view = true;
        s.live_trainers.clear();
        s.live_trainers.insert(view.trainer_incarnations.begin(), view.trainer_incarnations.end());
        s.live_names.clear();
        for (std::size_t i = 0; i < view.trainers.size() && i < view.trainer_incarnations.size(); ++i) {
          s.trainer_names[view.trainer_incarnations[i]] = view.trainers[i];
          s.live_names.insert(view.trainers[i]);
        }
        for (auto it = s.missing_since.begin(); it != s.missing_since.end();)
          it = s.live_trainers.count(it->first) > 0 ? s.missing_since.erase(it) : std::next(it);
        s.epochs_open = view.epochs_open;
        s.epochs_stop = view.epochs_stop;
        if (view.hold_input != s.hold_input)
          spdlog::info("{}: {}", s.options.name,
                       view.hold_input ? "input held: the job changes its shard count" : "input no longer held");
        s.hold_input = view.hold_input;
        update_progress(s);
        s.counters->view_epoch.store(view.epoch, std::memory_order_relaxed);
        if (s.follow && view.input_closed && !s.input_closed) {
          s.input_closed = true;
          end_following(s, "the job was stopped");
        }
      },
      [](state_atom, wire::job_state) {},
      [self, every](tick_atom) {
        requeue_orphans(self);
        requeue_expired(self);
        update_progress(self->state);  // batches queued again are no longer being trained
        if (self->state.follow) follow_tick(self);
        self->delayed_send(self, every, tick_atom::value);
      },
  };
}

}  // namespace
}  // namespace ss::actors::reader_detail

namespace ss::actors {

wire::position_reply reader_counters::committed_now() const {
  wire::position_reply now;
  std::lock_guard<std::mutex> lock(mu);
  now.has_committed = has_committed;
  now.committed = committed;
  now.committed_examples = committed_examples;
  now.committed_bad_rows = committed_bad_rows;
  return now;
}

metrics::field_list reader_field_list() { return metrics::describe(reader_detail::reader_fields()); }

reader_actor spawn_reader(caf::actor_system& sys, const gateway_actor& gateway, reader_input input,
                          const reader_options& options, std::shared_ptr<reader_counters> counters) {
  auto a = sys.spawn(reader_detail::reader, std::make_shared<reader_input>(std::move(input)), options, counters);
  const request_server_actor server{a};
  caf::anon_send(gateway, route_atom::value, kind_of<wire::pull_request>(), server);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::batch_ack>(), server);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::position_request>(), server);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::status_request>(), server);
  return a;
}

}  // namespace ss::actors
