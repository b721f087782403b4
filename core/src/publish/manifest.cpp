// Publications' names and manifests, digests of files and configurations
// (ss/core/publish/publication.hpp).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "publish_format.hpp"
#include "ss/core/checksum.hpp"
#include "ss/core/io/durable_file.hpp"
#include "ss/core/io/keyed_text.hpp"
#include "ss/core/model/dlrm_config.hpp"
#include "ss/core/publish/publication.hpp"

namespace ss::publish {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTitle = "shadowsync publication manifest";
constexpr std::size_t kSequenceDigits = 12;
constexpr const char* kBaseData = ".base.ssm";
constexpr const char* kDeltaData = ".delta.ssd";
constexpr const char* kBaseManifest = ".base.manifest";
constexpr const char* kDeltaManifest = ".delta.manifest";

// Every field a manifest has, in the order it is written.
const std::set<std::string>& known_keys() {
  static const std::set<std::string> keys = {
      "format_version", "job_id", "sequence", "kind", "base", "previous", "examples_trained", "train_click_rate", "wall_unix_ms",
      "data_file", "data_bytes", "data_crc32c", "tables", "dim", "dense_params", "config_digest", "rows",
      "tombstones", "row_encoding"};
  return keys;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A job id goes into file text as one field: printable, no spaces.
bool is_job_id(const std::string& id) {
  if (id.empty() || id.size() > 256) return false;
  for (char c : id)
    if (c <= 0x20 || c >= 0x7f) return false;
  return true;
}

}  // namespace

const char* to_string(publication_kind k) { return k == publication_kind::base ? "base" : "delta"; }

const char* to_string(row_encoding e) {
  switch (e) {
    case row_encoding::fp32: return "fp32";
    case row_encoding::int8: return "int8";
    case row_encoding::bf16: return "bf16";
    case row_encoding::fp16: return "fp16";
  }
  return "unknown";
}

result<row_encoding> parse_row_encoding(std::string_view word) {
  for (row_encoding e : {row_encoding::fp32, row_encoding::int8, row_encoding::bf16, row_encoding::fp16})
    if (word == to_string(e)) return e;
  return status(errc::invalid_argument,
                "row encoding '" + std::string(word) + "' is none of fp32, int8, bf16 and fp16");
}

std::string model_shape::describe() const {
  return std::to_string(tables) + " tables of dim " + std::to_string(dim) + ", " + std::to_string(dense_params) +
         " dense parameters";
}

std::string sequence_text(std::uint64_t sequence) {
  char b[32];
  std::snprintf(b, sizeof b, "%012llu", static_cast<unsigned long long>(sequence));
  return b;
}

std::string data_file_name(std::uint64_t sequence, publication_kind kind) {
  return sequence_text(sequence) + (kind == publication_kind::base ? kBaseData : kDeltaData);
}

std::string manifest_file_name(std::uint64_t sequence, publication_kind kind) {
  return sequence_text(sequence) + (kind == publication_kind::base ? kBaseManifest : kDeltaManifest);
}

std::optional<publish_file_name> parse_file_name(std::string_view name) {
  publish_file_name out;
  if (ends_with(name, ".tmp")) {
    out.is_tmp = true;
    name.remove_suffix(4);
  }
  if (name.size() <= kSequenceDigits) return std::nullopt;
  std::uint64_t sequence = 0;
  for (std::size_t i = 0; i < kSequenceDigits; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    sequence = sequence * 10 + static_cast<std::uint64_t>(name[i] - '0');
  }
  const std::string_view rest = name.substr(kSequenceDigits);
  if (rest == kBaseData) {
    out.kind = publication_kind::base;
  } else if (rest == kDeltaData) {
    out.kind = publication_kind::delta;
  } else if (rest == kBaseManifest) {
    out.kind = publication_kind::base;
    out.is_manifest = true;
  } else if (rest == kDeltaManifest) {
    out.kind = publication_kind::delta;
    out.is_manifest = true;
  } else {
    return std::nullopt;
  }
  out.sequence = sequence;
  return out;
}

std::string manifest_text(const manifest& m) {
  io::keyed_text_writer w(kTitle);
  w.add("format_version", std::to_string(m.format_version))
      .add("job_id", m.job_id)
      .add("sequence", std::to_string(m.sequence))
      .add("kind", to_string(m.kind))
      .add("base", std::to_string(m.base))
      .add("previous", std::to_string(m.previous))
      .add("examples_trained", std::to_string(m.examples_trained))
      .add("train_click_rate", io::exact(m.train_click_rate))
      .add("wall_unix_ms", std::to_string(m.wall_unix_ms))
      .add("data_file", m.data_file)
      .add("data_bytes", std::to_string(m.data_bytes))
      .add("data_crc32c", io::hex(m.data_crc32c, 8))
      .add("tables", std::to_string(m.shape.tables))
      .add("dim", std::to_string(m.shape.dim))
      .add("dense_params", std::to_string(m.shape.dense_params))
      .add("config_digest", io::hex(m.config_digest, 16))
      .add("rows", std::to_string(m.rows))
      .add("tombstones", std::to_string(m.tombstones))
      .add("row_encoding", to_string(m.encoding));
  return w.finish();
}

namespace {

// The fields once each is read: how they must agree with each other and with the file's name.
status check_consistent(const manifest& m, const std::string& what, const std::string& file_name) {
  auto bad = [&what](const std::string& why) { return status(errc::corrupt, what + ": " + why); };
  if (!is_job_id(m.job_id)) return bad("job_id '" + m.job_id + "' is not one printable word");
  if (m.sequence < first_sequence || m.sequence > max_sequence)
    return bad("sequence " + std::to_string(m.sequence) + " is outside 1 to " + std::to_string(max_sequence));
  const bool is_base = m.kind == publication_kind::base;
  if (is_base) {
    if (m.base != m.sequence)
      return bad("a base's base must be its own sequence (" + std::to_string(m.sequence) + "), not " +
                 std::to_string(m.base));
    if (m.previous != 0) return bad("a base's previous must be 0, not " + std::to_string(m.previous));
    if (m.tombstones != 0) return bad("a base has no tombstones, this one says " + std::to_string(m.tombstones));
    if (m.encoding != row_encoding::fp32)
      return bad("a base's manifest says fp32 (its model file names its rows' precision), this one says " +
                 std::string(to_string(m.encoding)));
  } else {
    if (m.base < first_sequence || m.base >= m.sequence)
      return bad("base " + std::to_string(m.base) + " is not below the sequence " + std::to_string(m.sequence));
    if (m.previous < m.base || m.previous >= m.sequence)
      return bad("previous " + std::to_string(m.previous) + " is not between its base " + std::to_string(m.base) +
                 " and its sequence " + std::to_string(m.sequence));
  }
  if (m.data_file != data_file_name(m.sequence, m.kind))
    return bad("data_file '" + m.data_file + "' is not " + data_file_name(m.sequence, m.kind));
  if (m.shape.tables > format::max_tables || m.shape.dim == 0 || m.shape.dim > format::max_dim ||
      m.shape.dense_params > format::max_dense_params)
    return bad("the shape (" + m.shape.describe() + ") is out of range");
  if (const auto name = parse_file_name(file_name); name && name->is_manifest && !name->is_tmp) {
    if (name->sequence != m.sequence || name->kind != m.kind)
      return bad("it describes " + manifest_file_name(m.sequence, m.kind) + " (sequence and kind disagree with "
                 "its file name)");
  }
  return status::ok();
}

}  // namespace

result<manifest> parse_manifest(const std::string& text, const std::string& file_name) {
  const std::string what = "manifest " + file_name;
  auto k = io::keyed_text::parse(text, what);
  if (!k.is_ok()) return k.error();
  for (const auto& key : k->keys())
    if (known_keys().count(key) == 0) return status(errc::corrupt, what + ": unknown field '" + key + "'");
  manifest m;
  SS_RETURN_IF_ERROR(k->one("format_version", m.format_version));
  if (m.format_version > manifest_format_version)
    return status(errc::version_mismatch, what + ": written by format version " + std::to_string(m.format_version) +
                                              ", this build reads " + std::to_string(manifest_format_version));
  if (m.format_version == 0) return status(errc::corrupt, what + ": format_version 0 is not a valid version");
  auto word = [&k](const std::string& key, std::string& out) -> status {
    auto f = k->fields(key);
    if (!f.is_ok()) return f.error();
    if (!f->next(out) || !f->done()) return {errc::corrupt, f->error()};
    return status::ok();
  };
  std::string kind, encoding;
  SS_RETURN_IF_ERROR(word("job_id", m.job_id));
  SS_RETURN_IF_ERROR(k->one("sequence", m.sequence));
  SS_RETURN_IF_ERROR(word("kind", kind));
  if (kind != "base" && kind != "delta")
    return status(errc::corrupt, what + ": kind has '" + kind + "' where base or delta belongs");
  m.kind = kind == "base" ? publication_kind::base : publication_kind::delta;
  SS_RETURN_IF_ERROR(k->one("base", m.base));
  SS_RETURN_IF_ERROR(k->one("previous", m.previous));
  SS_RETURN_IF_ERROR(k->one("examples_trained", m.examples_trained));
  SS_RETURN_IF_ERROR(k->one("train_click_rate", m.train_click_rate));
  SS_RETURN_IF_ERROR(k->one("wall_unix_ms", m.wall_unix_ms));
  SS_RETURN_IF_ERROR(word("data_file", m.data_file));
  SS_RETURN_IF_ERROR(k->one("data_bytes", m.data_bytes));
  SS_RETURN_IF_ERROR(k->one_hex("data_crc32c", m.data_crc32c));
  SS_RETURN_IF_ERROR(k->one("tables", m.shape.tables));
  SS_RETURN_IF_ERROR(k->one("dim", m.shape.dim));
  SS_RETURN_IF_ERROR(k->one("dense_params", m.shape.dense_params));
  SS_RETURN_IF_ERROR(k->one_hex("config_digest", m.config_digest));
  SS_RETURN_IF_ERROR(k->one("rows", m.rows));
  SS_RETURN_IF_ERROR(k->one("tombstones", m.tombstones));
  SS_RETURN_IF_ERROR(word("row_encoding", encoding));
  auto e = parse_row_encoding(encoding);
  if (!e.is_ok()) return status(errc::corrupt, what + ": row_encoding has '" + encoding + "' where fp32, int8, bf16 or fp16 belongs");
  m.encoding = *e;
  SS_RETURN_IF_ERROR(check_consistent(m, what, file_name));
  return m;
}

result<manifest> read_manifest(const fs::path& path) {
  auto text = io::read_file(path);
  if (!text.is_ok()) return text.error();
  return parse_manifest(*text, path.filename().string());
}

status write_manifest(const fs::path& dir, const manifest& m) {
  const std::string name = manifest_file_name(m.sequence, m.kind);
  const std::string text = manifest_text(m);
  // What a reader would refuse is never written.
  if (auto back = parse_manifest(text, name); !back.is_ok())
    return {errc::invalid_argument, "cannot publish: " + back.error().message()};
  std::error_code ec;
  const auto size = fs::file_size(dir / m.data_file, ec);
  if (ec)
    return {errc::invalid_argument, "cannot publish " + name + ": its data file " + (dir / m.data_file).string() +
                                        " cannot be read (" + ec.message() + ")"};
  if (size != m.data_bytes)
    return {errc::invalid_argument, "cannot publish " + name + ": its data file " + m.data_file + " has " +
                                        std::to_string(size) + " bytes, the manifest says " +
                                        std::to_string(m.data_bytes)};
  if (auto st = io::replace_file(dir / name, text); !st.is_ok())
    return st.with_context("publishing " + (dir / name).string());
  return status::ok();
}

result<file_digest> digest_file(const fs::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int err = errno;
    return status(err == ENOENT ? errc::not_found : errc::io_error,
                  path.string() + ": cannot open: " + std::strerror(err));
  }
  file_digest d;
  std::vector<unsigned char> buf(std::size_t{1} << 20);
  for (;;) {
    const std::size_t n = std::fread(buf.data(), 1, buf.size(), f);
    d.crc32c = crc32c(buf.data(), n, d.crc32c);
    d.bytes += n;
    if (n < buf.size()) break;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return status(errc::io_error, path.string() + ": read failed");
  return d;
}

std::uint64_t config_digest(std::string_view config_text) { return hash64(config_text.data(), config_text.size()); }

std::uint64_t model_config_digest(const job::job_options& job) {
  // The model options as built (an empty --bottom-mlp written out, as the model file records it),
  // the input's schema and the feature counts: what scoring a row depends on.
  job::model_options model = job.model;
  if (job.dense_features >= 0 && job.categorical_features >= 0) {
    auto setup = job::resolve_model(model, static_cast<std::uint32_t>(job.dense_features),
                                    static_cast<std::uint32_t>(job.categorical_features));
    if (setup.is_ok()) model.bottom_mlp = model::layer_list_text(setup->dlrm.bottom_mlp);
  }
  config::option_set opts("model", "the model a publication belongs to");
  job::add_model_options(opts, model);
  const std::string text = opts.effective_config() + "schema = " + job.input.schema + "\n" +
                           "dense_features = " + std::to_string(job.dense_features) + "\n" +
                           "categorical_features = " + std::to_string(job.categorical_features) + "\n";
  return config_digest(text);
}

}  // namespace ss::publish
