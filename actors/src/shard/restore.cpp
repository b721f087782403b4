// What a starting shard serves: its stored rows, a checkpoint of the snapshot the job resumes
// from, or a refusal, when its storage is another job's, another shard's or damaged.
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "parts.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/io/hex.hpp"

namespace ss::actors::shard_parts {
namespace {

// Stored rows into the store, from the storage's reading threads at once. With a memory budget,
// only as many rows as fit are kept in RAM: the others stay in storage until looked up.
class store_loader {
 public:
  explicit store_loader(embedding::shard_store& store)
      : store_(store), keep_(store.tiered() ? store.options().max_rows_in_memory : ~0ULL) {}

  const embedding::row_visitor& load() const { return load_; }
  const embedding::row_visitor& unload() const { return unload_; }
  // What load() met.
  status error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bad_;
  }
  std::uint64_t rows() const { return rows_.load(); }

  // Once unload() was handed every row load() took: the store holds and counts none of them, and
  // loading may start over.
  void forget() {
    if (store_.tiered()) store_.set_held(std::vector<std::uint64_t>(store_.options().max_tables, 0));
    rows_ = 0;
    failed_ = false;
    std::lock_guard<std::mutex> lock(mu_);
    bad_ = status::ok();
  }

 private:
  embedding::shard_store& store_;
  const std::uint64_t keep_;
  std::atomic<std::uint64_t> rows_{0};
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  status bad_ = status::ok();
  const embedding::row_visitor load_ = [this](std::uint32_t t, std::uint64_t id, const float* row) {
    if (failed_.load(std::memory_order_relaxed)) return;
    status s = rows_.fetch_add(1, std::memory_order_relaxed) < keep_ ? store_.put(t, id, row) : store_.count_stored(t);
    if (s.is_ok()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.exchange(true)) bad_ = std::move(s);
  };
  const embedding::row_visitor unload_ = [this](std::uint32_t t, std::uint64_t id, const float*) {
    store_.forget_moved(t, id);
  };
};

// After the rows are in the store: the count restored, and the clock they were touched at goes on
// from where it was (a row TTL in examples).
status finish_load(embedding::shard_store& store, const embedding::durable_rows& storage, const store_loader& loader,
                   shard_counters& c) {
  SS_RETURN_IF_ERROR(loader.error());
  c.rows_restored.store(loader.rows(), std::memory_order_relaxed);
  if (auto clock = storage.get_meta(ttl_clock_key); clock.is_ok()) {
    char* end = nullptr;
    const unsigned long long now = std::strtoull(clock->c_str(), &end, 10);
    if (end == clock->c_str() || *end != '\0')
      return {errc::corrupt, "its stored row TTL clock \"" + *clock + "\" is not a number"};
    store.set_clock(static_cast<std::uint32_t>(now));
  }
  return status::ok();
}

// Takes back what a load that failed put into the store: every row storage holds now (the rows it
// loaded, and any it did not, which the store never had).
void unload_live(embedding::durable_rows& storage, store_loader& loader) {
  (void)storage.scan_concurrently(loader.unload());
  loader.forget();
}

// Reads every stored row (which verifies each record) into the store; a failure leaves the store
// without them.
status load(embedding::shard_store& store, embedding::durable_rows& storage, shard_counters& c) {
  store_loader loader(store);
  status loaded = storage.scan_concurrently(loader.load());
  if (loaded.is_ok()) loaded = finish_load(store, storage, loader, c);
  if (!loaded.is_ok()) unload_live(storage, loader);
  return loaded;
}

status claim(embedding::durable_rows& storage, const std::string& job_hex, const shard_options& o,
             std::uint32_t shards) {
  SS_RETURN_IF_ERROR(storage.set_meta("job_id", job_hex));
  SS_RETURN_IF_ERROR(storage.set_meta("placement", embedding::placement_scheme));
  return storage.set_meta("shard", shard_claim(o.index, shards));
}

status claim(embedding::durable_rows& storage, const std::string& job_hex, const shard_options& o) {
  return claim(storage, job_hex, o, o.shards);
}

// Rows this job placed by another scheme are on the wrong shards under this build's: refused, not
// served (lookups would find none of them). Storage claimed before the scheme was recorded placed
// rows by hash modulo the shard count.
status check_same_placement(const embedding::durable_rows& storage, const std::string& job_hex) {
  auto scheme = storage.get_meta("placement");
  std::string stored;
  if (scheme.is_ok()) {
    stored = *scheme;
  } else if (storage.get_meta("shard").is_ok()) {
    stored = embedding::legacy_placement_scheme;
  } else {
    return status::ok();  // never claimed
  }
  if (stored == embedding::placement_scheme) return status::ok();
  return status(errc::version_mismatch,
                "its storage holds rows of this job " + job_hex + " placed on the shards by \"" + stored +
                    "\" (an earlier build's placement), and this build places rows by \"" +
                    embedding::placement_scheme + "\": they would be served by the wrong shards; finish or resume "
                    "the job with the build that started it");
}

// Another shard's rows of this job (a data directory given to the wrong --index) would serve none
// of this shard's keys and lose that shard's: refused. Storage written before the claim existed
// passes. `shards`: the shard count the rows were placed under (the snapshot's, while the job
// resumes on another).
status check_same_shard(const embedding::durable_rows& storage, const std::string& job_hex, const shard_options& o,
                        std::uint32_t shards) {
  SS_RETURN_IF_ERROR(check_same_placement(storage, job_hex));
  auto owner = storage.get_meta("shard");
  if (!owner.is_ok() || *owner == shard_claim(o.index, shards)) return status::ok();
  return status(errc::not_found, "its storage holds the rows of shard " + *owner + " of this job " + job_hex +
                                     ", not of shard " + shard_claim(o.index, shards) +
                                     " (is its data directory another shard's, or its --index wrong?); the shard "
                                     "does not serve them: give it its own data directory");
}

// How checkpoint `id`'s rows become the store's: nothing to do (nullopt) when they are at its layout,
// a conversion when they are at another precision (a resume with another --row-precision), an
// error when they are not this model's rows at all. A checkpoint without a kept layout is taken
// for the store's own (the restore's check of its row size refuses it otherwise).
struct precision_change {
  embedding::row_layout from;
  embedding::row_conversion conversion;
};

result<std::optional<precision_change>> conversion_for(const embedding::shard_store& store,
                                                       const embedding::durable_rows& storage, std::uint64_t id) {
  auto words = storage.checkpoint_row_layout(id);
  if (!words.is_ok()) return words.error();
  const embedding::row_layout to = embedding::shard_row_layout_of(store.options());
  if (words->empty()) return std::optional<precision_change>();
  auto from = embedding::parse_row_layout(*words);
  if (!from.is_ok()) return from.error().with_context("checkpoint " + std::to_string(id));
  if (*from == to) return std::optional<precision_change>();
  if (!embedding::converts_to(*from, to))
    return status(errc::invalid_argument, "checkpoint " + std::to_string(id) + " holds rows of " + describe(*from) +
                                              ", and this job's are " + describe(to) + ": another model, not another "
                                              "precision");
  embedding::row_conversion c;
  c.from_layout = *words;
  c.from_row_floats = from->slots();
  c.convert = [from = *from, to](const float* in, float* out) { return embedding::convert_row(from, to, in, out); };
  c.refusal = "has a value beyond the range of " + std::string(embedding::to_string(to.precision)) +
              " (the rows cannot be converted to it; resume at " + embedding::to_string(from->precision) + ")";
  return std::optional<precision_change>(precision_change{*from, std::move(c)});
}

// Restores the newest checkpoint of job `job_hex` with an id <= `at_most` that verifies; logs each
// one skipped. Rows of another precision are converted (with a warning and a count).
result<std::uint64_t> restore_checkpoint(embedding::shard_store& store, embedding::durable_rows& storage,
                                         std::uint64_t at_most, const std::string& job_hex, const shard_options& o,
                                         std::uint32_t shards, shard_counters& c) {
  auto list = storage.checkpoints();
  if (!list.is_ok()) return list.error();
  if (at_most != ~0ULL && std::none_of(list->begin(), list->end(), [at_most](const auto& cp) { return cp.id == at_most; }))
    spdlog::error("{}: checkpoint {} is missing; trying an older one", o.name, at_most);
  store_loader loader(store);
  for (auto it = list->rbegin(); it != list->rend(); ++it) {
    if (it->id > at_most) continue;
    // One pass: the rows are loaded as the checkpoint is verified (a failed check takes them back).
    auto conversion = conversion_for(store, storage, it->id);
    status restored = conversion.is_ok() ? status::ok() : conversion.error();
    if (restored.is_ok() && *conversion) {
      spdlog::warn("{}: checkpoint {} holds rows of {}, the job's are {}: converting them (rounded to the nearest)",
                   o.name, it->id, describe((*conversion)->from), embedding::shard_row_layout(store.options()));
      restored = storage.restore_converting(it->id, (*conversion)->conversion, loader.load(), loader.unload());
    } else if (restored.is_ok()) {
      restored = storage.restore_loading(it->id, loader.load(), loader.unload());
    }
    if (restored.is_ok()) {
      // Another job's checkpoint is not this job's rows, nor another shard's this shard's.
      auto owner = storage.get_meta("job_id");
      if (owner.is_ok() && *owner != job_hex) restored = status(errc::not_found, "it holds rows of job " + *owner);
      if (restored.is_ok()) restored = check_same_shard(storage, job_hex, o, shards);
      if (restored.is_ok()) restored = finish_load(store, storage, loader, c);
      if (!restored.is_ok()) unload_live(storage, loader);
    } else {
      loader.forget();
    }
    if (restored.is_ok()) {
      c.rows_converted.store(conversion.is_ok() && *conversion ? loader.rows() : 0, std::memory_order_relaxed);
      return it->id;
    }
    spdlog::error("{}: checkpoint {} is unusable: {}; trying an older one", o.name, it->id, restored.message());
  }
  return status(errc::not_found, "no checkpoint" + (at_most == ~0ULL ? std::string() : " up to " + std::to_string(at_most)) +
                                     " verifies");
}

// The live rows cannot serve (`why`, logged): loads the newest checkpoint that verifies and says
// so with `note`. When none does, `none_left` turns that error into the shard's reason not to start.
result<std::string> newest_checkpoint_instead(embedding::shard_store& store, embedding::durable_rows& storage,
                                              const std::string& job_hex, const std::string& why,
                                              const std::string& note,
                                              const std::function<status(const status&)>& none_left,
                                              const shard_options& o, shard_counters& c) {
  spdlog::error("{}: {}; falling back to the newest checkpoint", o.name, why);
  auto id = restore_checkpoint(store, storage, ~0ULL, job_hex, o, o.shards, c);
  if (!id.is_ok()) return none_left(id.error());
  SS_RETURN_IF_ERROR(claim(storage, job_hex, o));
  return "rows of checkpoint " + std::to_string(*id) + " (" + note + "): " + std::to_string(c.rows_restored.load()) +
         " rows";
}

// Every row and every checkpoint of the storage goes (rows another job, or an earlier shape of this
// one, left there).
status clear_all(embedding::durable_rows& storage) {
  SS_RETURN_IF_ERROR(storage.clear());
  if (auto list = storage.checkpoints(); list.is_ok())
    for (const auto& cp : *list) (void)storage.drop(cp.id);
  return status::ok();
}

// A shard the snapshot did not have (the job resumes on more shards): it starts empty, and the
// rows it owns move in before training. Rows of this job its storage holds (an earlier attempt at
// the move, or an earlier shape of the job) are cleared; another job's are refused, as ever.
result<std::string> start_new_shard(embedding::durable_rows& storage, const std::string& job_hex,
                                    std::uint64_t restore_snapshot, std::uint32_t shape, const shard_options& o) {
  auto stored_job = storage.get_meta("job_id");
  if (stored_job.is_ok() && *stored_job != job_hex)
    return status(errc::not_found, "its storage holds rows of job " + *stored_job + ", not of this job " + job_hex +
                                       ", which resumes from snapshot " + std::to_string(restore_snapshot) +
                                       " on more shards (is its data directory another job's?); the shard neither "
                                       "clears them nor serves them: give it a data directory of its own");
  if (stored_job.is_ok() || storage.rows() > 0) {
    spdlog::warn("{}: clearing rows of this job left in its storage: it is a new shard of the job's new shape, and "
                 "takes its rows from the others", o.name);
    SS_RETURN_IF_ERROR(clear_all(storage));
  }
  SS_RETURN_IF_ERROR(claim(storage, job_hex, o));
  return "nothing yet: snapshot " + std::to_string(restore_snapshot) + " has " + std::to_string(shape) +
         " shards, the job " + std::to_string(o.shards) + "; its rows move in from them before training";
}

}  // namespace

