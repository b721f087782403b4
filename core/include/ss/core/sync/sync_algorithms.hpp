// The dense-parameter synchronization algorithms of ShadowSync (docs/sync.md), as pure functions
// over parameter buffers. Services move the buffers; these do the arithmetic.
//
//   EASGD  d = alpha (w_i - w~);  w_i -= d;  w~ += d            (elastic averaging; conserves w_i + w~)
//   MA     w_i <- mean_j w_j                                   (model averaging)
//   BMUF   G = mean_j w_j - w_s;  D = mu D + zeta G;  w_g += D;  w_i <- w_s' = w_g (+ mu D with Nesterov)
//          where w_s is the model the block started from (Chen & Huo 2016): w_g, or w_g + mu D with
//          Nesterov. Measuring G from w_g when the block started at w_g + mu D would count the
//          momentum twice (D grows like (2 mu)^t and diverges for mu > 1/2).
//
// Outer optimizer (S-MA and S-EASGD with -nesterov, DiLoCo / SlowMo style): the center's move over
// one full sweep of the trainers (every live trainer synced at least once since the sweep began)
// is a pseudo-gradient applied with Nesterov momentum: delta = w - w_a; v = mu v + delta;
// w = w_a + lr (delta + mu v); w_a = w, where w_a is the model the sweep started from. Stepping
// per full sweep rather than per (possibly partial) round keeps one trainer's frequent rounds
// from driving the momentum alone. mu = 0 and lr = 1 is the plain algorithm.
//
// Closing round (when the input is exhausted, and at a scored epoch's end): one last synchronous
// round over every trainer's final replica folds their last progress into the model taken: MA the
// mean, EASGD w~ += min(1, alpha m) (mean - w~) over m replicas, BMUF one block step without the
// Nesterov look-ahead (the model is taken as it is, not where momentum would carry it next); the
// outer optimizer likewise takes its true iterate w_a + lr delta.
//
// Shadow mode applies a round's result as a delta, so progress the workers made while the round
// was in flight survives: w_i += target - snapshot (MA, BMUF) or w_i -= d (EASGD), where the
// snapshot is the replica as it was sent.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::sync {

enum class algorithm { none, easgd, ma, bmuf };
enum class mode { none, shadow, foreground };

struct sync_spec {
  algorithm algo = algorithm::none;
  mode when = mode::none;
  bool outer_nesterov = false;  // the outer optimizer (S-EASGD and S-MA only)
  // Shadow rounds also while a trainer is the only one in the cluster's view. "auto" is S-EASGD
  // without them: its rounds start when a second trainer joins, whatever the job waited for.
  bool alone = true;
};

// "none", "s-easgd", "s-ma", "s-bmuf", "fr-easgd", "fr-ma", "fr-bmuf", and the shadow variants
// with the outer optimizer, "s-easgd-nesterov", "s-ma-nesterov"; "auto": S-EASGD whose rounds
// run while two or more trainers are in the view.
result<sync_spec> parse_sync(const std::string& name);
std::string to_string(const sync_spec& spec);
const char* to_string(algorithm a);

// The elastic rate: the paper's rule of thumb beta = n * alpha = 0.9.
inline float default_easgd_alpha(std::size_t trainers) {
  return 0.9f / static_cast<float>(trainers == 0 ? 1 : trainers);
}
// BMUF block momentum mu = 1 - 1/n.
inline float default_bmuf_momentum(std::size_t trainers) {
  return 1.0f - 1.0f / static_cast<float>(trainers == 0 ? 1 : trainers);
}

// The outer optimizer's momentum. Around EASGD, BMUF's rule: averaging n replicas divides the
// step by about n, and 1 / (1 - mu) = n gives it back. Around MA, at most 0.25: MA's round
// already lands every replica on the mean, and 1 - 1/n overshot it (+2.2% test NE at 8 trainers;
// 0.25 is within 0.1% of one trainer at 2, 4 and 8: bench/experiments/outer_momentum/outer_momentum_sweep.py, docs/sync.md).
inline float default_outer_momentum(algorithm inner, std::size_t trainers) {
  const float rule = default_bmuf_momentum(trainers);
  return inner == algorithm::ma ? std::min(0.25f, rule) : rule;
}

// EASGD at the central side: delta = alpha (replica - central); central += delta. The replica
// owner then subtracts delta from its (live) replica.
void easgd_step(const float* replica, float* central, float alpha, float* delta, std::size_t n);
// delta = alpha (replica - central) alone: quantized rounds move the center by the delta as the
// replica receives it (sync/replica_mirror.hpp).
void easgd_delta(const float* replica, const float* central, float alpha, float* delta, std::size_t n);
// x += y.
void add(float* x, const float* y, std::size_t n);

