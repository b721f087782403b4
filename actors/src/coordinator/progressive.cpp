// The job's progressive evaluation (ss/core/metrics/progressive.hpp): every trainer heartbeats its
// window's slices; the coordinator merges them with the slices of trainers that left, on its own
// clock, into the job's window. A trainer's part is counted once: its newest heartbeat replaces
// the one before, its slices are kept when it leaves until they fall out of the window, and they
// are forgotten when it comes back (its heartbeats carry them again).
#include <spdlog/spdlog.h>

#include "state.hpp"
#include "ss/wire/progressive.hpp"

namespace ss::actors::coordinator_detail {
namespace {

double seconds_at(const coordinator_state& st, clock_type::time_point t) { return seconds_between(st.started_at, t); }

metrics::window_spec job_window(const coordinator_state& st) { return job::window_spec_of(st.options.job.progressive); }

// The slices of a trainer's last heartbeat, on the coordinator's clock (its window was checked
// when the heartbeat came: take_window).
std::vector<metrics::window_slice> slices_of(const coordinator_state& st, const member_info& m) {
  auto slices = wire::from_wire(m.progress.progressive, seconds_at(st, m.last_seen));
  return slices.is_ok() ? std::move(*slices) : std::vector<metrics::window_slice>{};
}

// Every slice the job has: the live trainers' first, then the departed ones.
struct job_slices {
  std::vector<std::vector<metrics::window_slice>> live;  // holds the live trainers' slices
  std::vector<const metrics::window_slice*> all;
  std::size_t first_departed = 0;
  std::vector<std::pair<std::uint64_t, std::size_t>> departed;  // all[first_departed + k]: (incarnation, index)
};

job_slices collect(const coordinator_state& st) {
  job_slices j;
  for (const auto& [id, m] : st.members)
    if (m.role == wire::role::trainer) j.live.push_back(slices_of(st, m));
  for (const auto& slices : j.live)
    for (const auto& s : slices) j.all.push_back(&s);
  j.first_departed = j.all.size();
  for (const auto& [incarnation, slices] : st.departed_windows)
    for (std::size_t i = 0; i < slices.size(); ++i) {
      j.all.push_back(&slices[i]);
      j.departed.emplace_back(incarnation, i);
    }
  return j;
}

}  // namespace

metrics::progressive_summary job_progressive(const coordinator_state& st, clock_type::time_point now,
                                             double base_click_rate) {
  const job_slices j = collect(st);
  return metrics::summarize(metrics::merge_window(j.all, job_window(st), seconds_at(st, now)), base_click_rate);
}

void take_window(coordinator_actor* self, const member_info& m, wire::member_progress& p) {
  const auto checked = wire::check_progressive(p.progressive);
  if (checked.is_ok()) return;
  auto& st = self->state;
  st.counters.windows_refused.add();
  p.progressive = {};
  std::uint64_t held_back = 0;
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(self->clock().now().time_since_epoch());
  if (st.window_refusals.admit(m.name, now_ns.count(), &held_back))
    spdlog::warn("{}: left out the progressive window of {}'s heartbeat: {}{}", st.options.name, m.name,
                 checked.message(),
                 held_back > 0 ? " (and " + std::to_string(held_back) + " more since the last report)" : std::string());
}

void keep_departed_window(coordinator_state& st, const member_info& m) {
  auto slices = slices_of(st, m);
  if (!slices.empty()) st.departed_windows[m.incarnation] = std::move(slices);
}

void forget_departed_window(coordinator_state& st, std::uint64_t incarnation) { st.departed_windows.erase(incarnation); }

void expire_departed_windows(coordinator_state& st, clock_type::time_point now) {
  if (st.departed_windows.empty()) return;
  // A slice out of the job's window is out for good: newer examples only add up, time only passes.
  const job_slices j = collect(st);
  std::map<std::uint64_t, std::vector<metrics::window_slice>> kept;
  for (const std::size_t i : metrics::select_window(j.all, job_window(st), seconds_at(st, now)))
    if (i >= j.first_departed) {
      const auto& [incarnation, index] = j.departed[i - j.first_departed];
      kept[incarnation].push_back(st.departed_windows.at(incarnation)[index]);
    }
  st.departed_windows = std::move(kept);
}

}  // namespace ss::actors::coordinator_detail
