#include "ss/core/serving/served_model.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <utility>

namespace ss::serving {

// An update's rows while they are written into the tables: per table, its ids sorted, each with
// its row in `values` or erased.
struct served_model::overlay {
  static constexpr std::uint32_t erased = std::numeric_limits<std::uint32_t>::max();
  struct table_rows {
    std::vector<std::uint64_t> ids;    // sorted
    std::vector<std::uint32_t> slots;  // parallel to ids: the row's place in values, or erased
    std::vector<float> values;         // the update's rows (a copy: scorers may outlive apply())
  };
  std::vector<table_rows> tables;  // by table index; empty for a table the update leaves alone

  // The row of (table, id) in the overlay: *row its values, nullptr when erased; false when the
  // overlay does not hold the id.
  bool find(std::uint32_t table, std::uint64_t id, std::uint32_t dim, const float** row) const {
    if (table >= tables.size()) return false;
    const auto& t = tables[table];
    const auto it = std::lower_bound(t.ids.begin(), t.ids.end(), id);
    if (it == t.ids.end() || *it != id) return false;
    const std::uint32_t slot = t.slots[static_cast<std::size_t>(it - t.ids.begin())];
    *row = slot == erased ? nullptr : t.values.data() + static_cast<std::size_t>(slot) * dim;
    return true;
  }
};

// What one version is made of. The tables are shared by the views of a model and written in place
// only while every view a scorer holds reads the rows being written from an overlay.
struct served_model::view {
  model_version version;
  std::shared_ptr<const train::dense_model> dense;
  std::shared_ptr<embedding::local_embeddings> store;
  std::shared_ptr<const overlay> pending;  // null: every row is read from the tables
};

namespace {

bool all_finite(const float* v, std::size_t n) { return train::non_finite_count(v, n) == 0; }

std::string describe_version(const model_version& v) { return "version " + std::to_string(v.sequence); }

// The same rows, values only: a row as the tables hold it (its optimizer state after the values,
// zero: a served model never trains).
void write_row(embedding::embedding_table& table, std::uint64_t id, const float* values, std::vector<float>& row) {
  row.assign(table.row_floats(), 0.0f);
  std::memcpy(row.data(), values, sizeof(float) * table.options().dim);
  const bool stored = table.put(id, row.data());
  (void)stored;  // check_update() made sure every row fits
}

}  // namespace

scoring_scratch::scoring_scratch(const served_model& model) : worker(model.config(), train::min_scoring_rows) {}

served_model::served_model(model::loaded_model model, model_version version)
    : header_(std::move(model.header)), job_(std::move(model.job)), setup_(std::move(model.setup)) {
  auto v = std::make_shared<view>();
  v->version = version;
  v->dense = std::shared_ptr<const train::dense_model>(std::move(model.dense));
  v->store = std::shared_ptr<embedding::local_embeddings>(std::move(model.embeddings));
  current_ = std::move(v);
}

served_model::~served_model() = default;

std::shared_ptr<const served_model::view> served_model::current() const {
  std::lock_guard<std::mutex> lock(view_mu_);
  return current_;
}

void served_model::publish(std::shared_ptr<const view> next) {
  std::shared_ptr<const view> old;
  {
    std::lock_guard<std::mutex> lock(view_mu_);
    old = std::exchange(current_, std::move(next));
  }
  std::lock_guard<std::mutex> lock(retired_mu_);
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(), [](const auto& w) { return w.expired(); }),
                 retired_.end());
  retired_.push_back(old);  // the writer's own reference goes at the end of this scope
}

void served_model::wait_for_retired_views() {
  std::vector<std::weak_ptr<const view>> waiting;
  {
    std::lock_guard<std::mutex> lock(retired_mu_);
    waiting = retired_;
  }
  for (const auto& w : waiting) {
    // Scorers hold a view for one call; a poll keeps scoring free of any signalling.
    while (!w.expired()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  // Scorers drop their views under released_mu_: taking it now, after every view expired, puts
  // their last reads before the writes to come (a fence would too, but ThreadSanitizer, which
  // checks this code, models mutexes and not fences).
  { std::lock_guard<std::mutex> released(released_mu_); }
  std::lock_guard<std::mutex> lock(retired_mu_);
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(), [](const auto& w) { return w.expired(); }),
                 retired_.end());
}

