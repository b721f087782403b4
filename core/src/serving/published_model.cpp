#include "ss/core/serving/published_model.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "ss/core/serving/publish_follower.hpp"

namespace ss::serving {
namespace {

status apply_delta(model::loaded_model& m, const model_update& u, const std::string& what) {
  if (u.dense) {
    if (u.dense->size() != m.dense->size())
      return status(errc::corrupt, what + ": " + std::to_string(u.dense->size()) + " dense parameters, the base has " +
                                       std::to_string(m.dense->size()));
    std::memcpy(m.dense->params(), u.dense->data(), sizeof(float) * u.dense->size());
  }
  std::vector<float> row;
  for (const table_update& t : u.tables) {
    if (t.table >= m.setup.embeddings.tables)
      return status(errc::corrupt, what + ": table " + std::to_string(t.table) + " is beyond the model's " +
                                       std::to_string(m.setup.embeddings.tables));
    embedding::embedding_table& table = m.embeddings->table(t.table);
    const std::uint32_t dim = table.options().dim;
    if (t.values.size() != t.ids.size() * dim)
      return status(errc::corrupt, what + ": table " + std::to_string(t.table) + " has rows of another width");
    for (const std::uint64_t id : t.erased) table.erase(id);  // erased first, as a delta applies
    for (std::size_t i = 0; i < t.ids.size(); ++i) {
      row.assign(table.row_floats(), 0.0f);
      std::memcpy(row.data(), t.values.data() + i * dim, sizeof(float) * dim);
      if (!table.put(t.ids[i], row.data()))
        return status(errc::resource_exhausted, what + ": table " + std::to_string(t.table) + " is full");
    }
  }
  return status::ok();
}

}  // namespace

result<published_model> load_published_model(const std::filesystem::path& dir,
                                             const publish::chain_expectations& expect) {
  auto scanned = publish::scan(dir);
  if (!scanned.is_ok()) return scanned.error();
  const publish::chain_plan plan = publish::plan(*scanned, expect);
  if (!plan.base) {
    std::string why = plan.stopped ? plan.stopped->message : "no publication";
    for (const auto& p : plan.passed_over) why += "; " + p.message;
    return status(errc::not_found, "publish directory " + dir.string() + " has no usable base: " + why);
  }
  auto loaded = model::load_model((dir / plan.base->data_file).string());
  if (!loaded.is_ok()) return loaded.error();
  const publish::model_shape shape{loaded->header.tables, loaded->header.dim, loaded->header.dense_params};
  if (shape != plan.base->shape)
    return status(errc::corrupt, "base " + plan.base->data_file + " holds a model of " + shape.describe() +
                                     ", its manifest says " + plan.base->shape.describe());
  published_model out;
  out.model = std::move(*loaded);
  out.last = *plan.base;
  for (const publish::manifest& d : plan.deltas) {
    auto update = read_delta(dir / d.data_file, d);
    if (!update.is_ok()) return update.error();
    SS_RETURN_IF_ERROR(apply_delta(out.model, *update, "delta " + d.data_file));
    out.last = d;
    ++out.deltas;
  }
  out.model.header.train_examples = out.last.examples_trained;
  out.model.header.train_click_rate = out.last.train_click_rate;
  out.model.stats.rows = out.model.embeddings->total_rows();
  out.behind = plan.behind();
  out.stopped = plan.stopped;
  return out;
}

}  // namespace ss::serving
