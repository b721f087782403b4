// A reader that follows its input (--follow): batches of the rows there are, partial ones once
// they have waited --follow-batch-wait, "waiting for input" when there are too few, and the end of
// the input when the job is stopped or the reader's share of --follow-limit-examples is handed out.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "state.hpp"

namespace ss::actors::reader_detail {
namespace {

// Examples this reader may still hand out (its share of --follow-limit-examples).
std::uint64_t examples_left(const reader_state& st) {
  if (st.options.follow_limit == 0) return std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t done = st.options.resume_examples + st.follow_examples;
  return done >= st.options.follow_limit ? 0 : st.options.follow_limit - done;
}

// Rotations, truncations and refused files, as the follower noticed them.
void log_notices(reader_state& st) {
  for (const auto& text : st.follow->take_notices()) spdlog::warn("{}: {}", st.options.name, text);
}

}  // namespace

void follow_progress(reader_state& st) {
  auto& c = *st.counters;
  const auto& f = *st.follow;
  const auto& fc = f.follow();
  c.rows_read.store(f.counters().rows_read, std::memory_order_relaxed);
  c.bad_rows.store(st.options.resume_bad_rows + f.counters().bad, std::memory_order_relaxed);
  c.follow_lines.store(fc.lines, std::memory_order_relaxed);
  c.follow_files.store(fc.files, std::memory_order_relaxed);
  c.follow_rotations.store(fc.rotations, std::memory_order_relaxed);
  c.follow_truncations.store(fc.truncations, std::memory_order_relaxed);
  c.follow_files_refused.store(fc.files_refused, std::memory_order_relaxed);
  c.follow_tails_lost.store(fc.tails_lost, std::memory_order_relaxed);
  // A stream has no end to reach: bytes are "behind", not "of a total" (no ETA).
  c.epoch.store(0, std::memory_order_relaxed);
  c.epochs_done.store(c.exhausted.load() && st.unacked == 0 ? 1 : 0, std::memory_order_relaxed);
}

void end_following(reader_state& st, const std::string& why) {
  if (st.counters->exhausted.load()) return;
  // The bad-row limit as at the end of files: a short stream of bad rows fails here, not never.
  if (status s = st.follow->check_at_end(); !s.is_ok()) {
    reading_failed(st, s);
    return;
  }
  spdlog::info("{}: following ends ({}): {} batches handed out; {} row(s) read since are not handed out", st.options.name,
               why, st.next_sequence, st.follow->pending());
  st.counters->exhausted.store(true);
  update_progress(st);
}

body_ptr serve_follow_pull(reader_self self, const wire::pull_request& pull) {
  auto& st = self->state;
  auto& f = *st.follow;
  const std::uint64_t left = examples_left(st);
  if (left == 0) {
    end_following(st, "its share of --follow-limit-examples, " + std::to_string(st.options.follow_limit) +
                          " examples, is handed out");
    return serve_pull(self, pull);
  }
  const auto now = self->clock().now();
  const std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>(left, f.batch_size()));
  auto pending = f.fill(room);
  log_notices(st);
  report_bad_rows(st, f.bad_row_reports());
  if (!pending.is_ok()) return reading_failed(st, pending.error());
  if (f.caught_up()) st.caught_up_at = now;
  if (*pending > 0 && !st.pending_since) st.pending_since = now;
  const bool full = *pending >= room;
  const bool waited = *pending > 0 && now - *st.pending_since >= st.options.follow_batch_wait;
  if (!full && !waited) {
    st.counters->follow_waits.add();
    update_progress(st);
    // Not an error and not the end: the trainer asks again shortly (unavailable), without a log line.
    return make_body(wire::error_reply{errc::unavailable, st.options.name + ": waiting for input (following " +
                                                              f.path() + ", " + std::to_string(*pending) +
                                                              " new example(s) so far)"});
  }
  auto m = std::make_shared<wire::batch_message>();
  f.take(m->batch);
  st.pending_since.reset();
  st.follow_examples += m->batch.size();
  const auto pos = f.position();
  m->end.byte_offset = pos.byte_offset;
  m->end.line_number = pos.line_number;
  m->end.previous_line_crc = pos.previous_line_crc;
  m->end.file_name = pos.file;
  m->end.device = pos.device;
  m->end.inode = pos.inode;
  return hand_new(self, std::move(m), st.options.resume_examples + st.follow_examples,
                  st.options.resume_bad_rows + f.counters().bad, pull);
}

void follow_tick(reader_self self) {
  auto& st = self->state;
  auto& c = *st.counters;
  log_notices(st);
  const std::uint64_t behind = st.follow->bytes_behind();
  c.follow_bytes_behind.store(behind, std::memory_order_relaxed);
  const auto now = self->clock().now();
  const bool idle = behind == 0 && st.follow->pending() == 0;
  if (idle) st.caught_up_at = now;
  std::chrono::nanoseconds lag{0};
  if (st.caught_up_at && !idle) lag = std::chrono::duration_cast<std::chrono::nanoseconds>(now - *st.caught_up_at);
  c.follow_lag.store(static_cast<std::uint64_t>(lag.count()), std::memory_order_relaxed);
}

}  // namespace ss::actors::reader_detail
