// Sample messages with non-trivial contents, and field-by-field comparisons, for the wire tests.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

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
  return v;
}

// One envelope per message type, in the order of `body`, each with contents that differ from
// the defaults in every field.
inline std::vector<envelope> one_of_each() {
  std::vector<envelope> out;
  auto add = [&out](body b) {
    envelope e;
    e.request_id = 1000 + out.size();
    e.message = std::move(b);
    out.push_back(std::move(e));
  };
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
    p.has_committed = true;
    p.committed_examples = 5000;
    p.committed_bad_rows = 7;
    p.epochs_done = 2;
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
    m.end = read_position{3, 987654321ULL, 4242, 0xfffffffeu, 1ULL << 40, 9, 3};
    m.incarnation = 0xabcdef0123456789ULL;
    m.examples_before = 123456789012ULL;
    add(m);
  }
  add(end_of_data{1, 999});
  add(batch_ack{4, 31337, 99, 77});
  add(lookup_request{false, {0, 1, 25, 7}, {11, 0xffffffffffffffffULL, 13, 1ULL << 40}, 4096});
  add(lookup_reply_of(3, 4));
  add(push_request{{3, 4, 5}, {9, 8, 7}, {0.5f, -0.25f, 1e-8f, -3e7f, 0.0f, -0.0f}, 0.375f, 0x7f3a, 2, 1ULL << 35});
  add(push_reply{4096, true});
  add(dense_request{});
  add(dense_reply{31, {1.0f, -2.5f, 3.25f, 1e-30f, 7.0f}, {0.5f, -0.5f, 0.0f, -0.0f, 1e30f}});
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
  add(dump_request{3, 4096, 65536});
  add(dump_reply{{3, 3}, {7, 8}, {1.0f, 2.0f, 3.0f, 4.0f}, 3, 6000, false});
  add(sync_restore{2, {1.0f, 2.0f, -3.0f}, {0.25f, -0.125f, 0.0f}});
  add(export_request{"/models/job-7.ssm"});
  add(export_reply{"/models/job-7.ssm", 1234567, 89000000, 3.5});
  add(sync_close{4});
  add(warm_request{{0, 25}, {17, 0xfeedfacecafebeefULL}});
  add(warm_reply{1234, true});
  return out;
}

// ---- field-by-field comparison ------------------------------------------------------------

// Floats are compared bit for bit: the codec must not change a single bit (-0.0 and NaN
// included).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}
inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

inline void check_same(const cluster_view& a, const cluster_view& b) {
  CHECK(a.epoch == b.epoch);
  CHECK(a.shards == b.shards);
  CHECK(a.readers == b.readers);
  CHECK(a.trainers == b.trainers);
  CHECK(a.syncs == b.syncs);
  CHECK(a.trainer_incarnations == b.trainer_incarnations);
  CHECK(a.shard_incarnations == b.shard_incarnations);
  CHECK(a.sync_incarnations == b.sync_incarnations);
  CHECK(a.reader_incarnations == b.reader_incarnations);
  CHECK(a.epochs_open == b.epochs_open);
  CHECK(a.epochs_stop == b.epochs_stop);
  CHECK(a.coordinator == b.coordinator);
  CHECK(a.trainer_memberships == b.trainer_memberships);
  CHECK(a.dropped_trainers == b.dropped_trainers);
}

