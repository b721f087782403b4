// Checks made before a job trains, so that a mistake in an output path or a test file costs
// seconds, not a whole training run whose model then cannot be written or scored.
#pragma once

#include <string>
#include <vector>

#include "ss/core/job/input_options.hpp"
#include "ss/core/status.hpp"

namespace ss::job {

// `dir` exists and this process can create a file in it (tried: a probe file is made and
// removed); messages start with `what`.
status check_writable_directory(const std::string& dir, const std::string& what);

// `path` (named by `flag` in messages, e.g. "--export") can be written: its directory exists and
// this process can create a file in it (tried: a probe file is made and removed), and the path is
// not a directory. An existing file there is replaced only when it is a model file (a typo must
// not overwrite training data).
status check_output_path(const std::string& path, const std::string& flag);

// Each of `paths` (named by `flag`, e.g. "--test") opens with the job's schema and its first rows
// parse: a missing, unreadable, empty or wrong-format file is an error naming the file and the
// first bad row. Reads at most `probe_rows` rows of each file.
status check_input_files(const input_options& input, const std::vector<std::string>& paths, const std::string& flag,
                         std::size_t probe_rows = 256);

// Where an export requested from outside (`shadowsync export --out P`) may write: P relative to
// `export_dir`, or absolute; either way, once its directory's symbolic links are resolved, inside
// `export_dir` and outside every directory of `protected_dirs` (the job's state: snapshots,
// shard data). An existing file there is replaced only when it is a model file. Returns the
// resolved path; permission_denied (with the rule that was broken) otherwise.
result<std::string> resolve_export_request(const std::string& requested, const std::string& export_dir,
                                           const std::vector<std::string>& protected_dirs);

}  // namespace ss::job
