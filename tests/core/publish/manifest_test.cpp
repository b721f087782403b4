// Publications' names and manifests: round trips, and a precise refusal of every malformed or
// inconsistent manifest; file digests and configuration digests.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "publish_test_util.hpp"
#include "ss/core/checksum.hpp"
#include "ss/core/io/keyed_text.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/publish/publication.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

using namespace ss;
using namespace ss::publish;
using ss::test::contains;
using ss::test::read_file;
using ss::test::write_file;
namespace fs = std::filesystem;

namespace {

manifest sample_delta() {
  manifest m;
  m.job_id = "job-7f3a";
  m.sequence = 42;
  m.kind = publication_kind::delta;
  m.base = 40;
  m.previous = 41;
  m.examples_trained = 123456789;
  m.train_click_rate = 0.2512345678901234;
  m.wall_unix_ms = 1'700'000'123'456;
  m.data_file = "000000000042.delta.ssd";
  m.data_bytes = 98765;
  m.data_crc32c = 0xdeadbeef;
  m.shape = {26, 16, 54321};
  m.config_digest = 0x0123456789abcdefULL;
  m.rows = 4000;
  m.tombstones = 12;
  m.encoding = row_encoding::int8;
  return m;
}

// The manifest's text with `key`'s line replaced by `line` (dropped when empty), sealed with a
// valid crc line, so that the parser meets the change itself.
std::string edited(const manifest& m, const std::string& key, const std::string& line) {
  auto body = io::without_crc_line(manifest_text(m), "m");
  REQUIRE(body.is_ok());
  std::string out;
  std::size_t at = 0;
  bool found = false;
  while (at < body->size()) {
    const std::size_t end = body->find('\n', at);
    const std::string l = body->substr(at, end - at);
    at = end + 1;
    if (l.rfind(key + " = ", 0) == 0) {
      found = true;
      if (!line.empty()) out += line + "\n";
    } else {
      out += l + "\n";
    }
  }
  if (!found) out += line + "\n";
  return io::with_crc_line(out);
}

std::string refusal(const std::string& text, const std::string& name = "000000000042.delta.manifest") {
  auto m = parse_manifest(text, name);
  REQUIRE_FALSE(m.is_ok());
  CHECK(m.error().code() == errc::corrupt);
  return m.error().message();
}

}  // namespace

TEST_CASE("publish: file names carry the sequence in 12 digits and the kind", "[publish]") {
  CHECK(sequence_text(42) == "000000000042");
  CHECK(sequence_text(max_sequence) == "999999999999");
  CHECK(data_file_name(42, publication_kind::delta) == "000000000042.delta.ssd");
  CHECK(data_file_name(7, publication_kind::base) == "000000000007.base.ssm");
  CHECK(manifest_file_name(42, publication_kind::delta) == "000000000042.delta.manifest");
  CHECK(manifest_file_name(7, publication_kind::base) == "000000000007.base.manifest");

  for (std::uint64_t seq : {std::uint64_t{1}, std::uint64_t{42}, max_sequence}) {
    for (auto kind : {publication_kind::base, publication_kind::delta}) {
      auto d = parse_file_name(data_file_name(seq, kind));
      REQUIRE(d);
      CHECK(d->sequence == seq);
      CHECK(d->kind == kind);
      CHECK_FALSE(d->is_manifest);
      CHECK_FALSE(d->is_tmp);
      auto m = parse_file_name(manifest_file_name(seq, kind) + ".tmp");
      REQUIRE(m);
      CHECK(m->sequence == seq);
      CHECK(m->is_manifest);
      CHECK(m->is_tmp);
    }
  }
  for (const char* other : {"00000000042.delta.ssd", "x00000000042.delta.ssd", "000000000042.delta.ssdx",
                            "000000000042.other", "000000000042", "README", ".tmp", "000000000042.delta.ssd.tmp.tmp"})
    CHECK_FALSE(parse_file_name(other));
}

