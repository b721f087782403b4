// The small DLRM the train tests use: 2 dense features, 3 tables of dim 4, MLPs 8-4 and 8-1.
#pragma once

#include "ss/core/model/dlrm.hpp"

namespace ss::train::testing {

inline model::dlrm_config tiny_config() {
  model::dlrm_config c;
  c.num_dense = 2;
  c.num_sparse = 3;
  c.embedding_dim = 4;
  c.bottom_mlp = {8, 4};
  c.top_mlp = {8, 1};
  return c;
}

}  // namespace ss::train::testing