std::string shard_claim(std::uint32_t index, std::uint32_t shards) {
  return std::to_string(index) + " of " + std::to_string(shards);
}

}  // namespace ss::actors::shard_parts

namespace ss::actors {
using namespace shard_parts;

result<std::string> restore_rows(embedding::shard_store& store, embedding::durable_rows& storage, std::uint64_t job_id,
                                 std::uint64_t restore_snapshot, std::uint32_t snapshot_shards, bool job_was_running,
                                 const shard_options& o, shard_counters& c) {
  const std::string job_hex = ss::io::hex(job_id, 16);
  // The shard count the snapshot's rows are placed under: the job's, unless it resumes on another.
  const std::uint32_t shape = restore_snapshot > 0 && snapshot_shards > 0 ? snapshot_shards : o.shards;
  auto stored_job = storage.get_meta("job_id");
  if (restore_snapshot > 0 && o.index >= shape) return start_new_shard(storage, job_hex, restore_snapshot, shape, o);
  if (stored_job.is_ok() && *stored_job == job_hex) {
    // Live rows claimed for the job's new count: an earlier attempt at moving the rows got as far
    // as taking them here. The checkpoint restored below replaces them (and is checked itself).
    auto same = check_same_shard(storage, job_hex, o, shape);
    if (!same.is_ok() && shape != o.shards && check_same_shard(storage, job_hex, o, o.shards).is_ok()) same = status::ok();
    SS_RETURN_IF_ERROR(same);
  }
  if (!stored_job.is_ok() && job_was_running && restore_snapshot == 0 && storage.live_damage().empty()) {
    // A restart into the running job with storage that never saw it: the rows are gone.
    const std::string why = "its storage holds nothing of this job, which is running (was its data directory "
                            "deleted or replaced?)";
    return newest_checkpoint_instead(store, storage, job_hex, why, "its storage had lost them", [&why](const status&) {
      return status(errc::not_found, why + ", and no checkpoint can replace its rows: the shard does not serve an "
                                           "empty table; restore its data directory and resume the job, or run "
                                           "it again from the start");
    }, o, c);
  }
  if (stored_job.is_ok() && *stored_job != job_hex && (job_was_running || restore_snapshot > 0)) {
    // A job that has rows somewhere, and this storage is another job's (its data directory
    // replaced, or pointed at another job's): neither clear that job's rows nor serve none.
    return status(errc::not_found,
                  "its storage holds rows of job " + *stored_job + ", not of this job " + job_hex + ", which " +
                      (restore_snapshot > 0 ? "resumes from snapshot " + std::to_string(restore_snapshot)
                                            : std::string("is running")) +
                      (restore_snapshot > 0 ? " (are the snapshots, or its data directory, another job's?)"
                                            : " (is its data directory another job's?)") +
                      "; the shard neither clears them nor serves an empty "
                      "table: give it this job's data directory, or run the job again from the start");
  }
  if (stored_job.is_ok() && *stored_job != job_hex) {
    spdlog::warn("{}: the storage holds rows of job {}, not of this job {}: clearing it", o.name, *stored_job, job_hex);
    SS_RETURN_IF_ERROR(clear_all(storage));
  }
  SS_RETURN_IF_ERROR(claim(storage, job_hex, o, shape));
  if (restore_snapshot > 0) {
    auto id = restore_checkpoint(store, storage, restore_snapshot, job_hex, o, shape, c);
    if (!id.is_ok() && stored_job.is_ok() && *stored_job == job_hex && storage.live_damage().empty()) {
      // No checkpoint of the snapshot is left, but the live rows are this job's, flushed after
      // the snapshot: newer, not lost. The examples since the snapshot are trained again.
      spdlog::error("{}: resuming from snapshot {}: {}; using its live rows instead (newer than the snapshot: the "
                    "examples since it are trained twice)", o.name, restore_snapshot, id.error().message());
      auto live = load(store, storage, c);
      if (live.is_ok())
        return "its live rows (no checkpoint of snapshot " + std::to_string(restore_snapshot) + " was left): " +
               std::to_string(c.rows_restored.load()) + " rows";
      return live.with_context("resuming from snapshot " + std::to_string(restore_snapshot) + ": " + id.error().message() +
                               ", and the live rows are unusable");
    }
    if (!id.is_ok()) return id.error().with_context("resuming from snapshot " + std::to_string(restore_snapshot));
    SS_RETURN_IF_ERROR(claim(storage, job_hex, o, shape));
    if (*id != restore_snapshot)
      return "rows of checkpoint " + std::to_string(*id) + " (checkpoint " + std::to_string(restore_snapshot) +
             " was missing or corrupt): " + std::to_string(c.rows_restored.load()) + " rows";
    return "rows of snapshot " + std::to_string(*id) + ": " + std::to_string(c.rows_restored.load()) + " rows";
  }
  if (const std::string damage = storage.live_damage(); !damage.empty()) {
    // Its rows are gone with the damaged database: an empty table is not the job's.
    return newest_checkpoint_instead(
        store, storage, job_hex, "its stored rows are unusable: " + damage, "the stored rows were unusable",
        [&damage](const status& none) {
          return none.with_context("its stored rows are unusable (" + damage +
                                   ") and no checkpoint can replace them; the shard does not serve an empty table");
        },
        o, c);
  }
  auto live = load(store, storage, c);
  if (live.is_ok()) return "its stored rows: " + std::to_string(c.rows_restored.load()) + " rows";
  return newest_checkpoint_instead(
      store, storage, job_hex, "the stored rows are unusable: " + live.message(), "the stored rows were unusable",
      [&live](const status& none) { return none.with_context("the stored rows are unusable (" + live.message() + ")"); },
      o, c);
}

}  // namespace ss::actors
