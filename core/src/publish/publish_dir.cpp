// A publish directory as a whole: what it holds (scan), where numbering continues
// (next_sequence) and what may go (prune). ss/core/publish/publication.hpp, chain.hpp.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "ss/core/io/durable_file.hpp"
#include "ss/core/publish/chain.hpp"
#include "ss/core/publish/publication.hpp"

namespace ss::publish {
namespace {

namespace fs = std::filesystem;

bool before(const scanned_manifest& a, const scanned_manifest& b) {
  if (a.sequence != b.sequence) return a.sequence < b.sequence;
  return a.kind == publication_kind::base && b.kind == publication_kind::delta;
}

}  // namespace

std::uint64_t directory_scan::newest_sequence() const { return manifests.empty() ? 0 : manifests.back().sequence; }

result<directory_scan> scan(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return status(errc::not_found, "publish directory " + dir.string() + " does not exist");
  if (!fs::is_directory(dir, ec))
    return status(errc::invalid_argument, "publish directory " + dir.string() + " is not a directory");
  directory_scan out;
  out.dir = dir;
  std::set<std::pair<std::uint64_t, publication_kind>> with_manifest;
  std::vector<std::pair<std::string, publish_file_name>> data_files;
  fs::directory_iterator it(dir, ec);
  if (ec) return status(errc::io_error, "publish directory " + dir.string() + " cannot be listed: " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto parsed = parse_file_name(name);
    if (!parsed) continue;
    if (parsed->is_tmp) {
      out.debris.push_back(name);
    } else if (!parsed->is_manifest) {
      data_files.emplace_back(name, *parsed);
    } else {
      auto m = read_manifest(it->path());
      // A manifest that went between the listing and the read (pruned) is no publication any more.
      if (!m.is_ok() && m.error().code() == errc::not_found) continue;
      scanned_manifest s;
      s.sequence = parsed->sequence;
      s.kind = parsed->kind;
      s.file_name = name;
      if (m.is_ok()) {
        s.parsed = std::move(*m);
      } else {
        s.error = m.error();
      }
      with_manifest.emplace(s.sequence, s.kind);
      out.manifests.push_back(std::move(s));
    }
  }
  if (ec) return status(errc::io_error, "publish directory " + dir.string() + " cannot be listed: " + ec.message());
  for (const auto& [name, parsed] : data_files)
    if (with_manifest.count({parsed.sequence, parsed.kind}) == 0) out.debris.push_back(name);
  std::sort(out.manifests.begin(), out.manifests.end(), before);
  std::sort(out.debris.begin(), out.debris.end());
  return out;
}

result<next_publication> next_sequence(const fs::path& dir, const std::string& job_id, bool adopt_other_job) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return status(errc::io_error, "publish directory " + dir.string() + " cannot be created: " + ec.message());
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return status(errc::io_error, "publish directory " + dir.string() + " is not writable: " + std::strerror(errno));
  auto found = scan(dir);
  if (!found.is_ok()) return found.error();
  next_publication next;
  next.sequence = found->newest_sequence() + 1;
  if (next.sequence > max_sequence)
    return status(errc::resource_exhausted, "publish directory " + dir.string() + " has used every sequence number");
  for (auto m = found->manifests.rbegin(); m != found->manifests.rend(); ++m) {
    if (!m->parsed) continue;
    if (!next.newest) next.newest = m->parsed;
    if (m->kind == publication_kind::base) {
      next.newest_base = m->parsed;
      break;
    }
  }
  if (next.newest && next.newest->job_id != job_id && !adopt_other_job)
    return status(errc::already_exists, "publish directory " + dir.string() + ": its newest publication (" +
                                            manifest_file_name(next.newest->sequence, next.newest->kind) +
                                            ") belongs to job '" + next.newest->job_id + "', not '" + job_id +
                                            "' (publish to another directory, or adopt it explicitly)");
  return next;
}

namespace {

// The publications prune keeps: the newest `retain`, the newest base whose data file is there in
// full and all after it; then no delta whose base is not kept.
std::vector<bool> kept_publications(const directory_scan& found, std::size_t retain) {
  const std::size_t n = found.manifests.size();
  std::size_t keep_from = n > retain ? n - retain : 0;
  for (std::size_t i = n; i-- > 0;) {
    const auto& m = found.manifests[i];
    if (m.kind != publication_kind::base || !m.parsed) continue;
    std::error_code ec;
    const auto size = fs::file_size(found.dir / m.parsed->data_file, ec);
    if (ec || size != m.parsed->data_bytes) continue;
    keep_from = std::min(keep_from, i);
    break;
  }
  std::vector<bool> keep(n, false);
  std::set<std::uint64_t> kept_bases;
  for (std::size_t i = keep_from; i < n; ++i) {
    const auto& m = found.manifests[i];
    if (m.parsed && m.kind == publication_kind::delta && kept_bases.count(m.parsed->base) == 0) continue;
    keep[i] = true;
    if (m.kind == publication_kind::base) kept_bases.insert(m.sequence);
  }
  return keep;
}

}  // namespace

result<prune_stats> prune(const fs::path& dir, std::size_t retain) {
  if (retain == 0) return status(errc::invalid_argument, "prune: retain must be at least 1");
  auto found = scan(dir);
  if (!found.is_ok()) return found.error();
  prune_stats stats;
  const std::uint64_t newest = found->newest_sequence();
  if (newest == 0) return stats;
  auto remove = [&](const std::string& name) -> status {
    const fs::path p = dir / name;
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (!fs::remove(p, ec)) {
      if (!ec) return status::ok();  // already gone
      return {errc::io_error, "prune: cannot delete " + p.string() + ": " + ec.message()};
    }
    stats.bytes_freed += size == static_cast<std::uintmax_t>(-1) ? 0 : size;
    stats.removed.push_back(name);
    return status::ok();
  };
  const std::vector<bool> keep = kept_publications(*found, retain);
  for (std::size_t i = 0; i < found->manifests.size(); ++i) {
    if (keep[i]) continue;
    const auto& m = found->manifests[i];
    // The manifest first: the publication stops existing before its data goes.
    SS_RETURN_IF_ERROR(remove(m.file_name));
    SS_RETURN_IF_ERROR(remove(data_file_name(m.sequence, m.kind)));
    stats.publications_removed += 1;
  }
  for (const auto& name : found->debris) {
    const auto parsed = parse_file_name(name);
    if (!parsed || parsed->sequence > newest) continue;  // maybe a publish in progress
    SS_RETURN_IF_ERROR(remove(name));
    stats.debris_removed += 1;
  }
  if (!stats.removed.empty()) SS_RETURN_IF_ERROR(io::sync_directory(dir));
  return stats;
}

}  // namespace ss::publish
