// The feeder: pulls batches from every reader with bounded credits and hands them to the
// workers that ask; acks each batch to its reader once a worker trained it (messages:
// feeder_actor in parts.hpp).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <tuple>

#include "ss/core/train/train_step.hpp"
#include "parts.hpp"

namespace ss::actors::trainer_detail {
namespace {

struct reader_slot {
  std::string endpoint;
  std::uint64_t incarnation = 0;  // of the reader process the view names
  // Bumped when that process is gone: answers to pulls sent before are not waited for.
  std::uint64_t generation = 0;
  std::uint32_t link = 0;
  int outstanding = 0;
  bool ended = false;  // answered end_of_data (asked again while the job is running: it may restart)
  bool retry_scheduled = false;
  bool poll_due = false;  // an ended reader's next poll may go out
  // Pulls to this reader process whose answers this trainer stopped waiting for: named in the
  // next pulls until one is answered (then the reader has read them), the newest kAbandonedKept.
  std::vector<std::uint64_t> abandoned;
};

constexpr std::size_t kAbandonedKept = 256;

// Prefetch hints: the shards' links, whether each still wants hints (a shard without a memory
// budget says it does not; a new link asks again), and scratch to split a batch's rows by shard.
struct hint_state {
  links shard_links;
  std::vector<bool> wanted;
  embedding::batch_rows rows;
  embedding::shard_split split;
};

// A batch this trainer holds (pulled, not acked yet): (reader index, sequence, reader incarnation).
using batch_key = std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>;

struct feeder_state {
  static inline const char* name = "feeder";
  context_ptr ctx;
  hint_state hints;
  std::vector<reader_slot> readers;
  std::deque<fed_batch> ready;
  std::deque<caf::typed_response_promise<fed_batch>> waiting;
  // The trainer's membership as the view gives it, and the pull that brought each batch held: a
  // new membership (the job went on without this trainer) hands all of them back to their readers.
  std::uint64_t membership = 0;
  std::map<batch_key, std::uint64_t> held;
  int credits = 2;  // total pulls outstanding plus batches ready, per reader
  std::uint64_t pulls = 0;  // pulls sent, numbering them
  // The coordinator has seen every reader finish. Until then an ended reader is asked again now
  // and then: a reader that restarts replays from its last committed position.
  bool draining = false;
};
using feeder_self = feeder_actor::stateful_pointer<feeder_state>;

bool all_readers_ended(const feeder_state& st) {
  if (!st.draining || static_cast<int>(st.readers.size()) < st.ctx->job.readers) return false;
  for (const auto& r : st.readers)
    if (!r.ended || r.outstanding > 0) return false;
  return true;
}

void hand_out(feeder_self self) {
  auto& st = self->state;
  while (!st.waiting.empty() && !st.ready.empty()) {
    st.waiting.front().deliver(st.ready.front());
    st.waiting.pop_front();
    st.ready.pop_front();
  }
  if (st.ready.empty() && all_readers_ended(st)) {
    for (auto& p : st.waiting) p.deliver(fed_batch{});  // no more input
    st.waiting.clear();
  }
}

void schedule_repoll(feeder_self self, std::uint32_t r) {
  auto& slot = self->state.readers[r];
  if (slot.retry_scheduled) return;
  slot.retry_scheduled = true;
  self->delayed_send(self, retry_delay, repoll_atom::value, r);
}

void on_pulled(feeder_self self, std::uint32_t r, const envelope_ptr& env, std::uint64_t number, std::uint64_t membership);

// Pull `number` to reader r is given up: the reader is told so in the next pulls, and hands its
// batch on at once instead of after the lease.
void abandon(reader_slot& slot, std::uint64_t number) {
  slot.abandoned.push_back(number);
  if (slot.abandoned.size() > kAbandonedKept) slot.abandoned.erase(slot.abandoned.begin());
}

void pull(feeder_self self, std::uint32_t r) {
  auto& st = self->state;
  auto& slot = st.readers[r];
  if (slot.link == 0) return;
  int in_use = slot.outstanding;
  for (const auto& b : st.ready)
    if (b.batch->reader_index == r) ++in_use;
  int limit = st.credits;
  if (slot.ended) {
    // An ended reader is asked again, one pull at a time at the retry pace, until the job has
    // seen every reader finish: if it restarted, it replays from its committed position.
    if (st.draining || slot.outstanding > 0) return;
    if (!slot.poll_due) {
      schedule_repoll(self, r);
      return;
    }
    slot.poll_due = false;
    limit = in_use + 1;
  }
  while (in_use < limit) {
    ++slot.outstanding;
    ++in_use;
    const std::uint64_t number = ++st.pulls;
    self->request(st.ctx->gateway, caf::infinite, call_atom::value, slot.link,
                  make_body(wire::pull_request{1, st.ctx->options.incarnation, number, slot.abandoned}),
                  st.ctx->timeout)
        .then(
            [self, r, generation = slot.generation, told = slot.abandoned, number,
             membership = st.membership](const envelope_ptr& env) {
              auto& sl = self->state.readers[r];
              if (sl.generation != generation) return;  // a pull to a reader process that is gone
              --sl.outstanding;
              // The reader read this pull, and with it the abandoned pulls it named.
              if (!told.empty())
                sl.abandoned.erase(std::remove_if(sl.abandoned.begin(), sl.abandoned.end(),
                                                  [&told](std::uint64_t n) {
                                                    return std::find(told.begin(), told.end(), n) != told.end();
                                                  }),
                                   sl.abandoned.end());
              on_pulled(self, r, env, number, membership);
            },
            [self, r, generation = slot.generation, number](const caf::error&) {
              auto& sl = self->state.readers[r];
              if (sl.generation != generation) return;
              --sl.outstanding;
              // Its answer, if it ever comes, is dropped.
              abandon(sl, number);
              // The last pull outstanding (to a reader that died) may be what kept the input open.
              hand_out(self);
              schedule_repoll(self, r);
            });
  }
}

// Tells each shard that wants hints which of its rows `batch` will look up. Best effort: an answer
// other than warm_reply changes nothing, and the lookup is right without it.
void send_hints(feeder_self self, const wire::batch_message& batch) {
  auto& st = self->state;
  auto& h = st.hints;
  if (!st.ctx->options.prefetch || st.ctx->job.simulate_step_ms > 0) return;
  if (std::none_of(h.wanted.begin(), h.wanted.end(), [](bool w) { return w; })) return;
  if (!train::check_batch(st.ctx->model->config(), batch.batch).is_ok()) return;  // the worker reports it
  h.rows.build(batch.batch, st.ctx->buckets, st.ctx->model->config().embedding_dim);
  h.split.build(h.rows, st.ctx->shards);
  for (std::uint32_t s = 0; s < h.split.shards() && s < h.shard_links.size(); ++s) {
    const auto& part = h.split.of(s);
    const std::uint32_t link = h.shard_links[s];
    if (part.ids.empty() || link == 0 || !h.wanted[s]) continue;
    self->request(st.ctx->gateway, caf::infinite, call_atom::value, link,
                  make_body(wire::warm_request{part.tables, part.ids}), st.ctx->timeout)
        .then(
            [self, s, link](const envelope_ptr& env) {
              const auto* reply = std::get_if<wire::warm_reply>(&env->message);
              auto& hs = self->state.hints;
              if (reply != nullptr && !reply->tiered && s < hs.shard_links.size() && hs.shard_links[s] == link)
                hs.wanted[s] = false;
            },
            [](const caf::error&) {});
  }
}

void on_pulled(feeder_self self, std::uint32_t r, const envelope_ptr& env, std::uint64_t number,
               std::uint64_t membership) {
  auto& st = self->state;
  auto& slot = st.readers[r];
  if (const auto* b = std::get_if<wire::batch_message>(&env->message)) {
    slot.ended = false;
    if (membership != st.membership) {
      // Asked for under a membership that is over: the reader may hand it to others already.
      abandon(slot, number);
      pull(self, r);
      return;
    }
    auto batch = std::make_shared<const wire::batch_message>(*b);
    st.held[batch_key{r, batch->sequence, batch->incarnation}] = number;
    st.ready.push_back(fed_batch{batch, membership});
    hand_out(self);
    // A batch that waits for a worker: its rows can be read ahead. One that went to a waiting
    // worker is looked up now, and a hint would only read its rows twice.
    if (!st.ready.empty() && st.ready.back().batch == batch) send_hints(self, *batch);
    pull(self, r);
  } else if (std::holds_alternative<wire::end_of_data>(env->message)) {
    slot.ended = true;
    hand_out(self);
    pull(self, r);
  } else if (const auto* err = std::get_if<wire::error_reply>(&env->message)) {
    // unavailable: every batch is out and some may come back; ask again shortly.
    if (err->code != errc::unavailable)
      spdlog::warn("{}: reader {} refused a pull: {}", st.ctx->options.name, r, err->message);
    schedule_repoll(self, r);
  }
}

void send_ack(feeder_self self, std::uint32_t r, std::uint64_t sequence, std::uint64_t incarnation, int attempt) {
  auto& st = self->state;
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, st.readers[r].link,
                make_body(wire::batch_ack{r, sequence, incarnation, st.ctx->options.incarnation}), st.ctx->timeout)
      .then([](const envelope_ptr&) {},
            [self, r, sequence, incarnation, attempt](const caf::error&) {
              // An ack lost on the way would leave the reader waiting until it hands the batch
              // to another trainer: resend it (a restarted reader refuses it; it replays the batch).
              if (attempt < 1000)
                self->delayed_send(self, retry_delay, ack_atom::value, r, sequence, incarnation, attempt + 1);
            });
}

// The trainer's membership in `view`: when it changed (the job went on without this trainer), every
// batch held under the old one goes back to its reader, whose next pull names it as abandoned.
void follow_membership(feeder_self self, const wire::cluster_view& view) {
  auto& st = self->state;
  const std::uint64_t membership = membership_in(view, st.ctx->options.incarnation);
  if (membership == 0 || membership == st.membership) return;
  const bool renewed = st.membership != 0;
  st.membership = membership;
  if (!renewed) return;
  for (const auto& [key, number] : st.held)
    if (std::get<0>(key) < st.readers.size()) abandon(st.readers[std::get<0>(key)], number);
  spdlog::warn("{}: membership {}: {} batch(es) held under the old one handed back to their readers",
               st.ctx->options.name, membership, st.held.size());
  st.held.clear();
  st.ready.clear();
  for (std::uint32_t r = 0; r < st.readers.size(); ++r) pull(self, r);
}

// A reader the view names anew (first seen, restarted, or moved): link to it and pull.
void follow_readers(feeder_self self, const wire::cluster_view& view) {
  auto& st = self->state;
  if (st.readers.size() < view.readers.size()) st.readers.resize(view.readers.size());
  for (std::uint32_t r = 0; r < view.readers.size(); ++r) {
    const auto& endpoint = view.readers[r];
    const std::uint64_t incarnation = r < view.reader_incarnations.size() ? view.reader_incarnations[r] : 0;
    auto& slot = st.readers[r];
    if (endpoint.empty() || (endpoint == slot.endpoint && incarnation == slot.incarnation)) continue;
    if (!slot.endpoint.empty()) {
      // A new reader process: the pulls the one before holds are never answered. Not waiting
      // out their timeout, the trainer asks the new one at once.
      ++slot.generation;
      slot.outstanding = 0;
      slot.abandoned.clear();
    }
    slot.endpoint = endpoint;
    slot.incarnation = incarnation;
    slot.ended = false;
    self->request(st.ctx->gateway, caf::infinite, link_atom::value, endpoint).then([self, r](std::uint32_t link) {
      self->state.readers[r].link = link;
      pull(self, r);
    });
  }
}

feeder_actor::behavior_type feeder(feeder_self self, context_ptr ctx) {
  self->state.credits = std::max(1, ctx->job.pull_credits * std::max(1, ctx->options.workers));
  self->state.ctx = std::move(ctx);
  return {
      [self](view_atom, const wire::cluster_view& view) {
        follow_membership(self, view);
        follow_readers(self, view);
      },
      [self](state_atom, wire::job_state state) {
        if (state != wire::job_state::draining && state != wire::job_state::done) return;
        self->state.draining = true;
        hand_out(self);
      },
      [self](next_atom) -> caf::typed_response_promise<fed_batch> {
        auto& st = self->state;
        auto p = self->make_response_promise<fed_batch>();
        st.waiting.push_back(p);
        hand_out(self);
        for (std::uint32_t r = 0; r < st.readers.size(); ++r) pull(self, r);
        return p;
      },
      [self](ack_atom, std::uint32_t r, std::uint64_t sequence, std::uint64_t incarnation, int attempt) {
        // A batch handed back (of a membership that is over) is not this trainer's to ack.
        if (attempt == 0 && self->state.held.erase(batch_key{r, sequence, incarnation}) == 0) return;
        send_ack(self, r, sequence, incarnation, attempt);
      },
      [self](shards_atom, const links& l) {
        auto& h = self->state.hints;
        h.wanted.resize(l.size(), true);
        for (std::size_t s = 0; s < l.size(); ++s)
          if (s >= h.shard_links.size() || h.shard_links[s] != l[s]) h.wanted[s] = true;  // a new link: ask again
        h.shard_links = l;
      },
      [self](repoll_atom, std::uint32_t r) {
        auto& slot = self->state.readers[r];
        slot.retry_scheduled = false;
        slot.poll_due = true;
        pull(self, r);
      },
  };
}

}  // namespace

feeder_actor spawn_feeder(caf::local_actor* parent, context_ptr ctx) {
  return parent->spawn<caf::linked>(feeder, std::move(ctx));
}

}  // namespace ss::actors::trainer_detail