// Shadow application of a round: live += target - snapshot.
void apply_target(float* live, const float* snapshot, const float* target, std::size_t n);
// live -= delta (EASGD's replica side).
void subtract(float* live, const float* delta, std::size_t n);

// Sum of replicas, accumulated in double so the mean of many replicas stays exact to float.
class replica_mean {
 public:
  explicit replica_mean(std::size_t n = 0) { reset(n); }
  void reset(std::size_t n);
  void add(const float* replica);
  std::size_t count() const { return count_; }
  std::size_t size() const { return sum_.size(); }
  // out = sum / count; count() must be > 0.
  void mean(float* out) const;

 private:
  std::vector<double> sum_;
  std::size_t count_ = 0;
};

struct bmuf_options {
  float momentum = 0.5f;     // mu
  float block_lr = 1.0f;     // zeta
  bool nesterov = true;
};

// The global model and block momentum of BMUF.
class bmuf_state {
 public:
  // w_g (and the first block's start) at `initial`, the momentum at zero.
  void init(const float* initial, std::size_t n);
  bool initialized() const { return !global_.empty(); }
  // Resumes from a snapshot: the global model and its momentum (nullptr: zero). The replicas
  // restart from `global`, so the next block starts there.
  void restore(const float* global, const float* momentum, std::size_t n);
  std::size_t size() const { return global_.size(); }
  // One block update from the replicas' mean; writes the model the replicas take next (and the
  // next block starts from).
  void step(const float* mean, const bmuf_options& options, float* target);
  const std::vector<float>& global() const { return global_; }
  const std::vector<float>& momentum() const { return delta_; }

 private:
  std::vector<float> global_;
  std::vector<float> delta_;
  std::vector<float> start_;  // the model the current block started from
};

// EASGD's synchronous center update over the mean of m replicas (the closing round):
// central += min(1, alpha m) (mean - central); the rate is capped so the center never overshoots.
void easgd_fold(const float* mean, std::size_t replicas, float alpha, float* central, std::size_t n);

struct outer_options {
  float momentum = 0.5f;  // mu
  float lr = 1.0f;        // outer learning rate
};

// The outer optimizer's state: the model the current sweep started from (the anchor) and the
// momentum. The inner algorithm moves its model (EASGD's center, MA's target) freely during a
// sweep; sweep_done() turns the sweep's move into the outer step.
class outer_nesterov {
 public:
  // The anchor at `model`, the momentum at zero.
  void init(const float* model, std::size_t n);
  bool initialized() const { return !anchor_.empty(); }
  // Resumes from a snapshot: the model and its momentum (nullptr: zero).
  void restore(const float* model, const float* momentum, std::size_t n);
  std::size_t size() const { return anchor_.size(); }
  // A sweep ended with the inner model at `model`: applies the outer step to it in place. With
  // `lookahead` false (the closing round) the model is the optimizer's true iterate instead of
  // its look-ahead point: w = w_a + lr delta (the look-ahead is where the next sweep would start;
  // the model taken should not be extrapolated by the momentum). The momentum is updated alike.
  void sweep_done(float* model, const outer_options& options, bool lookahead = true);
  const std::vector<float>& momentum() const { return velocity_; }

 private:
  std::vector<float> anchor_;
  std::vector<float> velocity_;
};

// Which trainers (by incarnation) synced since the current sweep began.
class sweep_tracker {
 public:
  void saw(std::uint64_t trainer);
  // True when every one of `live` synced since the sweep began; the next sweep then begins. With
  // no identities known (`live` empty), `live_count` distinct trainers complete it.
  bool complete(const std::vector<std::uint64_t>& live, std::size_t live_count);
  std::size_t seen() const { return seen_.size(); }

 private:
  std::vector<std::uint64_t> seen_;
};

// ||a - b|| / max(||b||, 1e-12): how far a replica is from the central copy or the mean.
double relative_distance(const float* a, const float* b, std::size_t n);

// The final model of model averaging: the replicas' average, each weighted by the examples it
// trained, so a replica that trained nothing (restarted while the job drained) adds nothing.
// When none trained anything (a simulated job) every replica counts the same. Replicas are
// (parameters, examples); all of the first one's size.
struct weighted_replica {
  const std::vector<float>* params;
  std::uint64_t examples;
};
std::vector<float> average_by_examples(const std::vector<weighted_replica>& replicas);

}  // namespace ss::sync
