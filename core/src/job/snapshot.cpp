#include "ss/core/job/snapshot.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "ss/core/checksum.hpp"
#include "ss/core/io/byte_order.hpp"
#include "ss/core/io/durable_file.hpp"
#include "ss/core/io/keyed_text.hpp"

namespace ss::job {
namespace {

namespace fs = std::filesystem;

constexpr char dense_magic[8] = {'S', 'S', 'D', 'E', 'N', 'S', 'E', '2'};
constexpr char dense_magic_v1[8] = {'S', 'S', 'D', 'E', 'N', 'S', 'E', '1'};  // no optimizer state

status corrupt(const std::string& what) { return {errc::corrupt, what}; }

std::string counters_line(const trainer_counters& t) {
  return io::hex(t.incarnation, 16) + " " + std::to_string(t.examples) + " " + io::exact(t.loss_sum) + " " +
         std::to_string(t.clicks) + " " + io::exact(t.active_seconds);
}

status parse_counters(const io::keyed_text& text, const std::string& key, trainer_counters& t) {
  auto f = text.fields(key);
  if (!f.is_ok()) return f.error();
  if (!f->next_hex(t.incarnation) || !f->next(t.examples) || !f->next(t.loss_sum) || !f->next(t.clicks) ||
      !f->next(t.active_seconds) || !f->done())
    return corrupt(f->error());
  return status::ok();
}

// A followed file's name as one manifest field: '%' and bytes up to ' ' as %XX (a name may hold
// spaces or line breaks; the manifest's lines must not).
std::string escape_name(const std::string& name) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == '%' || c == 0x7f) {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

std::optional<std::string> unescape_name(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    unsigned value = 0;
    for (std::size_t k = 1; k <= 2; ++k) {
      const char d = text[i + k];
      if (d >= '0' && d <= '9') {
        value = value * 16 + static_cast<unsigned>(d - '0');
      } else if (d >= 'A' && d <= 'F') {
        value = value * 16 + static_cast<unsigned>(d - 'A' + 10);
      } else {
        return std::nullopt;
      }
    }
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

// A line position as five fields: file index, byte offset, line number, CRC of the line before, file size.
std::string position_line(const data::line_position& p) {
  return std::to_string(p.file_index) + " " + std::to_string(p.byte_offset) + " " + std::to_string(p.line_number) +
         " " + std::to_string(p.previous_line_crc) + " " + std::to_string(p.file_size);
}

bool next_position(io::value_fields& f, data::line_position& p) {
  return f.next(p.file_index) && f.next(p.byte_offset) && f.next(p.line_number) && f.next(p.previous_line_crc) &&
         f.next(p.file_size);
}

status parse_reader(const io::keyed_text& text, const std::string& key, reader_commit& r) {
  auto f = text.fields(key);
  if (!f.is_ok()) return f.error();
  std::uint32_t valid = 0;
  if (!f->next(valid) || !f->next(r.file_index) || !f->next(r.byte_offset) || !f->next(r.line_number) ||
      !f->next(r.examples) || !f->next(r.bad_rows))
    return corrupt(f->error());
  // The file check came later (a manifest without it resumes unchecked), and epochs after it (a
  // manifest without them is of a one-pass job, read in order).
  if (!f->at_end() && (!f->next(r.previous_line_crc) || !f->next(r.file_size))) return corrupt(f->error());
  if (!f->at_end() && (!f->next(r.epoch) || !f->next(r.window_batches))) return corrupt(f->error());
  // A followed input's file (a snapshot of a job over fixed files has none).
  if (!f->at_end()) {
    std::string name;
    if (!f->next(r.device) || !f->next(r.inode) || !f->rest(name)) return corrupt(f->error());
    auto decoded = unescape_name(name);
    if (!decoded) return corrupt("MANIFEST: " + key + ": bad file name '" + name + "'");
    r.file_name = std::move(*decoded);
  }
  if (!f->done()) return corrupt(f->error());
  r.valid = valid != 0;
  // Inside a shuffle window, or an inherited one (builds before them wrote neither).
  if (text.has(key + ".window")) {
    auto w = text.fields(key + ".window");
    if (!w.is_ok()) return w.error();
    if (!w->next(r.inherited) || !next_position(*w, r.window_end) || !w->done()) return corrupt(w->error());
  }
  return status::ok();
}

std::string progress_line(const data::file_progress& p) {
  return std::to_string(p.passes) + " " + std::to_string(p.at.byte_offset) + " " + std::to_string(p.at.line_number) +
         " " + std::to_string(p.at.previous_line_crc) + " " + std::to_string(p.at.file_size);
}

bool next_progress(io::value_fields& f, data::file_progress& p) {
  return f.next(p.passes) && f.next(p.at.byte_offset) && f.next(p.at.line_number) && f.next(p.at.previous_line_crc) &&
         f.next(p.at.file_size);
}

// reader_plan.window.J = readers reader epoch handed <start: file offset line crc size> n <n progress>
std::string window_line(const window_left& w) {
  std::string line = std::to_string(w.readers) + " " + std::to_string(w.reader) + " " + std::to_string(w.epoch) + " " +
                     std::to_string(w.handed) + " " + position_line(w.start) + " " + std::to_string(w.progress.size());
  for (const auto& p : w.progress) line += " " + progress_line(p);
  return line;
}

status parse_windows_left(const io::keyed_text& text, std::uint64_t files, std::vector<window_left>& out) {
  if (!text.has("reader_plan.windows")) return status::ok();
  auto f = text.fields("reader_plan.windows");
  if (!f.is_ok()) return f.error();
  std::uint64_t n = 0;
  if (!f->next(n) || !f->done()) return corrupt(f->error());
  if (n > files * 1024) return corrupt("MANIFEST: reader_plan.windows: implausible count " + std::to_string(n));
  out.resize(n);
  for (std::uint64_t j = 0; j < n; ++j) {
    const std::string key = "reader_plan.window." + std::to_string(j);
    auto line = text.fields(key);
    if (!line.is_ok()) return line.error();
    auto& w = out[j];
    std::uint64_t count = 0;
    if (!line->next(w.readers) || !line->next(w.reader) || !line->next(w.epoch) || !line->next(w.handed) ||
        !next_position(*line, w.start) || !line->next(count))
      return corrupt(line->error());
    if (w.readers == 0 || w.reader >= w.readers || w.handed == 0 || count > files ||
        (j > 0 && w.epoch < out[j - 1].epoch))
      return corrupt("MANIFEST: " + key + ": reader " + std::to_string(w.reader) + " of " + std::to_string(w.readers) +
                     ", epoch " + std::to_string(w.epoch + 1) + ", " + std::to_string(w.handed) + " batches handed out, " +
                     std::to_string(count) + " files: not a window a plan of " + std::to_string(files) + " files leaves");
    w.progress.resize(count);
    for (auto& p : w.progress)
      if (!next_progress(*line, p)) return corrupt(line->error());
    if (!line->done()) return corrupt(line->error());
  }
  return status::ok();
}

status parse_reader_plan(const io::keyed_text& text, reader_plan& plan) {
  if (!text.has("reader_plan")) return status::ok();  // the job kept its reader count
  auto f = text.fields("reader_plan");
  if (!f.is_ok()) return f.error();
  std::uint64_t files = 0;
  if (!f->next(plan.examples) || !f->next(plan.bad_rows) || !f->next(files) || !f->done()) return corrupt(f->error());
  if (files == 0 || files > 100000000) return corrupt("MANIFEST: reader_plan: implausible file count " + std::to_string(files));
  SS_RETURN_IF_ERROR(parse_windows_left(text, files, plan.windows));
  plan.files.resize(files);
  for (std::uint64_t i = 0; i < files; ++i) {
    auto line = text.fields("reader_plan." + std::to_string(i));
    if (!line.is_ok()) return line.error();
    auto& p = plan.files[i];
    if (!next_progress(*line, p) || !line->done()) return corrupt(line->error());
  }
  return status::ok();
}

status parse_shard(const io::keyed_text& text, const std::string& key, shard_checkpoint& s) {
  auto f = text.fields(key);
  if (!f.is_ok()) return f.error();
  if (!f->next(s.checkpoint) || !f->next(s.rows) || !f->next(s.bytes) || !f->next_hex(s.checksum) || !f->rest(s.path))
    return corrupt(f->error());
  return status::ok();
}

status parse_dense(const io::keyed_text& text, snapshot_manifest& m) {
  auto f = text.fields("dense");
  if (!f.is_ok()) return f.error();
  if (!f->next(m.dense_params) || !f->next(m.dense_momentum) || !f->next_hex(m.dense_crc) || !f->done())
    return corrupt(f->error());
  return status::ok();
}

}  // namespace

int shards_to_resume_on(const snapshot_manifest& m, int shards_flag) {
  if (m.shards_flag == 0 || static_cast<int>(m.shards_flag) != shards_flag) return shards_flag;
  return static_cast<int>(m.shards.size());
}

std::string encode_reshard_switch(const reshard_switch& s) {
  io::keyed_text_writer out("shadowsync reshard switch");
  out.add("job_id", io::hex(s.job_id, 16));
  out.add("from", std::to_string(s.from));
  out.add("to", std::to_string(s.to));
  out.add("base_snapshot", std::to_string(s.base_snapshot));
  return out.finish();
}

result<reshard_switch> decode_reshard_switch(const std::string& text) {
  auto kv = io::keyed_text::parse(text, "RESHARD");
  if (!kv.is_ok()) return kv.error();
  reshard_switch s;
  SS_RETURN_IF_ERROR(kv->one_hex("job_id", s.job_id));
  SS_RETURN_IF_ERROR(kv->one("from", s.from));
  SS_RETURN_IF_ERROR(kv->one("to", s.to));
  SS_RETURN_IF_ERROR(kv->one("base_snapshot", s.base_snapshot));
  const auto in_range = [](std::uint32_t n) { return n >= 1 && n <= embedding::max_shards; };
  if (!in_range(s.from) || !in_range(s.to) || s.from == s.to)
    return corrupt("RESHARD: a switch from " + std::to_string(s.from) + " to " + std::to_string(s.to) +
                   " shards (each 1 to " + std::to_string(embedding::max_shards) + ", and different)");
  return s;
}

std::string format_manifest(const snapshot_manifest& m) {
  io::keyed_text_writer out("shadowsync cluster snapshot");
  out.add("format", std::to_string(m.format));
  out.add("job_id", io::hex(m.job_id, 16));
  out.add("snapshot", std::to_string(m.snapshot_id));
  out.add("created_unix_ms", std::to_string(m.created_unix_ms));
  out.add("departed", counters_line(m.departed));
  out.add("trainers", std::to_string(m.trainers.size()));
  for (std::size_t i = 0; i < m.trainers.size(); ++i) out.add("trainer." + std::to_string(i), counters_line(m.trainers[i]));
  out.add("readers", std::to_string(m.readers.size()));
  for (std::size_t i = 0; i < m.readers.size(); ++i) {
    const auto& r = m.readers[i];
    out.add("reader." + std::to_string(i), std::string(r.valid ? "1" : "0") + " " + std::to_string(r.file_index) + " " +
                                               std::to_string(r.byte_offset) + " " + std::to_string(r.line_number) + " " +
                                               std::to_string(r.examples) + " " + std::to_string(r.bad_rows) + " " +
                                               std::to_string(r.previous_line_crc) + " " + std::to_string(r.file_size) +
                                               " " + std::to_string(r.epoch) + " " + std::to_string(r.window_batches) +
                                               (r.file_name.empty() ? std::string()
                                                                    : " " + std::to_string(r.device) + " " +
                                                                          std::to_string(r.inode) + " " +
                                                                          escape_name(r.file_name)));
    if (r.window_batches > 0 || r.inherited > 0)
      out.add("reader." + std::to_string(i) + ".window",
              std::to_string(r.inherited) + " " + position_line(r.window_end));
  }
  if (!m.read_plan.empty()) {
    const auto& plan = m.read_plan;
    out.add("reader_plan", std::to_string(plan.examples) + " " + std::to_string(plan.bad_rows) + " " +
                               std::to_string(plan.files.size()));
    for (std::size_t i = 0; i < plan.files.size(); ++i)
      out.add("reader_plan." + std::to_string(i), progress_line(plan.files[i]));
    if (!plan.windows.empty()) {
      out.add("reader_plan.windows", std::to_string(plan.windows.size()));
      for (std::size_t j = 0; j < plan.windows.size(); ++j)
        out.add("reader_plan.window." + std::to_string(j), window_line(plan.windows[j]));
    }
  }
  out.add("placement", m.placement);
  if (m.reshaped_from != 0) out.add("reshaped_from", std::to_string(m.reshaped_from));
  if (m.shards_flag != 0) out.add("shards_flag", std::to_string(m.shards_flag));
  out.add("shards", std::to_string(m.shards.size()));
  for (std::size_t i = 0; i < m.shards.size(); ++i) {
    const auto& s = m.shards[i];
    out.add("shard." + std::to_string(i), std::to_string(s.checkpoint) + " " + std::to_string(s.rows) + " " +
                                              std::to_string(s.bytes) + " " + io::hex(s.checksum, 16) + " " + s.path);
  }
  out.add("dense", std::to_string(m.dense_params) + " " + std::to_string(m.dense_momentum) + " " + io::hex(m.dense_crc, 8));
  out.add("job_crc", io::hex(m.job_crc, 8));
  return out.finish();
}

std::string encode_result(const stored_result& r) {
  return io::with_crc_line(r.json + "\n" + r.job_text + (r.job_text.empty() || r.job_text.back() == '\n' ? "" : "\n"));
}

result<stored_result> decode_result(const std::string& text) {
  auto body = io::without_crc_line(text, "the stored result");
  if (!body.is_ok())
    return status(errc::corrupt, body.error().message() + "; written by an older shadowsync, or damaged");
  stored_result r;
  const auto eol = body->find('\n');
  r.json = body->substr(0, eol);
  r.job_text = eol == std::string::npos ? std::string() : body->substr(eol + 1);
  if (r.json.empty() || r.json.front() != '{' || r.json.back() != '}')
    return status(errc::corrupt, "the stored result is not a JSON object");
  return r;
}

result<snapshot_manifest> parse_manifest(const std::string& text) {
  auto kv = io::keyed_text::parse(text, "MANIFEST");
  if (!kv.is_ok()) return kv.error();
  snapshot_manifest m;
  SS_RETURN_IF_ERROR(kv->one("format", m.format));
  if (m.format != snapshot_format)
    return status(errc::version_mismatch, "snapshot format " + std::to_string(m.format) + ", this build reads " +
                                              std::to_string(snapshot_format));
  SS_RETURN_IF_ERROR(kv->one_hex("job_id", m.job_id));
  SS_RETURN_IF_ERROR(kv->one("snapshot", m.snapshot_id));
  SS_RETURN_IF_ERROR(kv->one("created_unix_ms", m.created_unix_ms));
  SS_RETURN_IF_ERROR(parse_counters(*kv, "departed", m.departed));
  std::uint64_t trainers = 0, readers = 0, shards = 0;
  SS_RETURN_IF_ERROR(kv->one("trainers", trainers));
  SS_RETURN_IF_ERROR(kv->one("readers", readers));
  SS_RETURN_IF_ERROR(kv->one("shards", shards));
  m.placement = embedding::legacy_placement_scheme;  // manifests of builds before it was recorded
  if (kv->has("placement")) SS_RETURN_IF_ERROR(kv->one("placement", m.placement));
  if (kv->has("reshaped_from")) SS_RETURN_IF_ERROR(kv->one("reshaped_from", m.reshaped_from));
  if (kv->has("shards_flag")) SS_RETURN_IF_ERROR(kv->one("shards_flag", m.shards_flag));
  if (trainers > 1000000 || readers > 1000000 || shards > 1000000) return corrupt("MANIFEST: implausible counts");
  m.trainers.resize(trainers);
  for (std::uint64_t i = 0; i < trainers; ++i)
    SS_RETURN_IF_ERROR(parse_counters(*kv, "trainer." + std::to_string(i), m.trainers[i]));
  m.readers.resize(readers);
  for (std::uint64_t i = 0; i < readers; ++i) SS_RETURN_IF_ERROR(parse_reader(*kv, "reader." + std::to_string(i), m.readers[i]));
  SS_RETURN_IF_ERROR(parse_reader_plan(*kv, m.read_plan));
  m.shards.resize(shards);
  for (std::uint64_t i = 0; i < shards; ++i) SS_RETURN_IF_ERROR(parse_shard(*kv, "shard." + std::to_string(i), m.shards[i]));
  SS_RETURN_IF_ERROR(parse_dense(*kv, m));
  SS_RETURN_IF_ERROR(kv->one_hex("job_crc", m.job_crc));
  return m;
}

// The checksum at the end of dense.bin bytes (at least 4 of them).
std::uint32_t stored_crc(const std::string& dense_bytes) {
  return io::get_le<std::uint32_t>(reinterpret_cast<const unsigned char*>(dense_bytes.data()) + dense_bytes.size() -
                                   sizeof(std::uint32_t));
}

std::string encode_dense(const dense_state& d) {
  std::string out(dense_magic, sizeof dense_magic);
  // Little-endian, as the model file: a snapshot moves between hosts of either byte order.
  auto put_floats = [&out](const std::vector<float>& v) {
    io::append_le(out, static_cast<std::uint64_t>(v.size()));
    const std::size_t at = out.size();
    out.resize(at + v.size() * sizeof(float));
    io::encode_floats_le(v.data(), v.size(), reinterpret_cast<unsigned char*>(&out[at]));
  };
  put_floats(d.params);
  put_floats(d.momentum);
  io::append_le(out, d.optimizer_steps);
  put_floats(d.optimizer);
  io::append_le(out, crc32c(out.data(), out.size()));
  return out;
}

result<dense_state> decode_dense(const std::string& bytes) {
  if (bytes.size() < sizeof dense_magic + 2 * sizeof(std::uint64_t) + sizeof(std::uint32_t))
    return corrupt("dense.bin is truncated (" + std::to_string(bytes.size()) + " bytes)");
  const bool v1 = std::memcmp(bytes.data(), dense_magic_v1, sizeof dense_magic_v1) == 0;
  if (!v1 && std::memcmp(bytes.data(), dense_magic, sizeof dense_magic) != 0)
    return corrupt("dense.bin has neither the SSDENSE2 nor the SSDENSE1 magic");
  const auto* raw = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::uint32_t stored = stored_crc(bytes);
  const std::uint32_t actual = crc32c(bytes.data(), bytes.size() - sizeof stored);
  if (stored != actual) return corrupt("dense.bin fails its checksum (stored " + io::hex(stored, 8) + ", computed " + io::hex(actual, 8) + ")");
  dense_state d;
  std::size_t at = sizeof dense_magic;
  const std::size_t end = bytes.size() - sizeof stored;
  auto get_floats = [&](std::vector<float>& v) -> status {
    if (end - at < sizeof(std::uint64_t)) return corrupt("dense.bin is truncated");
    const auto n = io::get_le<std::uint64_t>(raw + at);
    at += sizeof n;
    if (n > (end - at) / sizeof(float)) return corrupt("dense.bin claims " + std::to_string(n) + " floats, more than it holds");
    v.resize(n);
    io::decode_floats_le(raw + at, n, v.data());
    at += n * sizeof(float);
    return status::ok();
  };
  SS_RETURN_IF_ERROR(get_floats(d.params));
  SS_RETURN_IF_ERROR(get_floats(d.momentum));
  if (!v1) {
    if (end - at < sizeof(std::uint64_t)) return corrupt("dense.bin is truncated");
    d.optimizer_steps = io::get_le<std::uint64_t>(raw + at);
    at += sizeof(std::uint64_t);
    SS_RETURN_IF_ERROR(get_floats(d.optimizer));
  }
  if (at != end) return corrupt("dense.bin has " + std::to_string(end - at) + " bytes after its data");
  return d;
}

namespace {

// Checks a snapshot's parts against its manifest.
result<loaded_snapshot> assemble(std::uint64_t id, const std::string& manifest_text, const std::string& dense_bytes,
                                 const std::string& job_text) {
  const std::string name = "snapshot " + std::to_string(id);
  auto m = parse_manifest(manifest_text);
  if (!m.is_ok()) return m.error().with_context(name);
  if (m->snapshot_id != id)
    return corrupt(name + ": its MANIFEST names snapshot " + std::to_string(m->snapshot_id));
  auto d = decode_dense(dense_bytes);
  if (!d.is_ok()) return d.error().with_context(name);
  const std::uint32_t dense_crc = stored_crc(dense_bytes);
  if (dense_crc != m->dense_crc || d->params.size() != m->dense_params || d->momentum.size() != m->dense_momentum)
    return corrupt(name + ": dense.bin is not the one its MANIFEST describes");
  if (crc32c(job_text.data(), job_text.size()) != m->job_crc) return corrupt(name + ": job.ini fails its checksum");
  loaded_snapshot s;
  s.manifest = std::move(*m);
  s.dense = std::move(*d);
  s.job_text = job_text;
  return s;
}

// Fills the checksums a manifest records about its parts.
void seal(snapshot_manifest& m, const std::string& dense_bytes, const dense_state& dense, const std::string& job_text) {
  m.dense_crc = stored_crc(dense_bytes);
  m.dense_params = dense.params.size();
  m.dense_momentum = dense.momentum.size();
  m.job_crc = crc32c(job_text.data(), job_text.size());
}

std::string snapshot_dir_name(std::uint64_t id) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "snapshot-%06" PRIu64, id);
  return buf;
}

class directory_store final : public snapshot_store {
 public:
  explicit directory_store(std::string dir) : dir_(std::move(dir)) {}

