// What a server loads from a publish directory, and what it applies next: the newest usable base
// and the unbroken run of deltas after it, with the reason the run stops where it does. Pure
// decisions over a scan of the directory (and reads of the data files to check them); counting
// the reasons is the caller's (chain_issue is the label).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ss/core/publish/publication.hpp"
#include "ss/core/status.hpp"

namespace ss::publish {

// Every manifest in a directory, parsed or not.
struct scanned_manifest {
  std::uint64_t sequence = 0;  // from the file name
  publication_kind kind = publication_kind::delta;
  std::string file_name;
  std::optional<manifest> parsed;  // absent when the manifest does not parse
  status error;                    // why it does not parse (ok when parsed)
};

struct directory_scan {
  std::filesystem::path dir;
  std::vector<scanned_manifest> manifests;  // by sequence, ascending (a base before a delta of the same)
  std::vector<std::string> debris;          // data files without a manifest, *.tmp: names, sorted
  std::uint64_t newest_sequence() const;    // of any manifest; 0 when there is none
};

// Lists dir; not_found when it does not exist, io_error when it cannot be read. Names that are not
// publication files are ignored.
result<directory_scan> scan(const std::filesystem::path& dir);

// Why a chain stops before the newest publication, or why a publication was passed over.
enum class chain_issue : std::uint8_t {
  no_base,       // no usable base in the directory
  gap,           // a sequence number is missing before newer publications
  bad_manifest,  // a manifest that does not parse
  bad_data,      // a data file missing, or of another size or CRC32C than its manifest says
  other_job,     // a publication of another job_id
  other_model,   // of another model shape or config digest
  broken_link,   // a delta whose base or previous is not where the chain stands
};
const char* to_string(chain_issue issue);  // "no_base", "gap", ... (a metrics label)

struct chain_problem {
  chain_issue issue = chain_issue::gap;
  std::uint64_t sequence = 0;  // the publication (or the missing sequence) it is about; 0 for no_base
  std::string message;         // names the directory, the file and what is wrong
};

// What the caller accepts. Empty fields accept any value of the base, and the deltas must then
// match the base.
struct chain_expectations {
  std::string job_id;
  std::optional<model_shape> shape;
  std::optional<std::uint64_t> config_digest;
  // Check a base's data file's CRC32C (reads it whole) or only its size (its reader verifies every
  // section when it loads it). Deltas are always checked whole.
  bool check_base_crc = true;
};

// What to load: a base and the deltas to apply on it, in order.
struct chain_plan {
  std::optional<manifest> base;  // absent: no usable base (stopped says why)
  std::vector<manifest> deltas;  // consecutive: deltas[i].previous is the one before, .base is base
  std::optional<chain_problem> stopped;  // why the chain ends before newest_sequence; absent when it reaches it
  std::vector<chain_problem> passed_over;  // newer bases refused, newest first
  std::uint64_t newest_sequence = 0;       // of any manifest in the directory

  std::uint64_t last_sequence() const;  // of the last delta, or of the base; 0 without a base
  std::uint64_t behind() const;         // newest_sequence - last_sequence(): publications not reached
};

// The newest base whose manifest parses, matches `expect` and whose data file checks out, then
// every delta after it while each is the next sequence, parses, matches, has base == the base and
// previous == the last one taken, and its data file checks out.
chain_plan plan(const directory_scan& scan, const chain_expectations& expect);

// Where a follower stands: the base it loaded and the last publication it applied.
struct follower_position {
  manifest base;
  std::uint64_t last_sequence = 0;
};

// What a follower does next.
struct follow_step {
  enum class action : std::uint8_t {
    up_to_date,    // nothing newer
    apply_deltas,  // apply `deltas` in order on the current model
    load_base,     // a newer base: load plan.base and plan.deltas instead
    stalled,       // newer publications exist but none can be taken: `stopped` says why
  };
  action what = action::up_to_date;
  std::vector<manifest> deltas;          // apply_deltas
  chain_plan plan;                       // load_base
  std::optional<chain_problem> stopped;  // apply_deltas, stalled: why it stops before the newest
  std::vector<chain_problem> passed_over;
  std::uint64_t newest_sequence = 0;
  std::uint64_t behind = 0;  // publications the follower will still not have after this step
};

// A newer base (after position.last_sequence) that is usable wins: load_base. Otherwise the
// deltas that continue the position's chain. `expect` empty fields are taken from position.base.
follow_step follow(const directory_scan& scan, const chain_expectations& expect, const follower_position& position);

}  // namespace ss::publish
