// The trainer's progress counters: the workers and the syncer add to them, the membership agent
// and the status endpoint read them (one mutex; a batch adds once).
#include <algorithm>

#include "ss/actors/trainer.hpp"
#include "ss/wire/progressive.hpp"

namespace ss::actors {

namespace {
void record(std::uint64_t* hist, std::chrono::nanoseconds d) {
  const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(1, d.count() / 1000));
  int b = 63 - __builtin_clzll(us);
  hist[std::min(b, 31)]++;
}
// The upper edge of the bucket holding quantile q, in milliseconds.
double quantile_ms(const std::uint64_t* hist, double q) {
  std::uint64_t total = 0;
  for (int b = 0; b < 32; ++b) total += hist[b];
  if (total == 0) return 0;
  std::uint64_t seen = 0;
  for (int b = 0; b < 32; ++b) {
    seen += hist[b];
    if (static_cast<double>(seen) >= q * static_cast<double>(total)) return static_cast<double>(2ULL << b) / 1000.0;
  }
  return 0;
}
}  // namespace


// Seconds on the steady clock: the progressive window's times (sent as ages, so the coordinator
// needs no common clock).
namespace {
double steady_seconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
}  // namespace

void trainer_progress::add_batch(std::uint64_t examples, double loss_sum, std::uint64_t clicks,
                                 const float* predictions, const float* labels) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (batches_ == 0) first_batch_ = now;
  last_batch_ = now;
  examples_ += examples;
  loss_sum_ += loss_sum;
  clicks_ += clicks;
  ++batches_;
  if (predictions != nullptr && labels != nullptr) window_.add(steady_seconds(now), predictions, labels, examples);
}

void trainer_progress::set_window(const metrics::window_spec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  window_.reset(spec);
}

wire::member_progress trainer_progress::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  wire::member_progress p;
  p.examples = examples_;
  p.batches = batches_;
  p.loss_sum = loss_sum_;
  p.clicks = clicks_;
  p.view_epoch = view_epoch_.load();
  const double now = steady_seconds(std::chrono::steady_clock::now());
  const auto& slices = window_.slices(now);
  p.progressive = wire::to_wire(slices, now);
  for (const auto& s : slices) {
    p.window_examples += s.examples;
    p.window_loss_sum += s.log_loss_sum;
    p.window_clicks += s.clicks;
  }
  p.finished = finished_.load();
  p.error = error_;
  p.sync_rounds = slice_rounds_.empty() ? 0 : *std::min_element(slice_rounds_.begin(), slice_rounds_.end());
  p.sync_gap = slice_rounds_sum_ > 0 ? static_cast<double>(sync_gap_sum_) / static_cast<double>(slice_rounds_sum_) : 0.0;
  p.sync_latency_p50_ms = quantile_ms(sync_hist_, 0.5);
  p.sync_latency_p99_ms = quantile_ms(sync_hist_, 0.99);
  p.sync_distance = slice_distance_.empty() ? 0.0 : *std::max_element(slice_distance_.begin(), slice_distance_.end());
  p.sync_wait_seconds = static_cast<double>(sync_wait_ns_) * 1e-9;
  p.sync_bytes = sync_bytes_;
  p.active_seconds = batches_ > 0 ? std::chrono::duration<double>(last_batch_ - first_batch_).count() : 0.0;
  return p;
}


void trainer_progress::add_compute(std::chrono::nanoseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  compute_ns_ += d.count();
}
void trainer_progress::add_wait(std::chrono::nanoseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  wait_ns_ += d.count();
}
void trainer_progress::add_lookup_latency(std::chrono::nanoseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  record(lookup_hist_, d);
}
void trainer_progress::add_push_latency(std::chrono::nanoseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  record(push_hist_, d);
}

void trainer_progress::add_sync_round(std::uint32_t slice, std::chrono::nanoseconds latency, std::uint64_t gap,
                                      double distance) {
  std::lock_guard<std::mutex> lock(mu_);
  record(sync_hist_, latency);
  if (slice >= slice_rounds_.size()) {
    slice_rounds_.resize(slice + 1, 0);
    slice_distance_.resize(slice + 1, 0.0);
  }
  ++slice_rounds_[slice];
  slice_distance_[slice] = distance;
  ++slice_rounds_sum_;
  sync_gap_sum_ += gap;
}

void trainer_progress::set_sync_slices(std::uint32_t slices) {
  std::lock_guard<std::mutex> lock(mu_);
  slice_rounds_.resize(slices, 0);
  slice_distance_.resize(slices, 0.0);
}

std::vector<std::uint64_t> trainer_progress::slice_rounds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return slice_rounds_;
}

void trainer_progress::add_sync_wait(std::chrono::nanoseconds worker_time) {
  std::lock_guard<std::mutex> lock(mu_);
  sync_wait_ns_ += worker_time.count();
}

void trainer_progress::add_sync_bytes(std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  sync_bytes_ += bytes;
}

std::uint64_t trainer_progress::batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

trainer_progress::timing trainer_progress::timings() const {
  std::lock_guard<std::mutex> lock(mu_);
  timing t;
  t.compute_seconds = static_cast<double>(compute_ns_) * 1e-9;
  t.wait_seconds = static_cast<double>(wait_ns_) * 1e-9;
  for (int b = 0; b < buckets; ++b) {
    t.lookups += lookup_hist_[b];
    t.pushes += push_hist_[b];
  }
  t.lookup_p50_ms = quantile_ms(lookup_hist_, 0.5);
  t.lookup_p99_ms = quantile_ms(lookup_hist_, 0.99);
  t.push_p50_ms = quantile_ms(push_hist_, 0.5);
  t.push_p99_ms = quantile_ms(push_hist_, 0.99);
  return t;
}

void trainer_progress::set_error(std::string e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.empty()) error_ = std::move(e);
}

std::string trainer_progress::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace ss::actors