  std::string location() const override { return dir_; }
  std::string path_of(std::uint64_t id) const override { return (fs::path(dir_) / snapshot_dir_name(id)).string(); }

  result<std::vector<std::uint64_t>> list() override {
    std::vector<std::uint64_t> ids;
    std::error_code ec;
    if (!fs::exists(dir_, ec)) return ids;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      std::uint64_t id = 0;
      if (!parse_name(entry.path().filename().string(), id)) continue;
      if (fs::exists(entry.path() / "MANIFEST", ec)) ids.push_back(id);
    }
    if (ec) return status(errc::io_error, dir_ + ": " + ec.message());
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  status write(snapshot_manifest manifest, const dense_state& dense, const std::string& job_text) override {
    const fs::path dir = path_of(manifest.snapshot_id);
    std::error_code ec;
    if (fs::exists(dir / "MANIFEST", ec)) return {errc::invalid_argument, dir.string() + " exists already"};
    fs::remove_all(dir, ec);  // a half-made one from an earlier attempt
    fs::create_directories(dir, ec);
    if (ec) return {errc::io_error, dir.string() + ": " + ec.message()};
    const std::string dense_bytes = encode_dense(dense);
    SS_RETURN_IF_ERROR(io::write_file_synced(dir / "dense.bin", dense_bytes));
    SS_RETURN_IF_ERROR(io::write_file_synced(dir / "job.ini", job_text));
    seal(manifest, dense_bytes, dense, job_text);
    SS_RETURN_IF_ERROR(io::replace_file(dir / "MANIFEST", format_manifest(manifest)));
    return io::sync_directory(dir_);
  }