inline void check_same(const error_reply& a, const error_reply& b) {
  CHECK(a.code == b.code);
  CHECK(a.message == b.message);
}
inline void check_same(const register_request& a, const register_request& b) {
  CHECK(a.from == b.from);
  CHECK(a.name == b.name);
  CHECK(a.index == b.index);
  CHECK(a.endpoint == b.endpoint);
  CHECK(a.incarnation == b.incarnation);
  CHECK(a.heartbeat_interval_ms == b.heartbeat_interval_ms);
  CHECK(a.host == b.host);
  CHECK(a.pid == b.pid);
  CHECK(a.membership == b.membership);
}
inline void check_same(const register_reply& a, const register_reply& b) {
  CHECK(a.member_id == b.member_id);
  CHECK(a.job_config == b.job_config);
  check_same(a.view, b.view);
  CHECK(a.state == b.state);
  CHECK(a.restore_snapshot == b.restore_snapshot);
  CHECK(a.has_resume_position == b.has_resume_position);
  CHECK(a.resume_position.file_index == b.resume_position.file_index);
  CHECK(a.resume_position.byte_offset == b.resume_position.byte_offset);
  CHECK(a.resume_position.line_number == b.resume_position.line_number);
  CHECK(a.resume_position.previous_line_crc == b.resume_position.previous_line_crc);
  CHECK(a.resume_position.file_size == b.resume_position.file_size);
  CHECK(a.resume_position.epoch == b.resume_position.epoch);
  CHECK(a.resume_position.window_batches == b.resume_position.window_batches);
  CHECK(a.resume_examples == b.resume_examples);
  CHECK(a.job_id == b.job_id);
  CHECK(a.resume_bad_rows == b.resume_bad_rows);
  CHECK(a.job_was_running == b.job_was_running);
  CHECK(a.membership == b.membership);
}
inline void check_same(const heartbeat& a, const heartbeat& b) {
  CHECK(a.member_id == b.member_id);
  const member_progress& p = a.progress;
  const member_progress& q = b.progress;
  CHECK(p.examples == q.examples);
  CHECK(p.batches == q.batches);
  CHECK(same_bits(p.loss_sum, q.loss_sum));
  CHECK(p.clicks == q.clicks);
  CHECK(p.window_examples == q.window_examples);
  CHECK(same_bits(p.window_loss_sum, q.window_loss_sum));
  CHECK(p.window_clicks == q.window_clicks);
  CHECK(p.bytes_done == q.bytes_done);
  CHECK(p.bytes_total == q.bytes_total);
  CHECK(p.bad_rows == q.bad_rows);
  CHECK(p.rows == q.rows);
  CHECK(p.row_bytes == q.row_bytes);
  CHECK(p.finished == q.finished);
  CHECK(p.detail == q.detail);
  CHECK(p.active_seconds == q.active_seconds);
  CHECK(p.error == q.error);
  CHECK(p.sync_rounds == q.sync_rounds);
  CHECK(p.sync_gap == q.sync_gap);
  CHECK(p.sync_latency_p50_ms == q.sync_latency_p50_ms);
  CHECK(p.sync_latency_p99_ms == q.sync_latency_p99_ms);
  CHECK(p.sync_distance == q.sync_distance);
  CHECK(p.sync_wait_seconds == q.sync_wait_seconds);
  CHECK(p.sync_bytes == q.sync_bytes);
  CHECK(p.has_committed == q.has_committed);
  CHECK(p.committed.file_index == q.committed.file_index);
  CHECK(p.committed.byte_offset == q.committed.byte_offset);
  CHECK(p.committed.line_number == q.committed.line_number);
  CHECK(p.committed.previous_line_crc == q.committed.previous_line_crc);
  CHECK(p.committed.file_size == q.committed.file_size);
  CHECK(p.committed.epoch == q.committed.epoch);
  CHECK(p.committed.window_batches == q.committed.window_batches);
  CHECK(p.committed_examples == q.committed_examples);
  CHECK(p.committed_bad_rows == q.committed_bad_rows);
  CHECK(p.epochs_done == q.epochs_done);
}
inline void check_same(const heartbeat_reply& a, const heartbeat_reply& b) {
  CHECK(a.state == b.state);
  check_same(a.view, b.view);
  CHECK(a.known == b.known);
}
inline void check_same(const leave& a, const leave& b) {
  CHECK(a.member_id == b.member_id);
  CHECK(a.reason == b.reason);
}
inline void check_same(const pull_request& a, const pull_request& b) {
  CHECK(a.credits == b.credits);
  CHECK(a.trainer == b.trainer);
  CHECK(a.pull == b.pull);
  CHECK(a.abandoned == b.abandoned);
}
inline void check_same(const batch_message& a, const batch_message& b) {
  CHECK(a.reader_index == b.reader_index);
  CHECK(a.sequence == b.sequence);
  CHECK(a.batch.num_dense == b.batch.num_dense);
  CHECK(a.batch.num_sparse == b.batch.num_sparse);
  CHECK(same_bits(a.batch.labels, b.batch.labels));
  CHECK(same_bits(a.batch.dense, b.batch.dense));
  CHECK(a.batch.ids == b.batch.ids);
  CHECK(a.batch.offsets == b.batch.offsets);
  CHECK(a.end.file_index == b.end.file_index);
  CHECK(a.end.byte_offset == b.end.byte_offset);
  CHECK(a.end.line_number == b.end.line_number);
  CHECK(a.end.previous_line_crc == b.end.previous_line_crc);
  CHECK(a.end.file_size == b.end.file_size);
  CHECK(a.end.epoch == b.end.epoch);
  CHECK(a.end.window_batches == b.end.window_batches);
  CHECK(a.incarnation == b.incarnation);
  CHECK(a.examples_before == b.examples_before);
}
inline void check_same(const end_of_data& a, const end_of_data& b) {
  CHECK(a.reader_index == b.reader_index);
  CHECK(a.batches == b.batches);
}
inline void check_same(const batch_ack& a, const batch_ack& b) {
  CHECK(a.reader_index == b.reader_index);
  CHECK(a.sequence == b.sequence);
  CHECK(a.incarnation == b.incarnation);
  CHECK(a.trainer == b.trainer);
}
inline void check_same(const lookup_request& a, const lookup_request& b) {
  CHECK(a.create == b.create);
  CHECK(a.tables == b.tables);
  CHECK(a.ids == b.ids);
  CHECK(a.examples == b.examples);
}
inline void check_same(const lookup_reply& a, const lookup_reply& b) {
  CHECK(a.dim == b.dim);
  CHECK(same_bits(a.values, b.values));
}
inline void check_same(const push_request& a, const push_request& b) {
  CHECK(a.tables == b.tables);
  CHECK(a.ids == b.ids);
  CHECK(same_bits(a.grads, b.grads));
  CHECK(a.lr_scale == b.lr_scale);
  CHECK(a.trainer == b.trainer);
  CHECK(a.membership == b.membership);
  CHECK(a.number == b.number);
}
inline void check_same(const push_reply& a, const push_reply& b) {
  CHECK(a.rows == b.rows);
  CHECK(a.duplicate == b.duplicate);
}
inline void check_same(const dense_request&, const dense_request&) {}
inline void check_same(const dense_reply& a, const dense_reply& b) {
  CHECK(a.version == b.version);
  CHECK(same_bits(a.params, b.params));
  CHECK(same_bits(a.momentum, b.momentum));
}
inline void check_same(const sync_restore& a, const sync_restore& b) {
  CHECK(a.slice == b.slice);
  CHECK(same_bits(a.params, b.params));
  CHECK(same_bits(a.momentum, b.momentum));
}
inline void check_same(const export_request& a, const export_request& b) { CHECK(a.path == b.path); }
inline void check_same(const sync_close& a, const sync_close& b) { CHECK(a.generation == b.generation); }
inline void check_same(const warm_request& a, const warm_request& b) {
  CHECK(a.tables == b.tables);
  CHECK(a.ids == b.ids);
}
inline void check_same(const warm_reply& a, const warm_reply& b) {
  CHECK(a.rows == b.rows);
  CHECK(a.tiered == b.tiered);
}
inline void check_same(const export_reply& a, const export_reply& b) {
  CHECK(a.path == b.path);
  CHECK(a.rows == b.rows);
  CHECK(a.bytes == b.bytes);
  CHECK(a.seconds == b.seconds);
}
inline void check_same(const dense_report& a, const dense_report& b) {
  CHECK(a.trainer == b.trainer);
  CHECK(a.examples == b.examples);
  CHECK(same_bits(a.params, b.params));
}
inline void check_same(const status_request&, const status_request&) {}
inline void check_same(const status_reply& a, const status_reply& b) { CHECK(a.json == b.json); }
inline void check_same(const stop_request& a, const stop_request& b) {
  CHECK(a.reason == b.reason);
}
inline void check_same(const ack&, const ack&) {}
inline void check_same(const ss::sync::quantized_vector& a, const ss::sync::quantized_vector& b) {
  CHECK(a.block == b.block);
  CHECK(same_bits(a.scales, b.scales));
  CHECK(same_bits(a.values, b.values));
}
inline void check_same(const sync_request& a, const sync_request& b) {
  CHECK(a.trainer == b.trainer);
  CHECK(a.slice == b.slice);
  CHECK(a.offset == b.offset);
  CHECK(a.batches == b.batches);
  CHECK(same_bits(a.params, b.params));
  CHECK(a.closing == b.closing);
  CHECK(a.base == b.base);
  check_same(a.quantized, b.quantized);
  CHECK(a.membership == b.membership);
}
inline void check_same(const snapshot_now&, const snapshot_now&) {}
inline void check_same(const snapshot_request& a, const snapshot_request& b) {
  CHECK(a.snapshot_id == b.snapshot_id);
  CHECK(a.keep == b.keep);
}
inline void check_same(const snapshot_reply& a, const snapshot_reply& b) {
  CHECK(a.snapshot_id == b.snapshot_id);
  CHECK(a.path == b.path);
  CHECK(a.rows == b.rows);
  CHECK(a.bytes == b.bytes);
  CHECK(a.checksum == b.checksum);
  CHECK(a.seconds == b.seconds);
}
inline void check_same(const dump_request& a, const dump_request& b) {
  CHECK(a.table == b.table);
  CHECK(a.position == b.position);
  CHECK(a.max_rows == b.max_rows);
}
inline void check_same(const dump_reply& a, const dump_reply& b) {
  CHECK(a.tables == b.tables);
  CHECK(a.ids == b.ids);
  CHECK(same_bits(a.values, b.values));
  CHECK(a.next_table == b.next_table);
  CHECK(a.next_position == b.next_position);
  CHECK(a.done == b.done);
}
inline void check_same(const sync_reply& a, const sync_reply& b) {
  CHECK(a.round == b.round);
  CHECK(a.is_delta == b.is_delta);
  CHECK(a.participants == b.participants);
  CHECK(a.distance == b.distance);
  CHECK(same_bits(a.params, b.params));
  CHECK(a.sequence == b.sequence);
  check_same(a.quantized, b.quantized);
}

inline void check_same(const envelope& a, const envelope& b) {
  CHECK(a.version == b.version);
  CHECK(a.request_id == b.request_id);
  REQUIRE(a.message.index() == b.message.index());
  std::visit(
      [&b](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        check_same(x, std::get<T>(b.message));
      },
      a.message);
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

inline std::uint32_t get_u32(const std::vector<std::uint8_t>& b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}
inline void put_u32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}
inline std::uint64_t get_u64(const std::vector<std::uint8_t>& b, std::size_t at) {
  std::uint64_t v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}
inline void put_u64(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

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
