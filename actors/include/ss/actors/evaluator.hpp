// Scores test files with a final dense model and the rows on the shards (read-only lookups: a
// row the shards do not hold reads as its initial values and is not created).
//   spawn, then the evaluator sends (result_atom, metrics summary) or (result_atom, error text)
//   to `report_to` and quits.
#pragma once

#include <caf/fwd.hpp>

#include <memory>
#include <string>
#include <vector>

#include "ss/core/job/job_options.hpp"
#include "ss/core/train/dense_model.hpp"

namespace ss::actors {

struct evaluator_input {
  job::job_options job;
  std::shared_ptr<train::dense_model> model;
  std::vector<std::uint64_t> buckets;
  std::vector<std::string> shard_endpoints;
  double base_click_rate = 0;
};

caf::actor spawn_evaluator(caf::actor_system& sys, const caf::actor& gateway, evaluator_input input,
                           const caf::actor& report_to, bool detached);

}  // namespace ss::actors
