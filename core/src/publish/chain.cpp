// Which publications a server loads and applies: plan() from nothing, follow() from where it
// stands (ss/core/publish/chain.hpp).
#include "ss/core/publish/chain.hpp"

#include <filesystem>
#include <map>
#include <utility>

#include "ss/core/io/hex.hpp"

namespace ss::publish {
namespace {

namespace fs = std::filesystem;

// The expectations with every field filled in (from a base, where the caller left them empty).
struct wanted {
  std::string job_id;
  std::optional<model_shape> shape;
  std::optional<std::uint64_t> config_digest;
  bool check_base_crc = true;
};

wanted filled(const chain_expectations& expect, const manifest& base) {
  wanted w{expect.job_id, expect.shape, expect.config_digest, expect.check_base_crc};
  if (w.job_id.empty()) w.job_id = base.job_id;
  if (!w.shape) w.shape = base.shape;
  if (!w.config_digest) w.config_digest = base.config_digest;
  return w;
}

wanted as_given(const chain_expectations& expect) {
  return wanted{expect.job_id, expect.shape, expect.config_digest, expect.check_base_crc};
}

chain_problem problem(chain_issue issue, std::uint64_t sequence, std::string message) {
  return chain_problem{issue, sequence, std::move(message)};
}

std::string where(const directory_scan& found, const std::string& name) { return (found.dir / name).string(); }

// Why publication `e` cannot be taken, whatever its place in the chain: its manifest, its job,
// its model, its data file. nullopt when it can.
std::optional<chain_problem> unusable(const directory_scan& found, const scanned_manifest& e, const wanted& w) {
  if (!e.parsed) return problem(chain_issue::bad_manifest, e.sequence, e.error.message());
  const manifest& m = *e.parsed;
  const std::string name = where(found, e.file_name);
  if (!w.job_id.empty() && m.job_id != w.job_id)
    return problem(chain_issue::other_job, e.sequence,
                   name + ": a publication of job '" + m.job_id + "', not of job '" + w.job_id + "'");
  if (w.shape && m.shape != *w.shape)
    return problem(chain_issue::other_model, e.sequence,
                   name + ": a model of " + m.shape.describe() + ", not of " + w.shape->describe());
  if (w.config_digest && m.config_digest != *w.config_digest)
    return problem(chain_issue::other_model, e.sequence,
                   name + ": a model of another configuration (config digest " + io::hex(m.config_digest, 16) +
                       ", not " + io::hex(*w.config_digest, 16) + ")");
  const fs::path data = found.dir / m.data_file;
  std::error_code ec;
  const auto size = fs::file_size(data, ec);
  if (ec)
    return problem(chain_issue::bad_data, e.sequence, name + ": its data file " + m.data_file + " cannot be read (" +
                                                           ec.message() + ")");
  if (size != m.data_bytes)
    return problem(chain_issue::bad_data, e.sequence,
                   name + ": its data file " + m.data_file + " has " + std::to_string(size) +
                       " bytes, the manifest says " + std::to_string(m.data_bytes) + " (truncated or replaced)");
  if (m.kind == publication_kind::delta || w.check_base_crc) {
    auto digest = digest_file(data);
    if (!digest.is_ok())
      return problem(chain_issue::bad_data, e.sequence,
                     name + ": its data file cannot be read (" + digest.error().message() + ")");
    if (digest->bytes != m.data_bytes || digest->crc32c != m.data_crc32c)
      return problem(chain_issue::bad_data, e.sequence,
                     name + ": its data file " + m.data_file + " fails its CRC32C (the manifest says " +
                         io::hex(m.data_crc32c, 8) + ", the file has " + io::hex(digest->crc32c, 8) + ")");
  }
  return std::nullopt;
}

// The newest base after `after` that can be taken; the newer ones refused go to passed_over.
const manifest* newest_base(const directory_scan& found, const wanted& w, std::uint64_t after,
                            std::vector<chain_problem>& passed_over) {
  for (auto e = found.manifests.rbegin(); e != found.manifests.rend() && e->sequence > after; ++e) {
    if (e->kind != publication_kind::base) continue;
    if (auto why = unusable(found, *e, w)) {
      passed_over.push_back(std::move(*why));
      continue;
    }
    return &*e->parsed;
  }
  return nullptr;
}

struct walked {
  std::vector<manifest> deltas;
  std::optional<chain_problem> stopped;
};

// The deltas that continue a chain standing at `last` on `base`, up to the first that cannot.
walked walk(const directory_scan& found, const wanted& w, const manifest& base, std::uint64_t last) {
  std::map<std::uint64_t, const scanned_manifest*> at;  // a delta wins over a base of the same number
  for (const auto& e : found.manifests) {
    if (e.sequence <= last) continue;
    auto [it, fresh] = at.emplace(e.sequence, &e);
    if (!fresh && e.kind == publication_kind::delta) it->second = &e;
  }
  walked out;
  const std::uint64_t newest = found.newest_sequence();
  for (std::uint64_t s = last + 1; s <= newest; ++s) {
    const auto it = at.find(s);
    if (it == at.end()) {
      out.stopped = problem(chain_issue::gap, s,
                            "publish directory " + found.dir.string() + ": publication " + sequence_text(s) +
                                " is missing (newer ones exist, up to " + sequence_text(newest) + ")");
      break;
    }
    const scanned_manifest& e = *it->second;
    if (auto why = unusable(found, e, w)) {
      out.stopped = std::move(why);
      break;
    }
    const manifest& m = *e.parsed;
    if (m.kind == publication_kind::base) {
      // A usable newer base would have been chosen instead: this one is not, and what follows builds on it.
      out.stopped = problem(chain_issue::broken_link, s,
                            where(found, e.file_name) + ": a base the chain cannot continue through");
      break;
    }
    if (m.base != base.sequence || m.previous != last) {
      out.stopped = problem(chain_issue::broken_link, s,
                            where(found, e.file_name) + ": builds on base " + sequence_text(m.base) + " after " +
                                sequence_text(m.previous) + ", the chain stands at base " +
                                sequence_text(base.sequence) + " after " + sequence_text(last));
      break;
    }
    out.deltas.push_back(m);
    last = s;
  }
  return out;
}

chain_plan plan_from(const directory_scan& found, const wanted& w, const manifest& base,
                     std::vector<chain_problem> passed_over) {
  chain_plan p;
  p.base = base;
  p.passed_over = std::move(passed_over);
  p.newest_sequence = found.newest_sequence();
  walked run = walk(found, w, base, base.sequence);
  p.deltas = std::move(run.deltas);
  p.stopped = std::move(run.stopped);
  return p;
}

}  // namespace

const char* to_string(chain_issue issue) {
  switch (issue) {
    case chain_issue::no_base: return "no_base";
    case chain_issue::gap: return "gap";
    case chain_issue::bad_manifest: return "bad_manifest";
    case chain_issue::bad_data: return "bad_data";
    case chain_issue::other_job: return "other_job";
    case chain_issue::other_model: return "other_model";
    case chain_issue::broken_link: return "broken_link";
  }
  return "unknown";
}

std::uint64_t chain_plan::last_sequence() const {
  if (!deltas.empty()) return deltas.back().sequence;
  return base ? base->sequence : 0;
}

std::uint64_t chain_plan::behind() const {
  const std::uint64_t last = last_sequence();
  return newest_sequence > last ? newest_sequence - last : 0;
}

chain_plan plan(const directory_scan& found, const chain_expectations& expect) {
  std::vector<chain_problem> passed_over;
  const manifest* base = newest_base(found, as_given(expect), 0, passed_over);
  if (base == nullptr) {
    chain_plan p;
    p.passed_over = std::move(passed_over);
    p.newest_sequence = found.newest_sequence();
    p.stopped = problem(chain_issue::no_base, 0,
                        "publish directory " + found.dir.string() + " has no usable base (" +
                            std::to_string(p.passed_over.size()) + " passed over, " +
                            std::to_string(found.manifests.size()) + " manifests)");
    return p;
  }
  return plan_from(found, filled(expect, *base), *base, std::move(passed_over));
}

follow_step follow(const directory_scan& found, const chain_expectations& expect, const follower_position& position) {
  const wanted w = filled(expect, position.base);
  follow_step step;
  step.newest_sequence = found.newest_sequence();
  if (step.newest_sequence <= position.last_sequence) return step;  // up to date
  if (const manifest* base = newest_base(found, w, position.last_sequence, step.passed_over)) {
    step.what = follow_step::action::load_base;
    step.plan = plan_from(found, w, *base, step.passed_over);
    step.stopped = step.plan.stopped;
    step.behind = step.plan.behind();
    return step;
  }
  walked run = walk(found, w, position.base, position.last_sequence);
  step.deltas = std::move(run.deltas);
  step.stopped = std::move(run.stopped);
  step.what = !step.deltas.empty() ? follow_step::action::apply_deltas
              : step.stopped       ? follow_step::action::stalled
                                   : follow_step::action::up_to_date;
  const std::uint64_t last = step.deltas.empty() ? position.last_sequence : step.deltas.back().sequence;
  step.behind = step.newest_sequence > last ? step.newest_sequence - last : 0;
  return step;
}

}  // namespace ss::publish
