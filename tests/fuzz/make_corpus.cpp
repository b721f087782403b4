// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/): valid frames of
// every message kind (the wire tests' samples), their bodies for fuzz_messages, rows of each
// schema, config texts, and delta files, manifests and names of a publish directory. Run by hand
// when a message or an input format changes:
//
//   build-fuzz/tests/fuzz/fuzz_make_corpus tests/fuzz/corpus [../shared/data/ctr]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../schema/wire_samples.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/publish/delta_file.hpp"
#include "ss/core/publish/publication.hpp"
#include "ss/wire/codec.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ss::wire;

void write(const fs::path& dir, const std::string& name, const void* data, std::size_t size) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
}
void write(const fs::path& dir, const std::string& name, char mode, const std::string& text) {
  std::string bytes(1, mode);
  bytes += text;
  write(dir, name, bytes.data(), bytes.size());
}

// The first `n` lines of a file, or "" when it cannot be read.
std::string head(const fs::path& file, int n) {
  std::ifstream in(file, std::ios::binary);
  std::string out, line;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
  return out;
}

// Body bytes of an encoded frame: what follows the envelope's body pointer (the encoder puts the
// body struct right after it), for fuzz_messages. Layout as fuzz_messages.cpp reads it.
std::vector<std::uint8_t> message_input(const envelope& e) {
  const frame f = encode(e);
  const std::uint64_t* seg = f->words() + 1;
  const std::uint64_t root = seg[0];
  const auto offset = static_cast<std::int32_t>(static_cast<std::uint32_t>(root)) >> 2;
  const std::size_t body_ptr = static_cast<std::size_t>(1 + offset) + static_cast<std::uint16_t>(root >> 32);
  std::vector<std::uint8_t> out = {static_cast<std::uint8_t>(e.message.index()), 0, 0, 0};
  const std::size_t segment_words = f->word_count() - 1;
  const auto* first = reinterpret_cast<const std::uint8_t*>(seg + body_ptr + 1);
  out.insert(out.end(), first, first + (segment_words - body_ptr - 1) * 8);
  return out;
}

// The bytes of a small delta file in `encoding` (rows in two tables, tombstones), written by the
// real writer through a temporary file; empty when it cannot be written.
std::string delta_bytes(const fs::path& scratch, ss::publish::row_encoding encoding, bool with_rows) {
  using namespace ss::publish;
  const fs::path path = scratch / "seed.ssd";
  const delta_head head{9, 4, 8, model_shape{3, 4, 6}, encoding};
  auto w = delta_writer::open(path.string(), head);
  if (!w.is_ok()) return {};
  const float dense[6] = {0.5f, -1.0f, 2.0f, 0.0f, 1e-3f, -7.5f};
  if (!w->write_dense(dense, 6).is_ok()) return {};
  if (with_rows) {
    const std::uint64_t ids[3] = {1, 77, 0xffffffffffffffffULL};
    const float values[12] = {0.1f, -0.2f, 0.3f, -0.4f, 0, 0, 0, 0, 100.0f, -50.0f, 25.0f, 1e-4f};
    if (!w->add_rows(0, ids, values, 3).is_ok() || !w->add_tombstones(2, ids, 2).is_ok() ||
        !w->add_rows(2, ids + 1, values + 4, 2).is_ok())
      return {};
  }
  if (!w->finish().is_ok()) return {};
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(path);
  return bytes;
}

