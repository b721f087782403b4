// Sample messages, one of each (hand-written where their contents mean something, generated from
// the codec table for the rest), and the field-by-field comparison, for the wire tests and the
// fuzz corpus (tests/fuzz/make_corpus.cpp).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "message_fields.hpp"
#include "ss/wire/codec.hpp"
#include "ss/wire/messages.hpp"

namespace ss::wire::testing {

// A batch shaped like Criteo: 13 dense features, 26 categorical ones with one id each.
inline data::example_batch criteo_batch(std::size_t examples, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  data::example_batch b;
  b.reset(13, 26);
  b.reserve(examples);
  std::uniform_real_distribution<float> dense(0.0f, 8.0f);
  for (std::size_t e = 0; e < examples; ++e) {
    b.begin_example(static_cast<float>(rng() % 4 == 0));
    for (int f = 0; f < 13; ++f) b.add_dense(dense(rng));
    for (int f = 0; f < 26; ++f) {
      b.add_id(rng());
      b.end_feature();
    }
  }
  return b;
}

// `rows` rows of `dim` floats.
inline lookup_reply lookup_reply_of(std::size_t rows, std::uint32_t dim) {
  lookup_reply r;
  r.dim = dim;
  r.values.resize(rows * dim);
  for (std::size_t i = 0; i < r.values.size(); ++i)
    r.values[i] = 0.001f * static_cast<float>(i) - 3.0f;
  return r;
}

inline cluster_view sample_view() {
  cluster_view v;
  v.epoch = 42;
  v.shards = {"tcp://10.0.0.1:5555", "", "tcp://10.0.0.3:5555"};
  v.readers = {"ipc:///tmp/reader-0"};
  v.trainers = {"trainer-7f3a", "trainer-01bc", "a name that is longer than sixteen bytes"};
  v.syncs = {"tcp://coordinator:5555", "tcp://sync-1:5558"};
  v.trainer_incarnations = {0x7f3a, 0xffffffffffffffffULL, 3};
  v.shard_incarnations = {0, 0x8000000000000001ULL};
  v.sync_incarnations = {42};
  v.reader_incarnations = {0, 77};
  v.epochs_open = 3;
  v.epochs_stop = 5;
  v.coordinator = 0xc00d;
  v.trainer_memberships = {1, 2, 0xffffffffffffffffULL};
  v.dropped_trainers = {0xdead, 9};
  v.input_closed = true;
  return v;
}

// The hand-written samples, at most one per message, in any order: contents that mean
// something (a Criteo batch, a cluster view, a quantized round), nearly every field away from
// its default. Their frames are pinned in golden_frames.txt: they do not change. A new message
// needs none (one_of_each generates it); write one when its generated sample is refused by the
// entry's check, or says too little.
inline std::vector<body> written_samples() {
  std::vector<body> out;
  auto add = [&out](body b) { out.push_back(std::move(b)); };
  add(error_reply{errc::not_found, "unknown table 31"});
  add(register_request{role::shard, "shard-3", 3, "tcp://10.1.2.3:7000", 0x1234567890abcdefULL, 1500, "host-a", 4242, 6});
  {
    register_reply r;
    r.member_id = 17;
    r.job_config = "[job]\nembedding-dim = 16\nbottom-mlp = 13-512-256-64-16\n";
    r.view = sample_view();
    r.state = job_state::draining;
    r.restore_snapshot = 42;
    r.resume_position = read_position{1, 5550000, 20001, 0xc0ffee01u, 9000000, 2, 7};
    r.has_resume_position = true;
    r.resume_examples = 20000;
    r.job_id = 0x5eed5eed5eedULL;
    r.resume_bad_rows = 12;
    r.job_was_running = true;
    r.membership = 7;
    r.restore_shards = 2;
    r.file_passes = {2, 1, 1};
    r.file_offsets = {0, 4096, 0};
    r.file_lines = {1, 101, 1};
    r.file_crcs = {0, 0xdeadbeefu, 0};
    r.file_sizes = {0, 99999, 0};
    r.schedule_examples = 35776;
    r.resume_position.window_end_file = 1;
    r.resume_position.window_end_offset = 5551234;
    r.resume_position.window_end_line = 20040;
    window_left w;
    w.readers = 2;
    w.reader = 1;
    w.epoch = 1;
    w.handed = 3;
    w.start = read_position{0, 8192, 201, 0x0badf00du, 99999};
    w.file_passes = {1, 1};
    w.file_offsets = {0, 4096};
    w.file_lines = {1, 101};
    w.file_crcs = {0, 0xdeadbeefu};
    w.file_sizes = {0, 99999};
    r.windows_left = {w, window_left{2, 0, 1, 1, read_position{1, 64, 3}}};
    add(r);
  }
  {
    heartbeat h;
    h.member_id = 9;
    member_progress& p = h.progress;
    p.examples = 1'000'001;
    p.batches = 7813;
    p.loss_sum = 471234.5625;
    p.clicks = 250'000;
    p.window_examples = 100'000;
    p.window_loss_sum = 45501.25;
    p.window_clicks = 24680;
    p.bytes_done = 1ULL << 33;
    p.bytes_total = (1ULL << 34) + 5;
    p.bad_rows = 3;
    p.rows = 560'113;
    p.row_bytes = 70'100'000;
    p.finished = true;
    p.detail = R"({"threads":2,"queue":5})";
    p.active_seconds = 12.5;
    p.error = "reader-1: too many bad rows";
    p.sync_rounds = 321;
    p.sync_gap = 4.5;
    p.sync_latency_p50_ms = 1.25;
    p.sync_latency_p99_ms = 8.0;
    p.sync_distance = 0.0031;
    p.sync_wait_seconds = 2.5;
    p.sync_bytes = 123456789;
    p.committed = read_position{2, 123456, 789, 0x12345678u, 7777777, 4, 1};
    p.committed.file_name = "app.log";
    p.committed.device = 64770;
    p.has_committed = true;
    p.committed_examples = 5000;
    p.committed_bad_rows = 7;
    p.epochs_done = 2;
    // Two slices whose buckets add up to their counts (the heartbeat's check refuses others).
    p.progressive.start_ages = {9.5, 5.0};
    p.progressive.end_ages = {5.25, 0.125};
    p.progressive.examples = {10, 6};
    p.progressive.clicks = {3, 1};
    p.progressive.prediction_sums = {2.75, 1.5};
    p.progressive.log_loss_sums = {5.5, 3.25};
    p.progressive.bucket_counts = {2, 1};
    p.progressive.buckets = {400, 512, 300};
    p.progressive.bucket_clicks = {1, 2, 1};
    p.progressive.bucket_non_clicks = {4, 3, 5};
    add(h);
  }
  add(heartbeat_reply{job_state::failed, sample_view(), false});
  add(leave{77, "SIGTERM"});
  add(pull_request{12, 77, 5, {2, 3}});
  {
    batch_message m;
    m.reader_index = 2;
    m.sequence = 123456789012ULL;
    m.batch = criteo_batch(5, 7);
    m.end = read_position{0, 987654321ULL, 4242, 0xfffffffeu};
    m.end.file_name = "part-0007 (copy).tsv";
    m.end.device = 0x803;
    m.end.inode = 1ULL << 36;
    m.incarnation = 0xabcdef0123456789ULL;
    m.examples_before = 123456789012ULL;
    add(m);
  }
  add(end_of_data{1, 999});
  add(batch_ack{4, 31337, 99, 77});
  add(lookup_request{false, {0, 1, 25, 7}, {11, 0xffffffffffffffffULL, 13, 1ULL << 40}, 4096});
  // 16-bit rows (one sample a message: the fp32 path is the 2000-row test's): values exactly
  // representable at bf16 come back as sent.
  add(lookup_reply{2, {0.5f, -0.25f, 3.0f, 0.0f}, ss::embedding::row_precision::bf16});
  add(push_request{{3, 4, 5}, {9, 8, 7}, {0.5f, -0.25f, 1e-8f, -3e7f, 0.0f, -0.0f}, 0.375f, 0x7f3a, 2, 1ULL << 35});
  add(push_reply{4096, true});
  add(dense_request{true});
  add(dense_reply{31, {1.0f, -2.5f, 3.25f, 1e-30f, 7.0f}, {0.5f, -0.5f, 0.0f, -0.0f, 1e30f}, {1e-4f, 2e-9f}, 4096, 51200});
  add(dense_report{5, 2'000'000, {0.125f, 0.25f, -0.5f}});
  add(status_request{});
  add(status_reply{R"({"role":"coordinator","state":"running"})"});
  add(stop_request{"operator asked"});
  add(ack{});
  {  // every field set, FP32 and quantized (a real round sends one or the other)
    sync_request q{9, 2, 158000, 4096, {0.5f, -0.25f, 1e-9f}, 3, 41};
    q.quantized.block = 2;
    q.quantized.scales = {0.5f, 1e-3f};
    q.quantized.values = {127, -127, 0};
    q.membership = 3;
    add(q);
    sync_reply r{77, true, 8, 0.0125, {1.0f, -1.0f, 0.0f, -0.0f}, 42};
    r.quantized.block = 4;
    r.quantized.scales = {2.5e-4f};
    r.quantized.values = {-1, 2, -3};
    add(r);
  }
  add(snapshot_now{});
  add(snapshot_request{12, {9, 10, 11}});
  add(snapshot_reply{12, "/data/shard-0/checkpoints/12", 1000000, 68000000, 0xdeadbeefcafeULL, 1.25});
  add(dump_request{3, 4096, 65536, 4, 2, true});  // the whole rows placement 4 gives to shard 2
  {
    dump_reply page{{3, 3}, {7, 8}, {1.0f, 2.0f, 3.0f, 4.0f}, 3, 6000, false, 2, 0};
    page.gone_tables = {3};  // a live reshard's row given up since its copy
    page.gone_ids = {9};
    page.crc32c = dump_page_crc(page);
    add(page);
  }
  add(sync_restore{2, {1.0f, 2.0f, -3.0f}, {0.25f, -0.125f, 0.0f}});
  add(export_request{"/models/job-7.ssm"});
  add(export_reply{"/models/job-7.ssm", 1234567, 89000000, 3.5});
  add(sync_close{4});
  add(warm_request{{0, 25}, {17, 0xfeedfacecafebeefULL}});
  add(warm_reply{1234, true});
  add(take_rows_request{{"tcp://10.0.0.7:7001", "tcp://10.0.0.8:7001"}, 3});  // 2 -> 3 shards
  add(drop_rows_reply{500000, 1000000});
  return out;
}

// Whether body's alternative `index` has a written sample.
inline bool has_written_sample(std::size_t index) {
  for (const body& b : written_samples()) {
    if (b.index() == index) return true;
  }
  return false;
}

// One envelope per message of `body`, in its order, with request ids 1000, 1001, ...: its written
// sample, or one generated from its codec entry (generated_sample, message_fields.hpp), so that
// every message of the table has one without a line here.
inline std::vector<envelope> one_of_each() {
  std::vector<std::optional<body>> written(detail::message_count);
  for (body& b : written_samples()) {
    if (written[b.index()]) throw std::logic_error(std::string("two written samples of ") + message_name(b));
    written[b.index()] = std::move(b);
  }
  std::vector<envelope> out;
  for (std::size_t i = 0; i < written.size(); ++i) {
    envelope e;
    e.request_id = 1000 + i;
    e.message = written[i] ? std::move(*written[i]) : generated_message(i);
    out.push_back(std::move(e));
  }
  return out;
}

// ---- field-by-field comparison ------------------------------------------------------------

// One failed check per field that differs, named by its path ("heartbeat.progress.sync_gap").
template <class T>
void check_same(const T& a, const T& b) {
  for (const std::string& difference : fields_that_differ(a, b)) FAIL_CHECK(difference);
}

// ---- frames as bytes ------------------------------------------------------------------------

inline std::vector<std::uint8_t> bytes_of(const frame& f) {
  return std::vector<std::uint8_t>(f->data(), f->data() + f->size());
}

// Decodes bytes held anywhere (the (data, size) overload).
inline result<envelope> decode_bytes(const std::vector<std::uint8_t>& b,
                                     const decode_limits& l = {}) {
  return decode(b.data(), b.size(), l);
}

// Little-endian numbers at byte `at` of a frame's bytes.
template <class T>
T get_at(const std::vector<std::uint8_t>& b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}
template <class T>
void put_at(std::vector<std::uint8_t>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}
inline std::uint32_t get_u32(const std::vector<std::uint8_t>& b, std::size_t at) { return get_at<std::uint32_t>(b, at); }
inline std::uint64_t get_u64(const std::vector<std::uint8_t>& b, std::size_t at) { return get_at<std::uint64_t>(b, at); }
inline void put_u32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) { put_at(b, at, v); }
inline void put_u64(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v) { put_at(b, at, v); }

// Two frames of the same length that differ in exactly one 16-bit field (an enum or a union
// tag): returns that field's byte offset, so a test can write values our encoder never writes.
inline std::size_t differing_u16(const frame& a, const frame& b) {
  REQUIRE(a->size() == b->size());
  std::size_t at = a->size();
  for (std::size_t i = 0; i < a->size(); i += 2) {
    if (std::memcmp(a->data() + i, b->data() + i, 2) != 0) {
      REQUIRE(at == a->size());  // exactly one
      at = i;
    }
  }
  REQUIRE(at < a->size());
  return at;
}

inline std::string error_of(const result<envelope>& r) {
  return r.is_ok() ? "ok" : r.error().to_string();
}

}  // namespace ss::wire::testing
