// Publishes the model of a running job to a publish directory (core/publish/publication.hpp) for
// `shadowsync serve`: a numbered delta (the rows changed since the last publication, from every
// shard, and all dense parameters) each time the coordinator asks, and a full base (a model file
// written by an exporter) first, every base_every deltas, when the rows of the deltas since the
// base add up to more bytes than the base's rows, and whenever a shard cannot say what changed (a shard process that
// started after the last base: publish_staging).
//   the coordinator sends (publish_atom, request); the publisher answers each with
//   (published_atom, outcome), one at a time, in order.
// Sequence numbers continue from what the directory holds (a restarted coordinator goes on), and
// a publication that fails is tried again under the same number: the shards stage its rows again
// for it (they are told the last number written), so no changed row is left out of the chain.
#pragma once

#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ss/actors/actors.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/publish/publication.hpp"
#include "ss/core/status.hpp"

namespace ss::actors {

struct publisher_options {
  std::string dir;
  std::string job_id;     // the manifests' job_id: the job's id, so a resumed job continues its chain
  job::job_options job;   // the model's shape, config digest and a base's header
  std::uint32_t base_every = 100;  // deltas between two bases
  std::uint32_t retain = 50;       // publications kept (publish::prune)
  publish::row_encoding encoding = publish::row_encoding::fp32;
  std::uint32_t page_rows = 65536;
  std::chrono::milliseconds timeout{10000};     // per shard request
  std::chrono::milliseconds shard_wait{60000};  // how long a base's export waits for a shard
  bool detached = true;  // false on the deterministic test scheduler
  std::function<std::int64_t()> wall_clock_ms;  // the manifests' wall time; null: the system clock
};

// The model as it stands, to publish.
struct publication_request {
  std::vector<float> dense;  // every dense parameter, as the final model would build them
  std::uint64_t examples_trained = 0;
  double click_rate = 0;     // the training click rate (a base's model header)
  std::vector<std::string> shard_endpoints;      // "" while absent
  std::vector<std::uint64_t> shard_incarnations;  // parallel (0: unknown)
  bool final = false;  // the job's last publication
};

struct publication_outcome {
  status result;  // ok, or why nothing was published this time
  std::uint64_t sequence = 0;
  publish::publication_kind kind = publish::publication_kind::delta;
  std::uint64_t rows = 0;
  std::uint64_t tombstones = 0;  // rows a delta says are gone
  std::uint64_t bytes = 0;
  std::uint64_t examples_trained = 0;
  double seconds = 0;
  std::uint64_t pruned = 0;  // publications pruned after it
  bool final = false;
};

// Fails (a status the coordinator reports at start) when the directory cannot be used: not
// writable, or holding another job's publications.
// Outcomes go to `report_to`; a base's export waits for a shard that is away through `view_source`.
result<publisher_actor> spawn_publisher(caf::actor_system& sys, const gateway_actor& gateway,
                                        const publisher_listener_actor& report_to, const view_source_actor& view_source,
                                        publisher_options options);

}  // namespace ss::actors
