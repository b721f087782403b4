// How a command names its input data: files, schema, and the bad-row policy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ss/core/config/option_set.hpp"
#include "ss/core/data/batch_reader.hpp"
#include "ss/core/status.hpp"

namespace ss::job {

struct input_options {
  std::string schema = "criteo";  // criteo, avazu, or a schema file
  double max_bad_fraction = 0.01;
  std::uint64_t bad_row_grace = 1000;
};

void add_input_options(config::option_set& opts, input_options& o);

// "criteo", "avazu", or the contents of a schema file.
result<data::input_schema> load_schema(const std::string& name_or_path);

// Reader options for `paths` with batches of batch_size.
result<data::batch_reader_options> reader_options(const input_options& o, const std::vector<std::string>& paths,
                                                  std::size_t batch_size);

}  // namespace ss::job
