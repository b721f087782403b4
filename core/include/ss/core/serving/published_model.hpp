// The newest model a publish directory holds, rebuilt as a model file's model (what `shadowsync
// predict --publish-dir` scores with): the newest usable base loaded, then every delta of its
// chain applied in order (rows written with zero optimizer state, erased rows removed, the dense
// parameters replaced). The same values as serve's model at that publication, so train::evaluate
// scores it exactly as the job scored the model it published.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "ss/core/model_file/model_file.hpp"
#include "ss/core/publish/chain.hpp"
#include "ss/core/status.hpp"

namespace ss::serving {

struct published_model {
  model::loaded_model model;  // stats.rows counts the rows after the deltas
  publish::manifest last;     // the publication it stands at (the base, or its last delta)
  std::uint64_t deltas = 0;   // applied on the base
  std::uint64_t behind = 0;   // newer publications the chain does not reach
  std::optional<publish::chain_problem> stopped;  // why, when behind > 0
};

// not_found without a usable base (the message says why: an empty directory, or each problem);
// a delta that does not read or apply is an error naming it (nothing half applied is returned).
result<published_model> load_published_model(const std::filesystem::path& dir,
                                             const publish::chain_expectations& expect = {});

}  // namespace ss::serving
