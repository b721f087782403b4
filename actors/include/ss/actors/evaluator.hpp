// Scores data files (test or validation) with a dense model and the rows on the shards (read-only lookups: a
// row the shards do not hold reads as its initial values and is not created).
//   spawn, then the evaluator sends (scored_atom, metrics summary, bad rows) or (unscored_atom, error text)
//   to `report_to` and quits.
// A shard that does not answer (killed, stopped, loading, away from the view) is waited for
// through the cluster view that `view_source` answers (view_atom -> wire::cluster_view), at most
// shard_wait, and asked again at its new address; scoring goes on from the batch it was at.
// Without a view_source, the shard is asked again at the address it had.
#pragma once

#include <caf/fwd.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ss/actors/actors.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/train/dense_model.hpp"

namespace ss::actors {

struct evaluator_input {
  job::job_options job;
  std::vector<std::string> files;  // scored in order
  std::string what = "test data";  // in messages
  std::shared_ptr<train::dense_model> model;
  std::vector<std::uint64_t> buckets;
  std::vector<std::string> shard_endpoints;
  double base_click_rate = 0;
  std::chrono::milliseconds shard_wait{90000};  // how long a shard may be away
};

evaluator_actor spawn_evaluator(caf::actor_system& sys, const gateway_actor& gateway, evaluator_input input,
                                const evaluator_listener_actor& report_to, const view_source_actor& view_source,
                                bool detached);

}  // namespace ss::actors
