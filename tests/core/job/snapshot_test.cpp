// The snapshot's dense.bin and MANIFEST formats: round trips (empty vectors included) and every
// damage the decoders must refuse with a message saying what is wrong.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "ss/core/checksum.hpp"
#include "ss/core/io/byte_order.hpp"
#include "ss/core/io/keyed_text.hpp"
#include "ss/core/job/snapshot.hpp"

using namespace ss;
using namespace ss::job;

namespace {

// The manifest `text` as a version that wrote less wrote it: reader.0's line ends after `kept`.
std::string with_reader_line_cut(const std::string& text, const std::string& kept) {
  std::string older = *io::without_crc_line(text, "MANIFEST");
  const auto at = older.find(kept);
  REQUIRE(at != std::string::npos);
  older.erase(at + kept.size(), older.find('\n', at) - at - kept.size());
  return io::with_crc_line(older);
}

}  // namespace

TEST_CASE("dense state round trips, with and without momentum and optimizer state", "[job][snapshot]") {
  for (const dense_state& d :
       {dense_state{{1.5f, -2.0f, 3.25f}, {}, {}, 0}, dense_state{{0.5f, 0.25f}, {0.125f, -1.0f}, {}, 0},
        dense_state{{0.5f, 0.25f}, {}, {0.01f, -0.02f, 1e-6f, 4e-7f}, 12345}, dense_state{{}, {}, {}, 0}}) {
    const std::string bytes = encode_dense(d);
    CHECK(bytes.size() == 8 + 8 + 4 * d.params.size() + 8 + 4 * d.momentum.size() + 8 + 8 + 4 * d.optimizer.size() + 4);
    auto back = decode_dense(bytes);
    REQUIRE(back.is_ok());
    CHECK(back->params == d.params);
    CHECK(back->momentum == d.momentum);
    CHECK(back->optimizer == d.optimizer);
    CHECK(back->optimizer_steps == d.optimizer_steps);
  }
}

TEST_CASE("a dense.bin of the format before optimizer state reads as a snapshot without it", "[job][snapshot]") {
  // SSDENSE1: the params and the momentum, then the checksum.
  std::string v1("SSDENSE1", 8);
  ss::io::append_le(v1, std::uint64_t{2});
  const float params[2] = {0.75f, -1.5f};
  unsigned char raw[sizeof params];
  ss::io::encode_floats_le(params, 2, raw);
  v1.append(reinterpret_cast<const char*>(raw), sizeof raw);
  ss::io::append_le(v1, std::uint64_t{0});
  ss::io::append_le(v1, ss::crc32c(v1.data(), v1.size()));
  auto back = decode_dense(v1);
  REQUIRE(back.is_ok());
  CHECK(back->params == std::vector<float>{0.75f, -1.5f});
  CHECK(back->optimizer.empty());
  CHECK(back->optimizer_steps == 0);
}

TEST_CASE("damaged dense state is refused with a message saying why", "[job][snapshot]") {
  const std::string good = encode_dense(dense_state{{1.0f, 2.0f, 3.0f}, {}});
  std::string flipped = good;
  flipped[12] ^= 0x01;
  auto r = decode_dense(flipped);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().message().find("checksum") != std::string::npos);

  auto truncated = decode_dense(good.substr(0, good.size() - 7));
  REQUIRE_FALSE(truncated.is_ok());

  std::string wrong_magic = good;
  wrong_magic[0] = 'X';
  auto magic = decode_dense(wrong_magic);
  REQUIRE_FALSE(magic.is_ok());
  CHECK(magic.error().message().find("magic") != std::string::npos);

  CHECK_FALSE(decode_dense("").is_ok());
}

