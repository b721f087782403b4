// Files that survive a crash or power loss: what snapshots, model files and shard checkpoints
// write. A file is durable once its bytes are fsynced; a new or renamed entry once its directory
// is fsynced too. replace_file() is the whole sequence: write a temporary beside it, fsync, rename
// over the target, fsync the directory; a reader sees the old file or the new one, never a mix.
#pragma once

#include <filesystem>
#include <string>

#include "ss/core/status.hpp"

namespace ss::io {

// Writes `bytes` to `path` (created or truncated) and fsyncs it. io_error names the file and the
// system's reason.
status write_file_synced(const std::filesystem::path& path, const std::string& bytes);

// fsyncs an existing file (one copied into place, say).
status sync_file(const std::filesystem::path& path);

// fsyncs a directory, so that entries created, renamed or removed in it are durable.
status sync_directory(const std::filesystem::path& dir);

// Replaces `path` with `bytes` atomically and durably (see above); the temporary is `path` + ".tmp".
status replace_file(const std::filesystem::path& path, const std::string& bytes);

// The whole file; not_found when it is missing, io_error when it cannot be read.
result<std::string> read_file(const std::filesystem::path& path);

}  // namespace ss::io
