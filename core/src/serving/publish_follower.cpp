#include "ss/core/serving/publish_follower.hpp"

#include <utility>

#include "ss/core/model_file/model_file.hpp"
#include "ss/core/publish/delta_file.hpp"

namespace ss::serving {

result<model_update> read_delta(const std::filesystem::path& path, const publish::manifest& m) {
  auto reader = publish::delta_reader::open(path.string());
  if (!reader.is_ok()) return reader.error();
  const publish::delta_head& head = reader->head();
  if (head.sequence != m.sequence || head.base != m.base || head.previous != m.previous)
    return status(errc::corrupt, "delta file " + path.string() + ": its head says publication " +
                                     std::to_string(head.sequence) + " (base " + std::to_string(head.base) +
                                     ", previous " + std::to_string(head.previous) + "), its manifest " +
                                     std::to_string(m.sequence) + " (base " + std::to_string(m.base) + ", previous " +
                                     std::to_string(m.previous) + ")");
  model_update u;
  u.version = {m.sequence, m.examples_trained, m.wall_unix_ms};
  auto dense = reader->read_dense();
  if (!dense.is_ok()) return dense.error();
  u.dense = std::move(*dense);
  std::vector<table_update> tables(head.shape.tables);
  const std::size_t dim = head.shape.dim;
  SS_RETURN_IF_ERROR(reader->for_each_block(
      [&](std::uint32_t table, const std::uint64_t* ids, const float* values, std::size_t n) -> status {
        auto& t = tables[table];  // the reader checked table < tables
        t.ids.insert(t.ids.end(), ids, ids + n);
        t.values.insert(t.values.end(), values, values + n * dim);
        return status::ok();
      },
      [&](std::uint32_t table, const std::uint64_t* ids, std::size_t n) -> status {
        auto& t = tables[table];
        t.erased.insert(t.erased.end(), ids, ids + n);
        return status::ok();
      }));
  for (std::uint32_t t = 0; t < tables.size(); ++t) {
    if (tables[t].ids.empty() && tables[t].erased.empty()) continue;
    tables[t].table = t;
    u.tables.push_back(std::move(tables[t]));
  }
  return u;
}

publish_follower::publish_follower(std::filesystem::path dir, publish::chain_expectations expect)
    : dir_(std::move(dir)), expect_(std::move(expect)) {}

std::shared_ptr<served_model> publish_follower::model() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_;
}

follow_status publish_follower::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

std::map<std::string, std::uint64_t> publish_follower::problems() const {
  std::lock_guard<std::mutex> lock(mu_);
  return problems_;
}

void publish_follower::note(std::optional<follow_problem> problem) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto& was = status_.problem;
  if (problem && !(was && was->reason == problem->reason && was->sequence == problem->sequence))
    ++problems_[problem->reason];
  status_.problem = std::move(problem);
}

namespace {
std::optional<follow_problem> problem_of(const std::optional<publish::chain_problem>& stopped) {
  if (!stopped) return std::nullopt;
  return follow_problem{publish::to_string(stopped->issue), stopped->sequence, stopped->message};
}
}  // namespace

std::uint64_t publish_follower::apply_deltas(served_model& model, const std::vector<publish::manifest>& deltas,
                                             std::optional<follow_problem>& problem) {
  std::uint64_t applied = 0;
  for (const auto& d : deltas) {
    auto update = read_delta(dir_ / d.data_file, d);
    const ss::status st = update.is_ok() ? model.apply(*update) : update.error();
    if (!st.is_ok()) {
      problem = follow_problem{"bad_delta", d.sequence, st.message()};
      break;
    }
    position_->last_sequence = d.sequence;
    ++applied;
  }
  return applied;
}

bool publish_follower::load(const publish::manifest& base, const std::vector<publish::manifest>& deltas,
                            std::optional<follow_problem>& problem) {
  auto loaded = model::load_model((dir_ / base.data_file).string());
  if (!loaded.is_ok()) {
    problem = follow_problem{"bad_base", base.sequence, loaded.error().message()};
    return false;
  }
  // A new model object, brought up to date before it is served: the one served until then goes
  // when its last scorer leaves it.
  auto fresh = std::make_shared<served_model>(std::move(*loaded),
                                              model_version{base.sequence, base.examples_trained, base.wall_unix_ms});
  position_ = publish::follower_position{base, base.sequence};
  const std::uint64_t applied = apply_deltas(*fresh, deltas, problem);
  std::lock_guard<std::mutex> lock(mu_);
  model_ = std::move(fresh);
  ++status_.bases_loaded;
  status_.deltas_applied += applied;
  return true;
}

publish_follower::step publish_follower::poll() {
  step out;
  std::optional<follow_problem> problem;
  std::optional<publish::chain_problem> stopped;
  std::uint64_t newest = 0;
  auto found = publish::scan(dir_);
  if (!found.is_ok()) problem = follow_problem{"unreadable", 0, found.error().message()};
  if (found.is_ok() && !position_) {
    newest = found->newest_sequence();
    const publish::chain_plan plan = publish::plan(*found, expect_);
    stopped = plan.stopped;
    if (!plan.base && !stopped)
      stopped = publish::chain_problem{publish::chain_issue::no_base, 0, "publish directory " + dir_.string() + ": empty"};
    if (plan.base) out.new_model = out.new_version = load(*plan.base, plan.deltas, problem);
  } else if (found.is_ok()) {
    newest = found->newest_sequence();
    const publish::follow_step next = publish::follow(*found, expect_, *position_);
    stopped = next.stopped;
    if (next.what == publish::follow_step::action::load_base && next.plan.base) {
      out.new_model = out.new_version = load(*next.plan.base, next.plan.deltas, problem);
    } else if (next.what == publish::follow_step::action::apply_deltas) {
      const std::uint64_t applied = apply_deltas(*model(), next.deltas, problem);
      out.new_version = applied > 0;
      std::lock_guard<std::mutex> lock(mu_);
      status_.deltas_applied += applied;
    }
  }
  const std::uint64_t at = position_ ? position_->last_sequence : 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (found.is_ok()) status_.newest_sequence = newest;
    status_.behind = status_.newest_sequence > at ? status_.newest_sequence - at : 0;
    if (!problem && (status_.behind > 0 || !position_)) problem = problem_of(stopped);
  }
  note(std::move(problem));
  return out;
}

}  // namespace ss::serving