  result<loaded_snapshot> read(std::uint64_t id) override {
    const fs::path dir = path_of(id);
    std::error_code ec;
    if (!fs::exists(dir / "MANIFEST", ec))
      return status(errc::not_found, "snapshot " + std::to_string(id) + " is not in " + dir_);
    auto manifest = io::read_file(dir / "MANIFEST");
    if (!manifest.is_ok()) return manifest.error();
    auto dense = io::read_file(dir / "dense.bin");
    if (!dense.is_ok()) return corrupt("snapshot " + std::to_string(id) + ": " + dense.error().message());
    auto job = io::read_file(dir / "job.ini");
    if (!job.is_ok()) return corrupt("snapshot " + std::to_string(id) + ": " + job.error().message());
    return assemble(id, *manifest, *dense, *job);
  }

  status remove(std::uint64_t id) override {
    std::error_code ec;
    fs::remove_all(path_of(id), ec);
    if (ec) return {errc::io_error, path_of(id) + ": " + ec.message()};
    return status::ok();
  }

  result<std::size_t> remove_incomplete() override {
    std::size_t removed = 0;
    std::error_code ec;
    if (!fs::exists(dir_, ec)) return removed;
    std::vector<fs::path> doomed;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      std::uint64_t id = 0;
      if (parse_name(entry.path().filename().string(), id) && !fs::exists(entry.path() / "MANIFEST", ec))
        doomed.push_back(entry.path());
    }
    for (const auto& p : doomed) {
      fs::remove_all(p, ec);
      if (!ec) ++removed;
    }
    return removed;
  }

