// The first bytes of a model file (model_file/model_file.hpp), kept below the job: the job's
// checks tell a model file from any other file without knowing the format.
#pragma once

#include <string>

namespace ss::io {

inline constexpr char model_magic[8] = {'S', 'S', 'M', 'O', 'D', 'E', 'L', '\0'};

// The file at `path` begins with model_magic (false when it cannot be read).
bool starts_with_model_magic(const std::string& path);

}  // namespace ss::io
