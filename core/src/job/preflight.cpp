#include "ss/core/job/preflight.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ss/core/data/batch_reader.hpp"
#include "ss/core/io/model_magic.hpp"

namespace ss::job {
namespace fs = std::filesystem;

namespace {

std::string directory_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}


// `inner` lies in `outer` (both absolute and normalized).
bool inside(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin(), i = inner.begin();
  for (; o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

// The absolute, normalized form of a path whose last component may not exist yet, with every
// symbolic link of the existing part resolved.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p).lexically_normal() : out;
}

}  // namespace

status check_writable_directory(const std::string& dir, const std::string& what) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return status(errc::not_found, what + ": the directory " + dir + " does not exist");
  std::string probe = (fs::path(dir) / ".shadowsync-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return status(errc::io_error, what + ": cannot create a file in " + dir + ": " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return status::ok();
}

status check_output_path(const std::string& path, const std::string& flag) {
  if (path.empty()) return status::ok();
  std::error_code ec;
  SS_RETURN_IF_ERROR(check_writable_directory(directory_of(path), flag + " " + path));
  if (fs::is_directory(path, ec))
    return status(errc::invalid_argument, flag + " " + path + " is a directory; give a file name");
  if (fs::exists(path, ec) && !io::starts_with_model_magic(path))
    return status(errc::invalid_argument, flag + " " + path + " exists and is not a model file; it is not replaced");
  return status::ok();
}

status check_input_files(const input_options& input, const std::vector<std::string>& paths, const std::string& flag,
                         std::size_t probe_rows) {
  for (const auto& path : paths) {
    auto options = reader_options(input, {path}, probe_rows);
    if (!options.is_ok()) return options.error().with_context(flag);
    options->bad_rows.max_bad_fraction = 1.0;  // count them here; the first rows decide
    auto reader = data::batch_reader::open(std::move(*options));
    if (!reader.is_ok()) return reader.error().with_context(flag + " " + path);
    data::example_batch batch;
    auto got = reader->next(batch);
    if (!got.is_ok()) return got.error().with_context(flag + " " + path);
    const auto& c = reader->counters();
    if (c.good == 0) {
      if (c.bad == 0)
        return status(errc::parse_error, flag + " " + path + ": the file has no rows");
      const auto& reports = reader->bad_row_reports();
      return status(errc::parse_error, flag + " " + path + ": none of its first " + std::to_string(c.bad) +
                                           " rows parse with the " + input.schema + " schema (" +
                                           (reports.empty() ? std::string("no detail") : reports.front()) +
                                           "); is this the right file, or does it need --schema?");
    }
  }
  return status::ok();
}

result<std::string> resolve_export_request(const std::string& requested, const std::string& export_dir,
                                           const std::vector<std::string>& protected_dirs) {
  if (requested.empty()) return status(errc::invalid_argument, "no path to export to");
  if (export_dir.empty())
    return status(errc::permission_denied, "this coordinator has no export directory (--export-dir): it writes no "
                                           "model on request");
  const fs::path base = resolved(export_dir);
  fs::path wanted(requested);
  if (wanted.is_relative()) wanted = base / wanted;
  const fs::path target = resolved(wanted);
  if (!inside(target, base))
    return status(errc::permission_denied, "export to " + requested + " refused: models are written only under the "
                                           "coordinator's --export-dir " + base.string());
  for (const auto& d : protected_dirs) {
    if (d.empty()) continue;
    if (inside(target, resolved(d)))
      return status(errc::permission_denied, "export to " + requested + " refused: it lies in the job's state (" +
                                             resolved(d).string() + ")");
  }
  std::error_code ec;
  if (fs::exists(target, ec) && !io::starts_with_model_magic(target.string()))
    return status(errc::permission_denied, "export to " + requested + " refused: " + target.string() +
                                           " exists and is not a model file (only a model file is replaced)");
  return target.string();
}

}  // namespace ss::job