TEST_CASE("manifest round trips and a changed byte fails its checksum", "[job][snapshot]") {
  snapshot_manifest m;
  m.job_id = 0x1234abcd5678ef90ULL;
  m.snapshot_id = 7;
  m.created_unix_ms = 1795300000000;
  m.departed = {0, 1000, 512.5, 250, 12.5};
  m.trainers = {{3, 2000, 1000.25, 500, 30.0}};
  m.readers = {{true, 2, 4096, 101, 100, 1, 0x9abcdef0u, 123456789, 3, 17}, {}};
  m.shards = {{7, 330778, 29200000, 0xfeedULL, "/state/shard-0/checkpoints/7"}};
  m.dense_params = 3;
  m.dense_crc = 0xdeadbeef;
  m.job_crc = 0x01020304;
  m.placement = "ranges-16384-jump";
  m.reshaped_from = 2;
  m.shards_flag = 2;
  const std::string text = format_manifest(m);
  auto back = parse_manifest(text);
  REQUIRE(back.is_ok());
  CHECK(back->job_id == m.job_id);
  CHECK(back->snapshot_id == 7);
  CHECK(back->created_unix_ms == m.created_unix_ms);
  CHECK(back->departed.examples == 1000);
  REQUIRE(back->trainers.size() == 1);
  CHECK(back->trainers[0].incarnation == 3);
  CHECK(back->trainers[0].examples == 2000);
  REQUIRE(back->readers.size() == 2);
  CHECK(back->readers[0].valid);
  CHECK(back->readers[0].byte_offset == 4096);
  CHECK(back->readers[0].previous_line_crc == 0x9abcdef0u);
  CHECK(back->readers[0].file_size == 123456789);
  CHECK(back->readers[0].epoch == 3);
  CHECK(back->readers[0].window_batches == 17);
  CHECK_FALSE(back->readers[1].valid);
  REQUIRE(back->shards.size() == 1);
  CHECK(back->shards[0].rows == 330778);
  CHECK(back->shards[0].path == "/state/shard-0/checkpoints/7");
  CHECK(back->dense_crc == 0xdeadbeef);
  CHECK(back->job_crc == 0x01020304);
  CHECK(back->placement == "ranges-16384-jump");
  CHECK(back->reshaped_from == 2);
  CHECK(back->shards_flag == 2);
  CHECK(format_manifest(snapshot_manifest{}).find("shards_flag") == std::string::npos);
  // Resumed with the --shards it was started with, a job a live reshard took from 2 to 1 shard
  // keeps its 1; with any other --shards, that count is taken (the rows move on resume).
  CHECK(shards_to_resume_on(m, 2) == 1);
  CHECK(shards_to_resume_on(m, 3) == 3);
  CHECK(shards_to_resume_on(m, 1) == 1);
  CHECK(shards_to_resume_on(snapshot_manifest{}, 2) == 2);  // no live reshard: the flag
  // Only the first snapshot after a change of shard count says so.
  CHECK(parse_manifest(format_manifest(snapshot_manifest{}))->reshaped_from == 0);
  CHECK(format_manifest(snapshot_manifest{}).find("reshaped_from") == std::string::npos);

  // A manifest of the version before the placement was recorded: its rows were placed by modulo.
  std::string unplaced = *io::without_crc_line(text, "MANIFEST");
  const auto line = unplaced.find("placement = ");
  REQUIRE(line != std::string::npos);
  unplaced.erase(line, unplaced.find('\n', line) + 1 - line);
  auto unplaced_back = parse_manifest(io::with_crc_line(unplaced));
  REQUIRE(unplaced_back.is_ok());
  CHECK(unplaced_back->placement == "modulo");

  // A manifest of the version before the file check: its reader lines end at the bad rows.
  auto old_back = parse_manifest(with_reader_line_cut(text, "reader.0 = 1 2 4096 101 100 1"));
  REQUIRE(old_back.is_ok());
  CHECK(old_back->readers[0].byte_offset == 4096);
  CHECK(old_back->readers[0].previous_line_crc == 0);  // not checked on resume
  CHECK(old_back->readers[0].file_size == 0);
  CHECK(old_back->readers[0].epoch == 0);

  // A manifest of the version before epochs: its reader lines end at the file check.
  auto one_pass_back = parse_manifest(
      with_reader_line_cut(text, "reader.0 = 1 2 4096 101 100 1 " + std::to_string(0x9abcdef0u) + " 123456789"));
  REQUIRE(one_pass_back.is_ok());
  CHECK(one_pass_back->readers[0].file_size == 123456789);
  CHECK(one_pass_back->readers[0].epoch == 0);
  CHECK(one_pass_back->readers[0].window_batches == 0);

  std::string changed = text;
  const auto at = changed.find("snapshot = 7");
  REQUIRE(at != std::string::npos);
  changed[changed.find('7', at)] = '8';
  CHECK_FALSE(parse_manifest(changed).is_ok());
}

