// Writes the cluster's model to a model file (core/model/model_file.hpp): the dense parameters it
// is given, then every embedding row, dumped from the shards page by page (read-only: training
// may go on meanwhile, and a row updated during the export is written as of its page).
//   spawn, then the exporter sends (exported_atom, body_ptr) to `report_to` — an export_reply, or
//   an error_reply saying what failed — and quits. A failed export leaves no file behind.
// A shard that does not answer (killed, stopped, loading) is waited for through the cluster view
// that `view_source` answers (view_atom -> wire::cluster_view), at most shard_wait; a shard that
// restarted is dumped again from its first row (the rows from its predecessor are taken back).
// Without a view_source, a shard that does not answer fails the export.
#pragma once

#include <caf/fwd.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "ss/actors/actors.hpp"
#include "ss/core/model_file/model_file.hpp"

namespace ss::actors {

struct exporter_input {
  std::string path;
  model::model_header header;
  std::vector<float> dense;
  std::vector<std::string> shard_endpoints;      // "" while absent
  std::vector<std::uint64_t> shard_incarnations;  // parallel (0: unknown)
  std::chrono::milliseconds timeout{30000};       // per page
  std::chrono::milliseconds shard_wait{60000};    // how long a shard may be away
  std::uint32_t page_rows = 65536;
};

exporter_actor spawn_exporter(caf::actor_system& sys, const gateway_actor& gateway, exporter_input input,
                              const exporter_listener_actor& report_to, const view_source_actor& view_source,
                              bool detached);

}  // namespace ss::actors
