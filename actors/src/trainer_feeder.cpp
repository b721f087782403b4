// The feeder: pulls batches from every reader with bounded credits and hands them to the
// workers that ask; acks each batch to its reader once a worker trained it (messages:
// feeder_actor in trainer_parts.hpp).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <string>

#include "trainer_parts.hpp"

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
};

struct feeder_state {
  static inline const char* name = "feeder";
  context_ptr ctx;
  std::vector<reader_slot> readers;
  std::deque<batch_ptr> ready;
  std::deque<caf::typed_response_promise<batch_ptr>> waiting;
  int credits = 2;  // total pulls outstanding plus batches ready, per reader
  // The coordinator has seen every reader finish. Until then an ended reader is asked again now
  // and then: a reader that restarts replays from its last committed position.
  bool draining = false;
};
using self_ptr = feeder_actor::stateful_pointer<feeder_state>;

bool all_readers_ended(const feeder_state& st) {
  if (!st.draining || static_cast<int>(st.readers.size()) < st.ctx->job.readers) return false;
  for (const auto& r : st.readers)
    if (!r.ended || r.outstanding > 0) return false;
  return true;
}

void hand_out(self_ptr self) {
  auto& st = self->state;
  while (!st.waiting.empty() && !st.ready.empty()) {
    st.waiting.front().deliver(st.ready.front());
    st.waiting.pop_front();
    st.ready.pop_front();
  }
  if (st.ready.empty() && all_readers_ended(st)) {
    for (auto& p : st.waiting) p.deliver(batch_ptr{});  // no more input
    st.waiting.clear();
  }
}

void schedule_repoll(self_ptr self, std::uint32_t r) {
  auto& slot = self->state.readers[r];
  if (slot.retry_scheduled) return;
  slot.retry_scheduled = true;
  self->delayed_send(self, retry_delay, repoll_atom::value, r);
}

void on_pulled(self_ptr self, std::uint32_t r, const envelope_ptr& env);

void pull(self_ptr self, std::uint32_t r) {
  auto& st = self->state;
  auto& slot = st.readers[r];
  if (slot.link == 0) return;
  int in_use = slot.outstanding;
  for (const auto& b : st.ready)
    if (b->reader_index == r) ++in_use;
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
    self->request(st.ctx->gateway, caf::infinite, call_atom::value, slot.link,
                  make_body(wire::pull_request{1, st.ctx->options.incarnation}), st.ctx->timeout)
        .then(
            [self, r, generation = slot.generation](const envelope_ptr& env) {
              auto& sl = self->state.readers[r];
              if (sl.generation != generation) return;  // a pull to a reader process that is gone
              --sl.outstanding;
              on_pulled(self, r, env);
            },
            [self, r, generation = slot.generation](const caf::error&) {
              if (self->state.readers[r].generation != generation) return;
              --self->state.readers[r].outstanding;
              // The last pull outstanding (to a reader that died) may be what kept the input open.
              hand_out(self);
              schedule_repoll(self, r);
            });
  }
}

void on_pulled(self_ptr self, std::uint32_t r, const envelope_ptr& env) {
  auto& st = self->state;
  auto& slot = st.readers[r];
  if (const auto* b = std::get_if<wire::batch_message>(&env->message)) {
    slot.ended = false;
    st.ready.push_back(std::make_shared<const wire::batch_message>(*b));
    hand_out(self);
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

void send_ack(self_ptr self, std::uint32_t r, std::uint64_t sequence, std::uint64_t incarnation, int attempt) {
  auto& st = self->state;
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, st.readers[r].link,
                make_body(wire::batch_ack{r, sequence, incarnation}), st.ctx->timeout)
      .then([](const envelope_ptr&) {},
            [self, r, sequence, incarnation, attempt](const caf::error&) {
              // An ack lost on the way would leave the reader waiting until it hands the batch
              // to another trainer: resend it (a restarted reader refuses it; it replays the batch).
              if (attempt < 1000)
                self->delayed_send(self, retry_delay, ack_atom::value, r, sequence, incarnation, attempt + 1);
            });
}

// A reader the view names anew (first seen, restarted, or moved): link to it and pull.
void follow_readers(self_ptr self, const wire::cluster_view& view) {
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

feeder_actor::behavior_type feeder(self_ptr self, context_ptr ctx) {
  self->state.credits = std::max(1, ctx->job.pull_credits * std::max(1, ctx->options.workers));
  self->state.ctx = std::move(ctx);
  return {
      [self](view_atom, const wire::cluster_view& view) { follow_readers(self, view); },
      [self](state_atom, wire::job_state state) {
        if (state != wire::job_state::draining && state != wire::job_state::done) return;
        self->state.draining = true;
        hand_out(self);
      },
      [self](next_atom) -> caf::typed_response_promise<batch_ptr> {
        auto& st = self->state;
        auto p = self->make_response_promise<batch_ptr>();
        st.waiting.push_back(p);
        hand_out(self);
        for (std::uint32_t r = 0; r < st.readers.size(); ++r) pull(self, r);
        return p;
      },
      [self](ack_atom, std::uint32_t r, std::uint64_t sequence, std::uint64_t incarnation, int attempt) {
        send_ack(self, r, sequence, incarnation, attempt);
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