  status write_result(const stored_result& r) override {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    return io::replace_file(fs::path(dir_) / "RESULT.json", encode_result(r));
  }

  status write_job_id(std::uint64_t id) override {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return {errc::io_error, dir_ + ": " + ec.message()};
    return io::replace_file(fs::path(dir_) / "JOB_ID", io::hex(id, 16) + "\n");
  }

  result<std::uint64_t> read_job_id() override {
    auto text = io::read_file(fs::path(dir_) / "JOB_ID");
    if (!text.is_ok()) return text.error();
    char* end = nullptr;
    const std::uint64_t id = std::strtoull(text->c_str(), &end, 16);
    if (end == text->c_str() || id == 0) return corrupt(dir_ + "/JOB_ID does not hold a job id");
    return id;
  }

  status write_reshard_switch(const reshard_switch& r) override {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return {errc::io_error, dir_ + ": " + ec.message()};
    return io::replace_file(fs::path(dir_) / "RESHARD", encode_reshard_switch(r));
  }

  result<reshard_switch> read_reshard_switch() override {
    auto text = io::read_file(fs::path(dir_) / "RESHARD");
    if (!text.is_ok()) return text.error();
    auto r = decode_reshard_switch(*text);
    if (!r.is_ok()) return r.error().with_context(dir_ + "/RESHARD");
    return r;
  }