TEST_CASE("a stored result keeps its job and is refused when cut short, damaged or of an older format",
          "[job][snapshot]") {
  const stored_result r{"{\"command\":\"cluster\",\"ok\":true}", "[job]\ntrain = a.tsv\n"};
  const std::string text = encode_result(r);
  auto back = decode_result(text);
  REQUIRE(back.is_ok());
  CHECK(back->json == r.json);
  CHECK(back->job_text == r.job_text);
  for (std::size_t cut : {text.size() - 2, text.size() - 12, r.json.size() / 2}) {
    auto shorter = decode_result(text.substr(0, cut));
    REQUIRE_FALSE(shorter.is_ok());
    CHECK(shorter.error().code() == errc::corrupt);
  }
  std::string flipped = text;
  flipped[5] ^= 0x20;
  CHECK(decode_result(flipped).error().message().find("fails its checksum") != std::string::npos);
  // What older versions wrote: the JSON line alone.
  auto old = decode_result(r.json + "\n");
  REQUIRE_FALSE(old.is_ok());
  CHECK(old.error().message().find("written by an older shadowsync, or damaged") != std::string::npos);
  auto store = directory_snapshot_store("/tmp/ss-snapshot-test-result-" + std::to_string(::getpid()));
  CHECK(store->read_result().error().code() == errc::not_found);
  REQUIRE(store->write_result(r).is_ok());
  auto stored = store->read_result();
  REQUIRE(stored.is_ok());
  CHECK(stored->json == r.json);
  std::filesystem::remove_all(store->location());
}

TEST_CASE("a live reshard's stored switch round trips, and one damaged or out of range is refused", "[job][snapshot]") {
  const reshard_switch sw{2, 4, 0x42, 7};
  const std::string text = encode_reshard_switch(sw);
  auto back = decode_reshard_switch(text);
  REQUIRE(back.is_ok());
  CHECK(back->from == 2);
  CHECK(back->to == 4);
  CHECK(back->job_id == 0x42);
  CHECK(back->base_snapshot == 7);
  std::string flipped = text;
  flipped[text.find("to = 4") + 5] = '5';
  auto damaged = decode_reshard_switch(flipped);
  REQUIRE_FALSE(damaged.is_ok());
  CHECK(damaged.error().code() == errc::corrupt);
  for (const auto& bad : {reshard_switch{3, 3, 1, 0}, reshard_switch{0, 2, 1, 0}, reshard_switch{2, 1025, 1, 0}}) {
    auto refused = decode_reshard_switch(encode_reshard_switch(bad));
    REQUIRE_FALSE(refused.is_ok());
    CHECK(refused.error().message().find("RESHARD: a switch from") != std::string::npos);
  }
  // In a directory: absent, written, read, removed (twice: removing an absent one is no error).
  std::unique_ptr<snapshot_store> stores[] = {
      directory_snapshot_store("/tmp/ss-snapshot-test-switch-" + std::to_string(::getpid())), memory_snapshot_store()};
  for (auto& store : stores) {
    CHECK(store->read_reshard_switch().error().code() == errc::not_found);
    REQUIRE(store->write_reshard_switch(sw).is_ok());
    auto stored = store->read_reshard_switch();
    REQUIRE(stored.is_ok());
    CHECK(stored->to == 4);
    CHECK(store->remove_reshard_switch().is_ok());
    CHECK(store->remove_reshard_switch().is_ok());
    CHECK(store->read_reshard_switch().error().code() == errc::not_found);
    if (store->location() != "memory") std::filesystem::remove_all(store->location());
  }
}