result<model_version> served_model::score(const data::example_batch& batch, scoring_scratch& scratch,
                                          std::vector<float>& probabilities) const {
  std::shared_ptr<const view> v = current();
  // Dropped under released_mu_ on every way out (wait_for_retired_views).
  struct drop_under {
    std::shared_ptr<const view>& held;
    std::mutex& mu;
    ~drop_under() {
      std::lock_guard<std::mutex> lock(mu);
      held.reset();
    }
  } drop{v, released_mu_};
  const auto& config = setup_.dlrm;
  SS_RETURN_IF_ERROR(train::check_batch(config, batch));
  train::prepare_rows(config, batch, setup_.buckets, scratch.worker);
  auto& rows = scratch.worker.rows;
  if (v->pending == nullptr) {
    SS_RETURN_IF_ERROR(v->store->peek(rows));  // what train::evaluate calls
  } else {
    // As peek, with the overlay's rows first: a row being written into the tables is never read
    // from them.
    rows.use_values();
    const std::uint32_t dim = config.embedding_dim;
    const auto& ptrs = rows.row_pointers();
    const auto& order = rows.by_table();
    const auto& ids = rows.table_ids();
    for (std::uint32_t t = 0; t < rows.tables(); ++t) {
      auto& table = v->store->table(t);
      scratch.fresh.resize(table.row_floats());
      scratch.missed_ids.clear();
      scratch.missed_rows.clear();
      for (std::size_t k = rows.table_begin(t); k < rows.table_begin(t + 1); ++k) {
        float* dst = ptrs[order[k]];
        const float* held = nullptr;
        if (!v->pending->find(t, ids[k], dim, &held)) {
          scratch.missed_ids.push_back(ids[k]);
          scratch.missed_rows.push_back(dst);
        } else if (held != nullptr) {
          std::memcpy(dst, held, sizeof(float) * dim);
        } else {  // erased: unseen again
          embedding::init_row(table.options(), ids[k], scratch.fresh.data());
          std::memcpy(dst, scratch.fresh.data(), sizeof(float) * dim);
        }
      }
      const std::size_t n = scratch.missed_ids.size();
      scratch.found.assign(n, nullptr);
      table.find_batch(scratch.missed_ids.data(), n, scratch.found.data(), scratch.lookup);
      for (std::size_t j = 0; j < n; ++j) {
        if (scratch.found[j] != nullptr) {
          std::memcpy(scratch.missed_rows[j], scratch.found[j], sizeof(float) * dim);
        } else {
          embedding::init_row(table.options(), scratch.missed_ids[j], scratch.fresh.data());
          std::memcpy(scratch.missed_rows[j], scratch.fresh.data(), sizeof(float) * dim);
        }
      }
    }
  }
  train::predict_batch(*v->dense, batch, rows, scratch.worker);
  const float* probs = scratch.worker.ws.probs.data();
  probabilities.assign(probs, probs + batch.size());
  return v->version;
}

status served_model::check_update(const view& now, const model_update& update) const {
  const std::string what = "update to " + describe_version(update.version);
  if (update.version.sequence <= now.version.sequence)
    return {errc::version_mismatch, what + ": not newer than the served " + describe_version(now.version)};
  if (update.dense) {
    const std::size_t want = now.dense->size();
    if (update.dense->size() != want)
      return {errc::invalid_argument, what + ": " + std::to_string(update.dense->size()) +
                                          " dense parameters, the model has " + std::to_string(want)};
    if (!all_finite(update.dense->data(), want))
      return {errc::invalid_argument, what + ": a dense parameter is not finite"};
  }
  const std::uint32_t tables = setup_.dlrm.num_sparse;
  const std::uint32_t dim = setup_.dlrm.embedding_dim;
  std::vector<bool> listed(tables, false);
  for (const auto& t : update.tables) {
    const std::string where = what + ": table " + std::to_string(t.table);
    if (t.table >= tables)
      return {errc::invalid_argument, where + " is out of range (the model has " + std::to_string(tables) + ")"};
    if (listed[t.table]) return {errc::invalid_argument, where + " is listed twice"};
    listed[t.table] = true;
    if (t.values.size() != t.ids.size() * dim)
      return {errc::invalid_argument, where + ": " + std::to_string(t.values.size()) + " values for " +
                                          std::to_string(t.ids.size()) + " rows of dim " + std::to_string(dim)};
    if (!all_finite(t.values.data(), t.values.size()))
      return {errc::invalid_argument, where + ": a row value is not finite"};
  }
  return status::ok();
}