  status remove_reshard_switch() override {
    std::error_code ec;
    fs::remove(fs::path(dir_) / "RESHARD", ec);
    if (ec) return {errc::io_error, dir_ + "/RESHARD: " + ec.message()};
    return status::ok();
  }

  result<stored_result> read_result() override {
    auto text = io::read_file(fs::path(dir_) / "RESULT.json");
    if (!text.is_ok()) return text.error();
    auto r = decode_result(*text);
    if (!r.is_ok()) return r.error().with_context(dir_ + "/RESULT.json");
    return r;
  }

 private:
  static bool parse_name(const std::string& name, std::uint64_t& id) {
    const std::string prefix = "snapshot-";
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return false;
    for (std::size_t i = prefix.size(); i < name.size(); ++i)
      if (name[i] < '0' || name[i] > '9') return false;
    id = std::strtoull(name.c_str() + prefix.size(), nullptr, 10);
    return id > 0;
  }

  std::string dir_;
};

class memory_store final : public snapshot_store {
 public:
  std::string location() const override { return "memory"; }
  std::string path_of(std::uint64_t id) const override { return "memory/" + snapshot_dir_name(id); }
  result<std::vector<std::uint64_t>> list() override {
    std::vector<std::uint64_t> ids;
    for (const auto& [id, s] : snapshots_) ids.push_back(id);
    return ids;
  }
  status write(snapshot_manifest manifest, const dense_state& dense, const std::string& job_text) override {
    if (snapshots_.count(manifest.snapshot_id) > 0)
      return {errc::invalid_argument, path_of(manifest.snapshot_id) + " exists already"};
    stored s;
    s.dense = encode_dense(dense);
    s.job = job_text;
    seal(manifest, s.dense, dense, job_text);
    s.manifest = format_manifest(manifest);
    snapshots_[manifest.snapshot_id] = std::move(s);
    return status::ok();
  }
  result<loaded_snapshot> read(std::uint64_t id) override {
    auto it = snapshots_.find(id);
    if (it == snapshots_.end()) return status(errc::not_found, "snapshot " + std::to_string(id) + " is not in memory");
    return assemble(id, it->second.manifest, it->second.dense, it->second.job);
  }
  status remove(std::uint64_t id) override {
    snapshots_.erase(id);
    return status::ok();
  }
  result<std::size_t> remove_incomplete() override { return std::size_t{0}; }
  status write_result(const stored_result& r) override {
    result_ = encode_result(r);
    return status::ok();
  }
  result<stored_result> read_result() override {
    if (result_.empty()) return status(errc::not_found, "no result yet");
    return decode_result(result_);
  }
  status write_job_id(std::uint64_t id) override {
    job_id_ = id;
    return status::ok();
  }
  result<std::uint64_t> read_job_id() override {
    if (job_id_ == 0) return status(errc::not_found, "no job id yet");
    return job_id_;
  }
  status write_reshard_switch(const reshard_switch& r) override {
    switch_ = encode_reshard_switch(r);
    return status::ok();
  }
  result<reshard_switch> read_reshard_switch() override {
    if (switch_.empty()) return status(errc::not_found, "no reshard switch");
    return decode_reshard_switch(switch_);
  }
  status remove_reshard_switch() override {
    switch_.clear();
    return status::ok();
  }

 private:
  struct stored {
    std::string manifest, dense, job;
  };
  std::map<std::uint64_t, stored> snapshots_;
  std::string result_;
  std::uint64_t job_id_ = 0;
  std::string switch_;
};

}  // namespace

result<loaded_snapshot> latest_valid_snapshot(snapshot_store& store, std::vector<std::string>* skipped) {
  auto ids = store.list();
  if (!ids.is_ok()) return ids.error();
  std::vector<std::string> notes;
  for (auto it = ids->rbegin(); it != ids->rend(); ++it) {
    auto s = store.read(*it);
    if (s.is_ok()) {
      if (skipped != nullptr)
        for (auto& n : notes) skipped->push_back(n + "; using snapshot " + std::to_string(*it));
      return s;
    }
    notes.push_back(s.error().message());
  }
  if (skipped != nullptr)
    for (auto& n : notes) skipped->push_back(n + "; no older snapshot verifies");
  return status(errc::not_found, "no valid snapshot in " + store.location());
}

std::unique_ptr<snapshot_store> directory_snapshot_store(const std::string& dir) {
  return std::make_unique<directory_store>(dir);
}

std::unique_ptr<snapshot_store> memory_snapshot_store() { return std::make_unique<memory_store>(); }

}  // namespace ss::job
