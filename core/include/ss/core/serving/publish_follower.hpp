// Keeps a served model at the newest publication of a publish directory that can be taken
// (ss/core/publish/chain.hpp decides which): at first the newest usable base, loaded with the
// deltas after it; then each new delta applied as it appears, and a newer base loaded in place of
// the model when one is published. A publication that cannot be taken (a gap, a damaged file, one
// of another job or model) leaves the model at its last good version; status() says why and how
// far behind the newest publication that is.
//
// Thread-safety: poll() from one thread (the follower's); model(), status() and problems() from
// any.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "ss/core/publish/chain.hpp"
#include "ss/core/serving/served_model.hpp"
#include "ss/core/status.hpp"

namespace ss::serving {

// Why the follower is short of the newest publication.
struct follow_problem {
  // A publish::chain_issue label ("gap", "bad_data", ...), or "bad_base" (a base that does not
  // load), "bad_delta" (a delta that does not read or apply) or "unreadable" (the directory).
  std::string reason;
  std::uint64_t sequence = 0;  // the publication it is about (0: none)
  std::string message;         // names the directory, the file and what is wrong
};

struct follow_status {
  std::uint64_t newest_sequence = 0;      // of any manifest in the directory
  std::uint64_t behind = 0;               // publications newer than the version served
  std::optional<follow_problem> problem;  // why it is behind, when it is
  std::uint64_t bases_loaded = 0;
  std::uint64_t deltas_applied = 0;
};

// A delta file read into an update; its manifest gives the version. corrupt when its head is not
// the manifest's publication; the delta reader's errors otherwise.
result<model_update> read_delta(const std::filesystem::path& path, const publish::manifest& m);

class publish_follower {
 public:
  explicit publish_follower(std::filesystem::path dir, publish::chain_expectations expect = {});

  // One look at the directory, and what it calls for. `new_model`: a base was loaded (model() is
  // another object); `new_version`: the model moved on.
  struct step {
    bool new_model = false;
    bool new_version = false;
  };
  step poll();

  std::shared_ptr<served_model> model() const;  // null until a base loads
  follow_status status() const;
  // Problems met, by reason: each counted once, when first met (not at every poll after).
  std::map<std::string, std::uint64_t> problems() const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  // Loads a base and applies `deltas` on it, then serves it; false when the base does not load
  // (`problem` says why; the model served stays).
  bool load(const publish::manifest& base, const std::vector<publish::manifest>& deltas,
            std::optional<follow_problem>& problem);
  // Applies deltas in order until one fails (`problem` says why); returns how many it applied.
  std::uint64_t apply_deltas(served_model& model, const std::vector<publish::manifest>& deltas,
                             std::optional<follow_problem>& problem);
  // The problem of this poll (none: at the newest publication); counted when it is a new one.
  void note(std::optional<follow_problem> problem);

  const std::filesystem::path dir_;
  const publish::chain_expectations expect_;
  std::optional<publish::follower_position> position_;  // poll()'s thread only

  mutable std::mutex mu_;  // guards what follows
  std::shared_ptr<served_model> model_;
  follow_status status_;
  std::map<std::string, std::uint64_t> problems_;
};

}  // namespace ss::serving