TEST_CASE("publish: a manifest round trips through its text", "[publish]") {
  const manifest m = sample_delta();
  const std::string text = manifest_text(m);
  CHECK(contains(text, "job_id = job-7f3a\n"));
  CHECK(contains(text, "data_crc32c = deadbeef\n"));
  CHECK(contains(text, "config_digest = 0123456789abcdef\n"));
  auto back = parse_manifest(text, "000000000042.delta.manifest");
  REQUIRE(back.is_ok());
  CHECK(manifest_text(*back) == text);
  CHECK(back->job_id == m.job_id);
  CHECK(back->sequence == 42);
  CHECK(back->kind == publication_kind::delta);
  CHECK(back->base == 40);
  CHECK(back->previous == 41);
  CHECK(back->examples_trained == m.examples_trained);
  CHECK(back->train_click_rate == m.train_click_rate);
  CHECK(back->wall_unix_ms == m.wall_unix_ms);
  CHECK(back->data_bytes == m.data_bytes);
  CHECK(back->data_crc32c == m.data_crc32c);
  CHECK(back->shape == m.shape);
  CHECK(back->config_digest == m.config_digest);
  CHECK(back->rows == m.rows);
  CHECK(back->tombstones == m.tombstones);
  CHECK(back->encoding == row_encoding::int8);

  manifest base = m;
  base.kind = publication_kind::base;
  base.base = 42;
  base.previous = 0;
  base.tombstones = 0;
  base.encoding = row_encoding::fp32;
  base.data_file = "000000000042.base.ssm";
  auto b = parse_manifest(manifest_text(base), "000000000042.base.manifest");
  REQUIRE(b.is_ok());
  CHECK(b->kind == publication_kind::base);
  CHECK(b->previous == 0);
}

TEST_CASE("publish: a malformed manifest is refused, naming the file and the field", "[publish]") {
  const manifest m = sample_delta();
  const std::string what = "manifest 000000000042.delta.manifest";
  CHECK(refusal(edited(m, "sequence", "sequence = x42")) == what + ": sequence has 'x42' where a number belongs");
  CHECK(refusal(edited(m, "rows", "")) == what + " has no 'rows'");
  CHECK(refusal(edited(m, "surprise", "surprise = 1")) == what + ": unknown field 'surprise'");
  CHECK(refusal(edited(m, "kind", "kind = full")) == what + ": kind has 'full' where base or delta belongs");
  CHECK(refusal(edited(m, "row_encoding", "row_encoding = fp8")) ==
        what + ": row_encoding has 'fp8' where fp32, int8, bf16 or fp16 belongs");
  for (const char* e : {"bf16", "fp16", "int8"})
    CHECK(parse_manifest(edited(m, "row_encoding", std::string("row_encoding = ") + e), "000000000042.delta.manifest")
              .is_ok());
  CHECK(refusal(edited(m, "data_crc32c", "data_crc32c = xyz")) == what + ": data_crc32c has 'xyz' where hex digits belong");
  CHECK(refusal(edited(m, "job_id", "job_id = two words")) == what + ": job_id has an unexpected field 'words'");
  CHECK(refusal(edited(m, "dim", "dim = 5000000000")) == what + ": dim has 5000000000, beyond 32 bits");
  CHECK(contains(refusal(edited(m, "dim", "dim = 0")), "the shape (26 tables of dim 0, 54321 dense parameters) is out of range"));
  CHECK(refusal(edited(m, "format_version", "format_version = 0")) == what + ": format_version 0 is not a valid version");
  auto newer = parse_manifest(edited(m, "format_version", "format_version = 2"), "000000000042.delta.manifest");
  CHECK(newer.error().code() == errc::version_mismatch);
  CHECK(newer.error().message() == what + ": written by format version 2, this build reads 1");

  // Cut short, or changed without its crc line following.
  const std::string text = manifest_text(m);
  CHECK(contains(refusal(text.substr(0, text.size() / 2)), "has no crc32c line"));
  std::string changed = text;
  changed[changed.find("rows = 4000")] = 'R';
  CHECK(contains(refusal(changed), "fails its checksum"));
  CHECK(contains(refusal(""), "has no crc32c line"));
}

TEST_CASE("publish: a manifest whose fields disagree is refused", "[publish]") {
  const manifest m = sample_delta();
  CHECK(contains(refusal(edited(m, "base", "base = 42")), "base 42 is not below the sequence 42"));
  CHECK(contains(refusal(edited(m, "previous", "previous = 39")), "previous 39 is not between its base 40"));
  CHECK(contains(refusal(edited(m, "data_file", "data_file = 000000000041.delta.ssd")),
                 "data_file '000000000041.delta.ssd' is not 000000000042.delta.ssd"));
  CHECK(contains(refusal(edited(m, "sequence", "sequence = 0")), "sequence 0 is outside 1 to 999999999999"));
  // Its file name says another publication.
  CHECK(contains(refusal(manifest_text(m), "000000000043.delta.manifest"), "describes 000000000042.delta.manifest"));
  CHECK(contains(refusal(manifest_text(m), "000000000042.base.manifest"), "describes 000000000042.delta.manifest"));

  manifest base = m;
  base.kind = publication_kind::base;
  base.base = 42;
  base.previous = 0;
  base.tombstones = 0;
  base.encoding = row_encoding::fp32;
  base.data_file = "000000000042.base.ssm";
  const std::string name = "000000000042.base.manifest";
  CHECK(contains(refusal(edited(base, "base", "base = 40"), name), "a base's base must be its own sequence (42), not 40"));
  CHECK(contains(refusal(edited(base, "previous", "previous = 41"), name), "a base's previous must be 0, not 41"));
  CHECK(contains(refusal(edited(base, "tombstones", "tombstones = 3"), name), "a base has no tombstones"));
  CHECK(contains(refusal(edited(base, "row_encoding", "row_encoding = int8"), name),
                 "a base's manifest says fp32 (its model file names its rows' precision), this one says int8"));
}