result<std::shared_ptr<const served_model::overlay>> served_model::build_overlay(const model_update& update) const {
  auto o = std::make_shared<overlay>();
  o->tables.resize(setup_.dlrm.num_sparse);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> entries;
  for (const auto& t : update.tables) {
    entries.clear();
    entries.reserve(t.ids.size() + t.erased.size());
    for (std::size_t i = 0; i < t.ids.size(); ++i) entries.emplace_back(t.ids[i], static_cast<std::uint32_t>(i));
    for (const std::uint64_t id : t.erased) entries.emplace_back(id, overlay::erased);
    std::sort(entries.begin(), entries.end());
    auto& rows = o->tables[t.table];
    rows.ids.reserve(entries.size());
    rows.slots.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i > 0 && entries[i].first == entries[i - 1].first)
        return status(errc::invalid_argument, "update to " + describe_version(update.version) + ": table " +
                                                  std::to_string(t.table) + " lists id " +
                                                  std::to_string(entries[i].first) + " twice");
      rows.ids.push_back(entries[i].first);
      rows.slots.push_back(entries[i].second);
    }
    rows.values = t.values;
  }
  return std::shared_ptr<const overlay>(std::move(o));
}

void served_model::write_rows(embedding::local_embeddings& store, const model_update& update) {
  std::vector<float> row;
  const std::uint32_t dim = setup_.dlrm.embedding_dim;
  std::uint64_t erased = 0, written = 0;
  for (const auto& t : update.tables) {
    auto& table = store.table(t.table);
    for (const std::uint64_t id : t.erased) erased += table.erase(id) ? 1 : 0;  // erased first: room for new rows
    for (std::size_t i = 0; i < t.ids.size(); ++i) write_row(table, t.ids[i], t.values.data() + i * dim, row);
    written += t.ids.size();
  }
  rows_erased_.fetch_add(erased, std::memory_order_relaxed);
  rows_written_.fetch_add(written, std::memory_order_relaxed);
}

status served_model::apply(const model_update& update) {
  std::lock_guard<std::mutex> writer(writer_mu_);
  std::shared_ptr<const view> now = current();
  SS_RETURN_IF_ERROR(check_update(*now, update));
  auto next = std::make_shared<view>(*now);
  next->version = update.version;
  if (update.dense) {
    next->dense = std::make_shared<train::dense_model>(setup_.dlrm, optim::dense_optimizer{}, update.dense->data());
  }
  now.reset();  // the writer must not hold a view it waits for scorers to leave
  const bool rows_change = std::any_of(update.tables.begin(), update.tables.end(),
                                       [](const table_update& t) { return !t.ids.empty() || !t.erased.empty(); });
  if (!rows_change) {
    publish(std::move(next));
    updates_applied_.fetch_add(1, std::memory_order_relaxed);
    return status::ok();
  }
  auto pending = build_overlay(update);
  if (!pending.is_ok()) return pending.error();
  next->pending = *pending;
  const std::shared_ptr<embedding::local_embeddings> store = next->store;
  auto settled = std::make_shared<view>(*next);
  settled->pending = nullptr;
  // 1. Scorers read the update's rows from the overlay; 2. once none reads the tables without it,
  // the rows are written there; 3. the overlay goes.
  publish(std::move(next));
  wait_for_retired_views();
  write_rows(*store, update);
  publish(std::move(settled));
  updates_applied_.fetch_add(1, std::memory_order_relaxed);
  return status::ok();
}

status served_model::replace(model::loaded_model model, model_version version) {
  std::lock_guard<std::mutex> writer(writer_mu_);
  const std::shared_ptr<const view> now = current();
  if (version.sequence <= now->version.sequence)
    return {errc::version_mismatch, "model of " + describe_version(version) + ": not newer than the served " +
                                        describe_version(now->version)};
  if (model.setup.dlrm.describe() != setup_.dlrm.describe() || model.setup.buckets != setup_.buckets ||
      model.header.schema_text != header_.schema_text || model.job.input.schema != job_.input.schema)
    return {errc::invalid_argument, "model of " + describe_version(version) + ": its shape (" +
                                        model.setup.dlrm.describe() + ") or input schema differs from the served (" +
                                        setup_.dlrm.describe() + ")"};
  auto next = std::make_shared<view>();
  next->version = version;
  next->dense = std::shared_ptr<const train::dense_model>(std::move(model.dense));
  next->store = std::shared_ptr<embedding::local_embeddings>(std::move(model.embeddings));
  publish(std::move(next));
  models_replaced_.fetch_add(1, std::memory_order_relaxed);
  return status::ok();
}

model_version served_model::version() const { return current()->version; }

served_stats served_model::stats() const {
  const std::shared_ptr<const view> v = current();
  served_stats s;
  s.version = v->version;
  s.updates_applied = updates_applied_.load(std::memory_order_relaxed);
  s.models_replaced = models_replaced_.load(std::memory_order_relaxed);
  s.rows = v->store->total_rows();
  s.bytes = v->store->total_bytes();
  s.rows_written = rows_written_.load(std::memory_order_relaxed);
  s.rows_erased = rows_erased_.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(retired_mu_);
    for (const auto& w : retired_) s.retired_views += w.expired() ? 0 : 1;
  }
  return s;
}

}  // namespace ss::serving
