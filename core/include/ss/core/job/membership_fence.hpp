// Which trainers' messages belong to a membership that is over.
//
// A trainer the coordinator dropped for silence (cut off, paused) may still be running: when it
// comes back it sends what it had queued (gradient pushes, sync rounds) and, until it learns that
// it was dropped, goes on training batches the readers have already handed to other trainers.
// Applying those would train the same examples twice. So every trainer registration holds a
// membership number; one that returns to a coordinator that went on without it gets a new one,
// and stamps what it sends with the membership of the batch (or round) it belongs to. A shard or
// sync server refuses what a trainer sends under a membership the view says is over: the trainer
// was dropped, or it holds a newer membership since.
//
// Not thread-safe: its owner serializes follow() and fenced().
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ss::job {

class membership_fence {
 public:
  // The trainers of the newest cluster view: the live ones (incarnations and memberships, in
  // parallel; memberships may be empty, from a coordinator that does not number them) and the
  // incarnations dropped for silence.
  void follow(const std::vector<std::uint64_t>& live, const std::vector<std::uint64_t>& memberships,
              const std::vector<std::uint64_t>& dropped);

  // Whether a message that trainer `incarnation` stamped with `membership` comes from a
  // membership that is over. Unstamped messages (either 0) and trainers the view does not name
  // (one that registered after it) pass.
  bool fenced(std::uint64_t incarnation, std::uint64_t membership) const;

  // The membership the view gives trainer `incarnation` (0: not live in it).
  std::uint64_t membership_of(std::uint64_t incarnation) const;

 private:
  std::unordered_map<std::uint64_t, std::uint64_t> live_;  // incarnation -> membership
  std::unordered_set<std::uint64_t> dropped_;
};

}  // namespace ss::job
