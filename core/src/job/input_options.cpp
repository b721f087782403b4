#include "ss/core/job/input_options.hpp"

#include <fstream>
#include <sstream>

namespace ss::job {

void add_input_options(config::option_set& opts, input_options& o) {
  opts.add("schema", &o.schema,
           "Input layout: 'criteo' (Kaggle TSV), 'avazu' (CSV with header), 'libsvm' (label index:value ..., "
           "every index an id of one feature) or a schema file (see docs/data-and-model.md: format, delimiter, header, "
           "label, dense, categorical, ignore; fields for libsvm and libffm).");
  opts.add("max-bad-fraction", &o.max_bad_fraction,
           "Stop with an error when more than this fraction of rows is malformed.")
      .range(0.0, 1.0);
  opts.add("bad-row-grace", &o.bad_row_grace,
           "Rows read before --max-bad-fraction is enforced (it is always checked at the end).");
}

result<data::input_schema> load_schema(const std::string& name_or_path) {
  if (name_or_path == "criteo") return data::input_schema::criteo();
  if (name_or_path == "avazu") return data::input_schema::avazu();
  if (name_or_path == "libsvm") return data::input_schema::libsvm();
  std::ifstream in(name_or_path);
  if (!in)
    return {errc::not_found,
            "schema '" + name_or_path + "' is neither 'criteo', 'avazu', 'libsvm' nor a readable file"};
  std::stringstream text;
  text << in.rdbuf();
  auto schema = data::parse_schema(text.str());
  if (!schema.is_ok()) return schema.error().with_context("schema file " + name_or_path);
  return schema;
}

result<data::batch_reader_options> reader_options(const input_options& o, const std::vector<std::string>& paths,
                                                  std::size_t batch_size) {
  auto schema = load_schema(o.schema);
  if (!schema.is_ok()) return schema.error();
  data::batch_reader_options r;
  r.schema = *schema;
  r.paths = paths;
  r.batch_size = batch_size;
  r.bad_rows.max_bad_fraction = o.max_bad_fraction;
  r.bad_rows.grace_rows = o.bad_row_grace;
  return r;
}

}  // namespace ss::job