// Seeds of fuzz_publish: delta files, manifests and file names of a publish directory.
void publish_seeds(const fs::path& out) {
  using namespace ss::publish;
  const fs::path dir = out / "fuzz_publish";
  fs::create_directories(dir);
  write(dir, "delta-fp32", 0, delta_bytes(dir, row_encoding::fp32, true));
  write(dir, "delta-int8", 0, delta_bytes(dir, row_encoding::int8, true));
  write(dir, "delta-dense-only", 0, delta_bytes(dir, row_encoding::fp32, false));
  manifest m;
  m.job_id = "job-1f2e";
  m.sequence = 42;
  m.kind = publication_kind::delta;
  m.base = 40;
  m.previous = 41;
  m.examples_trained = 1000000;
  m.wall_unix_ms = 1700000000000;
  m.data_file = data_file_name(42, publication_kind::delta);
  m.data_bytes = 4096;
  m.data_crc32c = 0x8badf00d;
  m.shape = {26, 16, 12345};
  m.config_digest = 0x0123456789abcdefULL;
  m.rows = 100;
  m.tombstones = 3;
  m.encoding = row_encoding::int8;
  write(dir, "manifest-delta", 1, manifest_text(m));
  m.kind = publication_kind::base;
  m.base = 42;
  m.previous = 0;
  m.tombstones = 0;
  m.encoding = row_encoding::fp32;
  m.data_file = data_file_name(42, publication_kind::base);
  write(dir, "manifest-base", 1, manifest_text(m));  // refused: the name says delta
  write(dir, "name-delta", 2, data_file_name(42, publication_kind::delta));
  write(dir, "name-manifest-tmp", 2, manifest_file_name(7, publication_kind::base) + ".tmp");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_make_corpus OUT_DIR [SAMPLE_DATA_DIR]\n");
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path samples = argc > 2 ? fs::path(argv[2]) : fs::path();

  std::vector<envelope> all = testing::one_of_each();
  {
    batch_message big;
    big.batch = testing::criteo_batch(16, 5);
    all.push_back(envelope{protocol_version, 3, big});
    all.push_back(envelope{protocol_version, 4, testing::lookup_reply_of(64, 16)});
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    const envelope& e = all[i];
    const std::string name = std::to_string(i) + "-" + message_name(e.message);
    const frame f = encode(e);
    write(out / "fuzz_frame", name, f->data(), f->size());
    const auto m = message_input(e);
    write(out / "fuzz_messages", name, m.data(), m.size());
  }
  {
    envelope other = all[0];
    other.version = protocol_version + 1;
    const frame f = encode(other);
    write(out / "fuzz_frame", "other-version", f->data(), f->size());
  }

  const fs::path rows = out / "fuzz_row_parser";
  std::string criteo = head(samples / "criteo" / "train-10k.txt", 4);
  criteo +=
      "1\t\t-3\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n"
      "2\t1\t2\n";
  write(rows, "criteo", 0, criteo);
  std::string avazu = head(samples / "avazu" / "train-10k", 4);
  if (avazu.empty()) avazu = "id,click,hour,C1,site_id\n1,0,14102100,1005,1fbe01fe\n";
  write(rows, "avazu", 1, avazu);
  write(rows, "csv", 2,
        "1,0,1.5,example.com,31,a|b|c,phone\n"
        "2,1,+2e3,,-4,,\n"
        "3,1,nan,x,1,|,d\n"
        "4,2,1,x,1,a,d\n");
  write(rows, "schema-csv", 3,
        "format = csv\ndelimiter = ;\nheader = true\nlabel = y\ndense = a, b\ncategorical = *\n"
        "ignore = id\nmulti_value_separator = |\n\nid;y;a;b;c;d\n1;1;0.5;2;x|y;z\n2;0;;;;\n");
  write(rows, "schema-criteo", 3, "format = criteo\n\n" + head(samples / "criteo" / "train-10k.txt", 2));
  write(rows, "schema-columns", 3,
        "header = false\ncolumns = label, n, c\nlabel = label\ndense = n\ncategorical = c\ndelimiter = tab\n\n"
        "1\t3\tabc\n0\t-1\t\n");

  const fs::path config = out / "fuzz_config";
  write(config, "ini", 0,
        "# comment\n; comment\ntop = 1\n[train]\nbatch-size = 256\nlr = 0.01  # note\n"
        "name = \"a # b\\n\\x41\"\n[common]\nlist = a, b, \"c,d\"\n");
  write(config, "quote", 1, "a \"value\" with # and ;\tand\n\x01\x7f");
  const std::string job_text = ss::job::job_config_text(ss::job::job_options{});
  write(config, "job-defaults", 2, job_text);
  write(config, "job-custom", 2,
        "[job]\ntrain = a.tsv, b.tsv.gz\nbatch-size = 512\nshards = 4\nsync = s-bmuf\n"
        "bmuf-momentum = 0.5\nheartbeat-interval = 0.25\n[common]\nunknown = 1\n");
  const char argv_text[] = "--batch-size\0" "64\0" "--sync=s-easgd\0" "--no-bmuf-nesterov\0"
                           "--train=x.tsv,y.tsv\0" "SHADOWSYNC_SHARDS=3\0" "file.tsv\0" "--\0" "--x";
  write(config, "options", 3, std::string(argv_text, sizeof argv_text - 1));
  write(config, "options-help", 3, std::string("--lr\0-h", 7));
  publish_seeds(out);
  std::printf("corpus written under %s\n", out.c_str());
  return 0;
}