TEST_CASE("publish: write_manifest publishes durably and refuses what a reader would refuse", "[publish]") {
  test::temp_dir dir;
  manifest m = sample_delta();
  write_file(dir.path() / m.data_file, std::string(100, 'x'));
  m.data_bytes = 99;
  const status short_data = write_manifest(dir.path(), m);
  CHECK(short_data.code() == errc::invalid_argument);
  CHECK(contains(short_data.message(), "has 100 bytes, the manifest says 99"));
  m.data_bytes = 100;
  manifest bad = m;
  bad.job_id = "";
  CHECK(contains(write_manifest(dir.path(), bad).message(), "cannot publish: manifest 000000000042.delta.manifest"));
  bad = m;
  bad.sequence = 43;  // its data file name no longer matches
  CHECK(write_manifest(dir.path(), bad).code() == errc::invalid_argument);
  bad = m;
  bad.job_id = "new\nline";
  CHECK(write_manifest(dir.path(), bad).code() == errc::invalid_argument);
  CHECK_FALSE(fs::exists(dir.path() / "000000000042.delta.manifest"));

  REQUIRE(write_manifest(dir.path(), m).is_ok());
  CHECK_FALSE(fs::exists(dir.path() / "000000000042.delta.manifest.tmp"));
  auto back = read_manifest(dir.path() / "000000000042.delta.manifest");
  REQUIRE(back.is_ok());
  CHECK(manifest_text(*back) == manifest_text(m));
  fs::remove(dir.path() / m.data_file);
  CHECK(contains(write_manifest(dir.path(), m).message(), "cannot be read"));
  CHECK(read_manifest(dir.path() / "000000000001.delta.manifest").error().code() == errc::not_found);
}

TEST_CASE("publish: digest_file is the size and CRC32C of the whole file", "[publish]") {
  test::temp_dir dir;
  std::string bytes;
  for (int i = 0; i < 3'000'000; ++i) bytes.push_back(static_cast<char>(i * 7 + i / 1000));  // spans buffers
  write_file(dir.path() / "f", bytes);
  auto d = digest_file(dir.path() / "f");
  REQUIRE(d.is_ok());
  CHECK(d->bytes == bytes.size());
  CHECK(d->crc32c == crc32c(bytes.data(), bytes.size()));
  write_file(dir.path() / "empty", "");
  auto e = digest_file(dir.path() / "empty");
  REQUIRE(e.is_ok());
  CHECK(e->bytes == 0);
  CHECK(e->crc32c == 0);
  CHECK(digest_file(dir.path() / "missing").error().code() == errc::not_found);
}

TEST_CASE("publish: the config digest follows the model and the input, not the run's other settings", "[publish]") {
  job::job_options a;
  a.train = {"a.tsv"};
  a.dense_features = 3;
  a.categorical_features = 4;
  a.model.embedding_dim = 8;
  a.model.bottom_mlp = "";  // sized to the input
  const std::uint64_t digest = model_config_digest(a);

  job::job_options same = a;
  same.train = {"b.tsv", "c.tsv"};
  same.batch_size = 512;
  same.shards = 4;
  same.progress_interval = 1;
  CHECK(model_config_digest(same) == digest);
  job::job_options as_built = a;
  as_built.model.bottom_mlp = std::string(job::auto_bottom_hidden) + "-8";
  CHECK(model_config_digest(as_built) == digest);

  job::job_options other = a;
  other.model.embedding_dim = 16;
  CHECK(model_config_digest(other) != digest);
  other = a;
  other.model.seed = 2;  // unseen ids start elsewhere
  CHECK(model_config_digest(other) != digest);
  other = a;
  other.categorical_features = 5;
  CHECK(model_config_digest(other) != digest);
  other = a;
  other.input.schema = "avazu";
  CHECK(model_config_digest(other) != digest);

  CHECK(config_digest("x = 1\n") == config_digest("x = 1\n"));
  CHECK(config_digest("x = 1\n") != config_digest("x = 2\n"));
}
