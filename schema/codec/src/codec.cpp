// Envelope <-> frame through the generated Cap'n Proto code (schema/*.capnp). The only
// translation unit that includes *.capnp.h.
//
// Encoding builds the message in place inside the frame it returns: the builder's first segment
// is the frame itself, one word after the segment table, sized exactly from the message
// (encoded_words below). Should that size ever be off, the message spills into more segments (or
// leaves words unused) and is copied once into a frame of the right size: slower, never wrong.
//
// Decoding treats the bytes as hostile. In order: the size limit (before reading a byte), the
// word granularity, our own check of the segment table, then Cap'n Proto with a traversal limit
// sized from the frame (so no list, text or aliased pointer can make us copy more than about
// twice the frame), then semantic checks of every list length that another field implies.
// Primitive lists are copied with one memcpy each: the host and the wire are little-endian.
#include "ss/wire/codec.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <capnp/any.h>
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include "ss/wire/schema/envelope.capnp.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ss_wire copies list bytes as they are: it needs a little-endian host, like the wire"
#endif

namespace ss::wire {
namespace {

using Body = schema::Envelope::Body;

// ---- the enumerations: the wire values are the C++ values -----------------------------------

constexpr int wire(schema::ErrorCode c) { return static_cast<int>(c); }
constexpr int wire(schema::Role r) { return static_cast<int>(r); }
constexpr int wire(schema::JobState s) { return static_cast<int>(s); }
static_assert(wire(schema::ErrorCode::OK) == static_cast<int>(errc::ok));
static_assert(wire(schema::ErrorCode::INVALID_ARGUMENT) ==
              static_cast<int>(errc::invalid_argument));
static_assert(wire(schema::ErrorCode::PARSE_ERROR) == static_cast<int>(errc::parse_error));
static_assert(wire(schema::ErrorCode::IO_ERROR) == static_cast<int>(errc::io_error));
static_assert(wire(schema::ErrorCode::NOT_FOUND) == static_cast<int>(errc::not_found));
static_assert(wire(schema::ErrorCode::CORRUPT) == static_cast<int>(errc::corrupt));
static_assert(wire(schema::ErrorCode::OUT_OF_RANGE) == static_cast<int>(errc::out_of_range));
static_assert(wire(schema::ErrorCode::RESOURCE_EXHAUSTED) ==
              static_cast<int>(errc::resource_exhausted));
static_assert(wire(schema::ErrorCode::UNAVAILABLE) == static_cast<int>(errc::unavailable));
static_assert(wire(schema::ErrorCode::TIMEOUT) == static_cast<int>(errc::timeout));
static_assert(wire(schema::ErrorCode::VERSION_MISMATCH) ==
              static_cast<int>(errc::version_mismatch));
static_assert(wire(schema::ErrorCode::TOO_MANY_BAD_ROWS) ==
              static_cast<int>(errc::too_many_bad_rows));
static_assert(wire(schema::ErrorCode::CANCELLED) == static_cast<int>(errc::cancelled));
static_assert(wire(schema::ErrorCode::INTERNAL) == static_cast<int>(errc::internal));
static_assert(wire(schema::ErrorCode::PERMISSION_DENIED) == static_cast<int>(errc::permission_denied));
static_assert(wire(schema::Role::COORDINATOR) == static_cast<int>(role::coordinator));
static_assert(wire(schema::Role::SHARD) == static_cast<int>(role::shard));
static_assert(wire(schema::Role::TRAINER) == static_cast<int>(role::trainer));
static_assert(wire(schema::Role::READER) == static_cast<int>(role::reader));
static_assert(wire(schema::Role::CLIENT) == static_cast<int>(role::client));
static_assert(wire(schema::Role::SYNC) == static_cast<int>(role::sync));
static_assert(wire(schema::JobState::WAITING) == static_cast<int>(job_state::waiting));
static_assert(wire(schema::JobState::RUNNING) == static_cast<int>(job_state::running));
static_assert(wire(schema::JobState::DRAINING) == static_cast<int>(job_state::draining));
static_assert(wire(schema::JobState::DONE) == static_cast<int>(job_state::done));
static_assert(wire(schema::JobState::FAILED) == static_cast<int>(job_state::failed));

// The union tag of each message is its index in `body`: messages.hpp and envelope.capnp list
// them in the same order (spot-checked here; the round-trip tests check every one).
static_assert(std::variant_size_v<body> == static_cast<std::size_t>(Body::EXPORT_REPLY) + 1);
static_assert(static_cast<std::size_t>(Body::BATCH_MESSAGE) == 7);
static_assert(static_cast<std::size_t>(Body::LOOKUP_REPLY) == 11);

// ---- raw list bytes ---------------------------------------------------------------------------

template <class T>
constexpr capnp::ElementSize element_size() {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  return sizeof(T) == 4 ? capnp::ElementSize::FOUR_BYTES : capnp::ElementSize::EIGHT_BYTES;
}

// capnp lists hold at most 2^29 - 1 elements.
capnp::uint list_size(std::size_t n) {
  if (n > (std::size_t{1} << 29) - 1) {
    throw std::length_error("ss::wire::encode: a list of " + std::to_string(n) +
                            " elements is over Cap'n Proto's limit of 2^29 - 1");
  }
  return static_cast<capnp::uint>(n);
}

// Writes `v` with one memcpy into the list that init(v.size()) creates. An empty vector is left
// a null pointer, which reads back as an empty list and costs no words (encoded_words counts the
// same way).
template <class T, class Init>
void put_list(const std::vector<T>& v, Init init) {
  if (v.empty()) return;
  typename capnp::List<T>::Builder list = init(list_size(v.size()));
  auto raw = capnp::AnyList::Reader(list.asReader()).getRawBytes();
  // The builder's memory is writable; the reader view is only how capnp 0.9 exposes it.
  std::memcpy(const_cast<kj::byte*>(raw.begin()), v.data(), v.size() * sizeof(T));
}

// Reads a primitive list with one memcpy. Its length is bounded by the frame (capnp checks the
// list lies inside its segment), so the allocation is too.
template <class T>
void get_list(typename capnp::List<T>::Reader list, std::vector<T>& out) {
  const std::size_t n = list.size();
  out.resize(n);
  if (n == 0) return;
  capnp::AnyList::Reader any(list);
  auto raw = any.getRawBytes();
  if (any.getElementSize() == element_size<T>() && raw.size() == n * sizeof(T)) {
    std::memcpy(out.data(), raw.begin(), n * sizeof(T));
  } else {
    // Wider elements or structs (a newer sender's upgrade): legal Cap'n Proto, never written
    // by our encoder.
    for (std::size_t i = 0; i < n; ++i) out[i] = list[i];
  }
}

capnp::Text::Reader text(const std::string& s) { return capnp::Text::Reader(s.data(), s.size()); }
std::string get_text(capnp::Text::Reader t) { return std::string(t.begin(), t.size()); }

// Like put_list; empty strings are null elements.
template <class Init>
void put_texts(const std::vector<std::string>& v, Init init) {
  if (v.empty()) return;
  capnp::List<capnp::Text>::Builder list = init(list_size(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].empty()) list.set(static_cast<capnp::uint>(i), text(v[i]));
  }
}

void get_texts(capnp::List<capnp::Text>::Reader list, std::vector<std::string>& out) {
  out.clear();
  out.reserve(list.size());  // bounded: one pointer word per element in the frame
  for (auto t : list) out.push_back(get_text(t));
}

// ---- the exact size of an encoded message, in words --------------------------------------------

template <class S>
constexpr std::size_t struct_words() {
  return S::_capnpPrivate::dataWordSize + S::_capnpPrivate::pointerCount;
}
std::size_t text_words(const std::string& s) { return s.empty() ? 0 : s.size() / 8 + 1; }
template <class T>
std::size_t list_words(const std::vector<T>& v) {
  return (v.size() * sizeof(T) + 7) / 8;
}
std::size_t texts_words(const std::vector<std::string>& v) {
  std::size_t n = v.size();
  for (const auto& s : v) n += text_words(s);
  return n;
}
std::size_t view_words(const cluster_view& v) {
  return struct_words<schema::ClusterView>() + texts_words(v.shards) + texts_words(v.readers) +
         texts_words(v.trainers) + texts_words(v.syncs) + list_words(v.trainer_incarnations) +
         list_words(v.shard_incarnations) + list_words(v.sync_incarnations) + list_words(v.reader_incarnations);
}

struct encoded_words {
  std::size_t operator()(const error_reply& m) const {
    return struct_words<schema::ErrorReply>() + text_words(m.message);
  }
  std::size_t operator()(const register_request& m) const {
    return struct_words<schema::RegisterRequest>() + text_words(m.name) + text_words(m.endpoint);
  }
  std::size_t operator()(const register_reply& m) const {
    return struct_words<schema::RegisterReply>() + text_words(m.job_config) + view_words(m.view) +
           struct_words<schema::ReadPosition>();
  }
  std::size_t operator()(const heartbeat& m) const {
    return struct_words<schema::Heartbeat>() + struct_words<schema::MemberProgress>() +
           text_words(m.progress.detail) + text_words(m.progress.error) + struct_words<schema::ReadPosition>();
  }
  std::size_t operator()(const heartbeat_reply& m) const {
    return struct_words<schema::HeartbeatReply>() + view_words(m.view);
  }
  std::size_t operator()(const leave& m) const {
    return struct_words<schema::Leave>() + text_words(m.reason);
  }
  std::size_t operator()(const pull_request&) const { return struct_words<schema::PullRequest>(); }
  std::size_t operator()(const batch_message& m) const {
    const auto& b = m.batch;
    return struct_words<schema::BatchMessage>() + struct_words<schema::ExampleBatch>() +
           struct_words<schema::ReadPosition>() + list_words(b.labels) + list_words(b.dense) +
           list_words(b.ids) + list_words(b.offsets);
  }
  std::size_t operator()(const end_of_data&) const { return struct_words<schema::EndOfData>(); }
  std::size_t operator()(const batch_ack&) const { return struct_words<schema::BatchAck>(); }
  std::size_t operator()(const lookup_request& m) const {
    return struct_words<schema::LookupRequest>() + list_words(m.tables) + list_words(m.ids);
  }
  std::size_t operator()(const lookup_reply& m) const {
    return struct_words<schema::LookupReply>() + list_words(m.values);
  }
  std::size_t operator()(const push_request& m) const {
    return struct_words<schema::PushRequest>() + list_words(m.tables) + list_words(m.ids) +
           list_words(m.grads);
  }
  std::size_t operator()(const push_reply&) const { return struct_words<schema::PushReply>(); }
  std::size_t operator()(const dense_request&) const {
    return struct_words<schema::DenseRequest>();
  }
  std::size_t operator()(const dense_reply& m) const {
    return struct_words<schema::DenseReply>() + list_words(m.params) + list_words(m.momentum);
  }
  std::size_t operator()(const dense_report& m) const {
    return struct_words<schema::DenseReport>() + list_words(m.params);
  }
  std::size_t operator()(const status_request&) const {
    return struct_words<schema::StatusRequest>();
  }
  std::size_t operator()(const status_reply& m) const {
    return struct_words<schema::StatusReply>() + text_words(m.json);
  }
  std::size_t operator()(const stop_request& m) const {
    return struct_words<schema::StopRequest>() + text_words(m.reason);
  }
  std::size_t operator()(const ack&) const { return struct_words<schema::Ack>(); }
  std::size_t operator()(const sync_request& m) const {
    return struct_words<schema::SyncRequest>() + list_words(m.params);
  }
  std::size_t operator()(const sync_reply& m) const {
    return struct_words<schema::SyncReply>() + list_words(m.params);
  }
  std::size_t operator()(const snapshot_now&) const { return struct_words<schema::SnapshotNow>(); }
  std::size_t operator()(const snapshot_request& m) const {
    return struct_words<schema::SnapshotRequest>() + list_words(m.keep);
  }
  std::size_t operator()(const snapshot_reply& m) const {
    return struct_words<schema::SnapshotReply>() + text_words(m.path);
  }
  std::size_t operator()(const dump_request&) const { return struct_words<schema::DumpRequest>(); }
  std::size_t operator()(const sync_restore& m) const {
    return struct_words<schema::SyncRestore>() + list_words(m.params) + list_words(m.momentum);
  }
  std::size_t operator()(const export_request& m) const {
    return struct_words<schema::ExportRequest>() + text_words(m.path);
  }
  std::size_t operator()(const export_reply& m) const {
    return struct_words<schema::ExportReply>() + text_words(m.path);
  }
  std::size_t operator()(const dump_reply& m) const {
    return struct_words<schema::DumpReply>() + list_words(m.tables) + list_words(m.ids) + list_words(m.values);
  }
};

// ---- encoding ---------------------------------------------------------------------------------

void put_position(const read_position& p, schema::ReadPosition::Builder b) {
  b.setFileIndex(p.file_index);
  b.setByteOffset(p.byte_offset);
  b.setLineNumber(p.line_number);
  b.setPreviousLineCrc(p.previous_line_crc);
  b.setFileSize(p.file_size);
  b.setEpoch(p.epoch);
  b.setWindowBatches(p.window_batches);
}

void put_view(const cluster_view& v, schema::ClusterView::Builder b) {
  b.setEpoch(v.epoch);
  put_texts(v.shards, [&](capnp::uint n) { return b.initShards(n); });
  put_texts(v.readers, [&](capnp::uint n) { return b.initReaders(n); });
  put_texts(v.trainers, [&](capnp::uint n) { return b.initTrainers(n); });
  put_texts(v.syncs, [&](capnp::uint n) { return b.initSyncs(n); });
  put_list(v.trainer_incarnations, [&](capnp::uint n) { return b.initTrainerIncarnations(n); });
  put_list(v.shard_incarnations, [&](capnp::uint n) { return b.initShardIncarnations(n); });
  put_list(v.sync_incarnations, [&](capnp::uint n) { return b.initSyncIncarnations(n); });
  put_list(v.reader_incarnations, [&](capnp::uint n) { return b.initReaderIncarnations(n); });
  b.setEpochsOpen(v.epochs_open);
  b.setEpochsStop(v.epochs_stop);
}

// Non-const calls: capnp builders are handles whose init* methods are not const.
struct body_writer {
  Body::Builder b;

  void operator()(const error_reply& m) {
    auto r = b.initErrorReply();
    r.setCode(static_cast<schema::ErrorCode>(m.code));
    if (!m.message.empty()) r.setMessage(text(m.message));
  }
  void operator()(const register_request& m) {
    auto r = b.initRegisterRequest();
    r.setFrom(static_cast<schema::Role>(m.from));
    if (!m.name.empty()) r.setName(text(m.name));
    r.setIndex(m.index);
    if (!m.endpoint.empty()) r.setEndpoint(text(m.endpoint));
    r.setIncarnation(m.incarnation);
  }
  void operator()(const register_reply& m) {
    auto r = b.initRegisterReply();
    r.setMemberId(m.member_id);
    if (!m.job_config.empty()) r.setJobConfig(text(m.job_config));
    put_view(m.view, r.initView());
    r.setState(static_cast<schema::JobState>(m.state));
    r.setRestoreSnapshot(m.restore_snapshot);
    if (m.has_resume_position) {
      put_position(m.resume_position, r.initResumePosition());
      r.setHasResumePosition(true);
    }
    r.setResumeExamples(m.resume_examples);
    r.setJobId(m.job_id);
    r.setResumeBadRows(m.resume_bad_rows);
    r.setJobWasRunning(m.job_was_running);
  }
  void operator()(const heartbeat& m) {
    auto r = b.initHeartbeat();
    r.setMemberId(m.member_id);
    const member_progress& p = m.progress;
    auto q = r.initProgress();
    q.setExamples(p.examples);
    q.setBatches(p.batches);
    q.setLossSum(p.loss_sum);
    q.setClicks(p.clicks);
    q.setWindowExamples(p.window_examples);
    q.setWindowLossSum(p.window_loss_sum);
    q.setWindowClicks(p.window_clicks);
    q.setBytesDone(p.bytes_done);
    q.setBytesTotal(p.bytes_total);
    q.setBadRows(p.bad_rows);
    q.setRows(p.rows);
    q.setRowBytes(p.row_bytes);
    q.setFinished(p.finished);
    if (!p.detail.empty()) q.setDetail(text(p.detail));
    q.setActiveSeconds(p.active_seconds);
    if (!p.error.empty()) q.setError(text(p.error));
    q.setSyncRounds(p.sync_rounds);
    q.setSyncGap(p.sync_gap);
    q.setSyncLatencyP50Ms(p.sync_latency_p50_ms);
    q.setSyncLatencyP99Ms(p.sync_latency_p99_ms);
    q.setSyncDistance(p.sync_distance);
    q.setSyncWaitSeconds(p.sync_wait_seconds);
    if (p.has_committed) {
      put_position(p.committed, q.initCommitted());
      q.setHasCommitted(true);
    }
    q.setCommittedExamples(p.committed_examples);
    q.setCommittedBadRows(p.committed_bad_rows);
    q.setEpochsDone(p.epochs_done);
  }
  void operator()(const heartbeat_reply& m) {
    auto r = b.initHeartbeatReply();
    r.setState(static_cast<schema::JobState>(m.state));
    put_view(m.view, r.initView());
    r.setKnown(m.known);
  }
  void operator()(const leave& m) {
    auto r = b.initLeave();
    r.setMemberId(m.member_id);
    if (!m.reason.empty()) r.setReason(text(m.reason));
  }
  void operator()(const pull_request& m) {
    auto r = b.initPullRequest();
    r.setCredits(m.credits);
    r.setTrainer(m.trainer);
  }
  void operator()(const batch_message& m) {
    auto r = b.initBatchMessage();
    r.setReaderIndex(m.reader_index);
    r.setSequence(m.sequence);
    const data::example_batch& x = m.batch;
    auto w = r.initBatch();
    w.setExamples(list_size(x.size()));
    w.setNumDense(x.num_dense);
    w.setNumSparse(x.num_sparse);
    put_list(x.labels, [&](capnp::uint n) { return w.initLabels(n); });
    put_list(x.dense, [&](capnp::uint n) { return w.initDense(n); });
    put_list(x.ids, [&](capnp::uint n) { return w.initIds(n); });
    put_list(x.offsets, [&](capnp::uint n) { return w.initOffsets(n); });
    put_position(m.end, r.initEnd());
    r.setIncarnation(m.incarnation);
    r.setExamplesBefore(m.examples_before);
  }
  void operator()(const end_of_data& m) {
    auto r = b.initEndOfData();
    r.setReaderIndex(m.reader_index);
    r.setBatches(m.batches);
  }
  void operator()(const batch_ack& m) {
    auto r = b.initBatchAck();
    r.setReaderIndex(m.reader_index);
    r.setSequence(m.sequence);
    r.setIncarnation(m.incarnation);
  }
  void operator()(const lookup_request& m) {
    auto r = b.initLookupRequest();
    r.setCreate(m.create);
    put_list(m.tables, [&](capnp::uint n) { return r.initTables(n); });
    put_list(m.ids, [&](capnp::uint n) { return r.initIds(n); });
  }
  void operator()(const lookup_reply& m) {
    auto r = b.initLookupReply();
    r.setDim(m.dim);
    put_list(m.values, [&](capnp::uint n) { return r.initValues(n); });
  }
  void operator()(const push_request& m) {
    auto r = b.initPushRequest();
    put_list(m.tables, [&](capnp::uint n) { return r.initTables(n); });
    put_list(m.ids, [&](capnp::uint n) { return r.initIds(n); });
    put_list(m.grads, [&](capnp::uint n) { return r.initGrads(n); });
    r.setLrScale(m.lr_scale);
  }
  void operator()(const push_reply& m) { b.initPushReply().setRows(m.rows); }
  void operator()(const dense_request&) { b.initDenseRequest(); }
  void operator()(const dense_reply& m) {
    auto r = b.initDenseReply();
    r.setVersion(m.version);
    put_list(m.params, [&](capnp::uint n) { return r.initParams(n); });
    put_list(m.momentum, [&](capnp::uint n) { return r.initMomentum(n); });
  }
  void operator()(const sync_restore& m) {
    auto r = b.initSyncRestore();
    r.setSlice(m.slice);
    put_list(m.params, [&](capnp::uint n) { return r.initParams(n); });
    put_list(m.momentum, [&](capnp::uint n) { return r.initMomentum(n); });
  }
  void operator()(const export_request& m) {
    auto r = b.initExportRequest();
    if (!m.path.empty()) r.setPath(text(m.path));
  }
  void operator()(const export_reply& m) {
    auto r = b.initExportReply();
    if (!m.path.empty()) r.setPath(text(m.path));
    r.setRows(m.rows);
    r.setBytes(m.bytes);
    r.setSeconds(m.seconds);
  }
  void operator()(const dense_report& m) {
    auto r = b.initDenseReport();
    r.setTrainer(m.trainer);
    r.setExamples(m.examples);
    put_list(m.params, [&](capnp::uint n) { return r.initParams(n); });
  }
  void operator()(const sync_request& m) {
    auto r = b.initSyncRequest();
    r.setTrainer(m.trainer);
    r.setSlice(m.slice);
    r.setOffset(m.offset);
    r.setBatches(m.batches);
    put_list(m.params, [&](capnp::uint n) { return r.initParams(n); });
  }
  void operator()(const sync_reply& m) {
    auto r = b.initSyncReply();
    r.setRound(m.round);
    r.setIsDelta(m.is_delta);
    r.setParticipants(m.participants);
    r.setDistance(m.distance);
    put_list(m.params, [&](capnp::uint n) { return r.initParams(n); });
  }
  void operator()(const snapshot_now&) { b.initSnapshotNow(); }
  void operator()(const snapshot_request& m) {
    auto r = b.initSnapshotRequest();
    r.setSnapshotId(m.snapshot_id);
    put_list(m.keep, [&](capnp::uint n) { return r.initKeep(n); });
  }
  void operator()(const snapshot_reply& m) {
    auto r = b.initSnapshotReply();
    r.setSnapshotId(m.snapshot_id);
    if (!m.path.empty()) r.setPath(text(m.path));
    r.setRows(m.rows);
    r.setBytes(m.bytes);
    r.setChecksum(m.checksum);
    r.setSeconds(m.seconds);
  }
  void operator()(const dump_request& m) {
    auto r = b.initDumpRequest();
    r.setTable(m.table);
    r.setPosition(m.position);
    r.setMaxRows(m.max_rows);
  }
  void operator()(const dump_reply& m) {
    auto r = b.initDumpReply();
    put_list(m.tables, [&](capnp::uint n) { return r.initTables(n); });
    put_list(m.ids, [&](capnp::uint n) { return r.initIds(n); });
    put_list(m.values, [&](capnp::uint n) { return r.initValues(n); });
    r.setNextTable(m.next_table);
    r.setNextPosition(m.next_position);
    r.setDone(m.done);
  }
  void operator()(const status_request&) { b.initStatusRequest(); }
  void operator()(const status_reply& m) {
    auto r = b.initStatusReply();
    if (!m.json.empty()) r.setJson(text(m.json));
  }
  void operator()(const stop_request& m) {
    auto r = b.initStopRequest();
    if (!m.reason.empty()) r.setReason(text(m.reason));
  }
  void operator()(const ack&) { b.initAck(); }
};

void write_u32(std::uint8_t* at, std::uint32_t v) { std::memcpy(at, &v, sizeof v); }
std::uint32_t read_u32(const std::uint8_t* at) {
  std::uint32_t v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// A MessageBuilder whose first segment is the frame it will return, one word after the segment
// table. Frames are zeroed on allocation, as capnp requires of new segments.
class frame_builder final : public capnp::MessageBuilder {
 public:
  explicit frame_builder(std::size_t words)
      : words_(std::clamp<std::size_t>(words, 1, (std::size_t{1} << 29) - 1)),
        frame_(std::make_shared<frame_bytes>((words_ + 1) * sizeof(capnp::word))) {}

  kj::ArrayPtr<capnp::word> allocateSegment(capnp::uint minimum) override {
    if (!first_taken_ && minimum <= words_) {
      first_taken_ = true;
      return {first(), words_};
    }
    first_taken_ = true;
    const std::size_t n = std::max<std::size_t>({minimum, words_, 1024});
    spill_.push_back(std::make_unique<std::uint64_t[]>(n));  // value-initialized: zeroed
    return {reinterpret_cast<capnp::word*>(spill_.back().get()), n};
  }

  frame finish() {
    auto segments = getSegmentsForOutput();
    if (segments.size() == 1 && segments[0].begin() == first() && segments[0].size() == words_) {
      write_u32(frame_->mutable_data(), 0);  // segment count - 1
      write_u32(frame_->mutable_data() + 4, static_cast<std::uint32_t>(words_));
      return std::move(frame_);
    }
    // The size estimate was off: one copy into a frame of the right size.
    const std::size_t total = capnp::computeSerializedSizeInWords(segments);
    auto out = std::make_shared<frame_bytes>(total * sizeof(capnp::word));
    std::uint8_t* p = out->mutable_data();
    write_u32(p, static_cast<std::uint32_t>(segments.size() - 1));
    for (std::size_t i = 0; i < segments.size(); ++i) {
      write_u32(p + 4 * (i + 1), static_cast<std::uint32_t>(segments[i].size()));
    }
    p += (segments.size() / 2 + 1) * sizeof(capnp::word);
    for (const auto& s : segments) {
      std::memcpy(p, s.begin(), s.size() * sizeof(capnp::word));
      p += s.size() * sizeof(capnp::word);
    }
    return out;
  }

 private:
  capnp::word* first() { return reinterpret_cast<capnp::word*>(frame_->mutable_data()) + 1; }

  std::size_t words_;
  std::shared_ptr<frame_bytes> frame_;
  bool first_taken_ = false;
  std::vector<std::unique_ptr<std::uint64_t[]>> spill_;
};

// ---- decoding: errors -----------------------------------------------------------------------

std::string num(std::uint64_t v) { return std::to_string(v); }
std::string real(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

status parse_error(std::string message) { return status(errc::parse_error, std::move(message)); }

// "Message ends prematurely in first segment." out of kj's
// "expected array.size() >= offset + segmentSize; Message ends prematurely in first segment."
std::string describe(const kj::Exception& e) {
  std::string d(e.getDescription().cStr());
  if (d.rfind("expected ", 0) == 0) {
    auto semi = d.find("; ");
    if (semi != std::string::npos) d.erase(0, semi + 2);
  }
  return d;
}

// ---- decoding: the frame --------------------------------------------------------------------

constexpr std::uint32_t max_segments = 512;  // what capnp's stream reader accepts

status check_size(std::size_t size, const decode_limits& limits) {
  if (size > limits.max_frame_bytes) {
    return status(errc::resource_exhausted, "frame of " + num(size) +
                                                " bytes is over the limit of " +
                                                num(limits.max_frame_bytes) + " bytes");
  }
  if (size == 0) return parse_error("empty frame");
  if (size % sizeof(capnp::word) != 0) {
    return parse_error("frame of " + num(size) + " bytes is not a whole number of 8-byte words");
  }
  return status::ok();
}

// The segment table must describe exactly the frame: no segment past its end, no trailing bytes.
status check_segment_table(const std::uint8_t* bytes, std::size_t words) {
  const std::uint64_t count = std::uint64_t{read_u32(bytes)} + 1;
  if (count > max_segments) {
    return parse_error("frame claims " + num(count) + " segments (at most " + num(max_segments) +
                       ")");
  }
  const std::uint64_t table_words = count / 2 + 1;
  if (table_words > words) {
    return parse_error("frame of " + num(words) + " words ends inside its table of " + num(count) +
                       " segments");
  }
  std::uint64_t segment_words = 0;
  for (std::uint64_t i = 0; i < count; ++i) segment_words += read_u32(bytes + 4 * (i + 1));
  if (table_words + segment_words != words) {
    return parse_error("segment table claims " + num(table_words + segment_words) +
                       " words, the frame holds " + num(words));
  }
  return status::ok();
}

capnp::ReaderOptions reader_options(std::size_t words, const decode_limits& limits) {
  capnp::ReaderOptions o;
  // Each object of a well-formed message is read once, so the frame's own size would do; twice
  // that plus slack still stops pointers that alias one large list from multiplying our copies.
  o.traversalLimitInWords = std::uint64_t{words} * 2 + 64;
  o.nestingLimit = static_cast<int>(std::min<unsigned>(limits.nesting_limit, INT_MAX));
  return o;
}

// ---- decoding: messages, each read and then checked --------------------------------------------

status check_role(std::uint16_t v, const char* what) {
  if (v > static_cast<std::uint16_t>(role::sync)) {
    return parse_error(std::string(what) + ": role " + num(v) + " is out of range (0-" +
                       num(static_cast<std::uint64_t>(role::sync)) + ")");
  }
  return status::ok();
}

status check_state(std::uint16_t v, const char* what) {
  if (v > static_cast<std::uint16_t>(job_state::failed)) {
    return parse_error(std::string(what) + ": job state " + num(v) + " is out of range (0-" +
                       num(static_cast<std::uint64_t>(job_state::failed)) + ")");
  }
  return status::ok();
}

void get_position(schema::ReadPosition::Reader r, read_position& p) {
  p.file_index = r.getFileIndex();
  p.byte_offset = r.getByteOffset();
  p.line_number = r.getLineNumber();
  p.previous_line_crc = r.getPreviousLineCrc();
  p.file_size = r.getFileSize();
  p.epoch = r.getEpoch();
  p.window_batches = r.getWindowBatches();
}

void get_view(schema::ClusterView::Reader r, cluster_view& v) {
  v.epoch = r.getEpoch();
  get_texts(r.getShards(), v.shards);
  get_texts(r.getReaders(), v.readers);
  get_texts(r.getTrainers(), v.trainers);
  get_texts(r.getSyncs(), v.syncs);
  get_list<std::uint64_t>(r.getTrainerIncarnations(), v.trainer_incarnations);
  get_list<std::uint64_t>(r.getShardIncarnations(), v.shard_incarnations);
  get_list<std::uint64_t>(r.getSyncIncarnations(), v.sync_incarnations);
  get_list<std::uint64_t>(r.getReaderIncarnations(), v.reader_incarnations);
  v.epochs_open = r.getEpochsOpen();
  v.epochs_stop = r.getEpochsStop();
}

status get(schema::ErrorReply::Reader r, error_reply& m) {
  const auto code = static_cast<std::uint16_t>(r.getCode());
  if (code == static_cast<std::uint16_t>(errc::ok)) {
    return parse_error("error_reply: error code 0 (ok) is not an error");
  }
  if (code > static_cast<std::uint16_t>(errc::permission_denied)) {
    return parse_error("error_reply: error code " + num(code) + " is out of range (1-" +
                       num(static_cast<std::uint64_t>(errc::permission_denied)) + ")");
  }
  m.code = static_cast<errc>(code);
  m.message = get_text(r.getMessage());
  return status::ok();
}

status get(schema::RegisterRequest::Reader r, register_request& m) {
  const auto from = static_cast<std::uint16_t>(r.getFrom());
  SS_RETURN_IF_ERROR(check_role(from, "register_request"));
  m.from = static_cast<role>(from);
  m.name = get_text(r.getName());
  m.index = r.getIndex();
  m.endpoint = get_text(r.getEndpoint());
  m.incarnation = r.getIncarnation();
  return status::ok();
}

status get(schema::RegisterReply::Reader r, register_reply& m) {
  const auto state = static_cast<std::uint16_t>(r.getState());
  SS_RETURN_IF_ERROR(check_state(state, "register_reply"));
  m.state = static_cast<job_state>(state);
  m.member_id = r.getMemberId();
  m.job_config = get_text(r.getJobConfig());
  get_view(r.getView(), m.view);
  m.restore_snapshot = r.getRestoreSnapshot();
  m.has_resume_position = r.getHasResumePosition();
  if (m.has_resume_position) get_position(r.getResumePosition(), m.resume_position);
  m.resume_examples = r.getResumeExamples();
  m.job_id = r.getJobId();
  m.resume_bad_rows = r.getResumeBadRows();
  m.job_was_running = r.getJobWasRunning();
  return status::ok();
}

status get(schema::Heartbeat::Reader r, heartbeat& m) {
  m.member_id = r.getMemberId();
  auto q = r.getProgress();
  member_progress& p = m.progress;
  p.examples = q.getExamples();
  p.batches = q.getBatches();
  p.loss_sum = q.getLossSum();
  p.clicks = q.getClicks();
  p.window_examples = q.getWindowExamples();
  p.window_loss_sum = q.getWindowLossSum();
  p.window_clicks = q.getWindowClicks();
  p.bytes_done = q.getBytesDone();
  p.bytes_total = q.getBytesTotal();
  p.bad_rows = q.getBadRows();
  p.rows = q.getRows();
  p.row_bytes = q.getRowBytes();
  p.finished = q.getFinished();
  p.detail = get_text(q.getDetail());
  p.active_seconds = q.getActiveSeconds();
  p.error = get_text(q.getError());
  p.sync_rounds = q.getSyncRounds();
  p.sync_gap = q.getSyncGap();
  p.sync_latency_p50_ms = q.getSyncLatencyP50Ms();
  p.sync_latency_p99_ms = q.getSyncLatencyP99Ms();
  p.sync_distance = q.getSyncDistance();
  p.sync_wait_seconds = q.getSyncWaitSeconds();
  p.has_committed = q.getHasCommitted();
  if (p.has_committed) get_position(q.getCommitted(), p.committed);
  p.committed_examples = q.getCommittedExamples();
  p.committed_bad_rows = q.getCommittedBadRows();
  p.epochs_done = q.getEpochsDone();
  return status::ok();
}

status get(schema::HeartbeatReply::Reader r, heartbeat_reply& m) {
  const auto state = static_cast<std::uint16_t>(r.getState());
  SS_RETURN_IF_ERROR(check_state(state, "heartbeat_reply"));
  m.state = static_cast<job_state>(state);
  get_view(r.getView(), m.view);
  m.known = r.getKnown();
  return status::ok();
}

status get(schema::Leave::Reader r, leave& m) {
  m.member_id = r.getMemberId();
  m.reason = get_text(r.getReason());
  return status::ok();
}

status get(schema::PullRequest::Reader r, pull_request& m) {
  m.credits = r.getCredits();
  m.trainer = r.getTrainer();
  return status::ok();
}

// Every length that the batch's counts imply, the CSR offsets, and the labels.
status check_batch(const data::example_batch& b, std::uint64_t n) {
  const char* what = "batch_message: ";
  if (b.labels.size() != n) {
    return parse_error(what + num(b.labels.size()) + " labels for " + num(n) + " examples");
  }
  if (b.dense.size() != n * b.num_dense) {
    return parse_error(what + num(b.dense.size()) + " dense values for " + num(n) + " examples x " +
                       num(b.num_dense) + " dense features");
  }
  const std::uint64_t offsets = n * b.num_sparse + 1;  // < 2^64: both factors are 32-bit
  if (b.offsets.size() != offsets) {
    return parse_error(what + num(b.offsets.size()) + " offsets for " + num(n) + " examples x " +
                       num(b.num_sparse) + " sparse features (expected " + num(offsets) + ")");
  }
  if (b.offsets[0] != 0) {
    return parse_error(what + std::string("offsets start at ") + num(b.offsets[0]) + ", not 0");
  }
  for (std::size_t i = 1; i < b.offsets.size(); ++i) {
    if (b.offsets[i] < b.offsets[i - 1]) {
      return parse_error(what + std::string("offsets decrease at index ") + num(i) + " (" +
                         num(b.offsets[i - 1]) + " then " + num(b.offsets[i]) + ")");
    }
  }
  if (b.offsets.back() != b.ids.size()) {
    return parse_error(what + std::string("offsets end at ") + num(b.offsets.back()) +
                       " but the batch holds " + num(b.ids.size()) + " ids");
  }
  for (std::size_t i = 0; i < b.labels.size(); ++i) {
    if (b.labels[i] != 0.0f && b.labels[i] != 1.0f) {
      return parse_error(what + std::string("label of example ") + num(i) + " is " +
                         real(b.labels[i]) + ", not 0 or 1");
    }
  }
  return status::ok();
}

status get(schema::BatchMessage::Reader r, batch_message& m) {
  m.reader_index = r.getReaderIndex();
  m.sequence = r.getSequence();
  auto w = r.getBatch();
  data::example_batch& b = m.batch;
  b.num_dense = w.getNumDense();
  b.num_sparse = w.getNumSparse();
  get_list<float>(w.getLabels(), b.labels);
  get_list<float>(w.getDense(), b.dense);
  get_list<std::uint64_t>(w.getIds(), b.ids);
  get_list<std::uint32_t>(w.getOffsets(), b.offsets);
  SS_RETURN_IF_ERROR(check_batch(b, w.getExamples()));
  get_position(r.getEnd(), m.end);
  m.incarnation = r.getIncarnation();
  m.examples_before = r.getExamplesBefore();
  return status::ok();
}

status get(schema::EndOfData::Reader r, end_of_data& m) {
  m.reader_index = r.getReaderIndex();
  m.batches = r.getBatches();
  return status::ok();
}

status get(schema::BatchAck::Reader r, batch_ack& m) {
  m.reader_index = r.getReaderIndex();
  m.sequence = r.getSequence();
  m.incarnation = r.getIncarnation();
  return status::ok();
}

status get(schema::LookupRequest::Reader r, lookup_request& m) {
  m.create = r.getCreate();
  get_list<std::uint32_t>(r.getTables(), m.tables);
  get_list<std::uint64_t>(r.getIds(), m.ids);
  if (m.tables.size() != m.ids.size()) {
    return parse_error("lookup_request: " + num(m.tables.size()) + " tables for " +
                       num(m.ids.size()) + " ids (one table per id)");
  }
  return status::ok();
}

status get(schema::LookupReply::Reader r, lookup_reply& m) {
  m.dim = r.getDim();
  get_list<float>(r.getValues(), m.values);
  if (!m.values.empty() && m.dim == 0) {
    return parse_error("lookup_reply: " + num(m.values.size()) + " values with dim 0");
  }
  if (!m.values.empty() && m.values.size() % m.dim != 0) {
    return parse_error("lookup_reply: " + num(m.values.size()) +
                       " values are not a whole number of rows of dim " + num(m.dim));
  }
  return status::ok();
}

status get(schema::PushRequest::Reader r, push_request& m) {
  get_list<std::uint32_t>(r.getTables(), m.tables);
  get_list<std::uint64_t>(r.getIds(), m.ids);
  get_list<float>(r.getGrads(), m.grads);
  m.lr_scale = r.getLrScale();
  if (!(m.lr_scale >= 0.0f && m.lr_scale <= 1.0f))  // also NaN
    return parse_error("push_request: learning-rate scale " + std::to_string(m.lr_scale) + " outside [0, 1]");
  if (m.tables.size() != m.ids.size()) {
    return parse_error("push_request: " + num(m.tables.size()) + " tables for " +
                       num(m.ids.size()) + " ids (one table per id)");
  }
  const bool whole_rows =
      m.ids.empty() ? m.grads.empty() : !m.grads.empty() && m.grads.size() % m.ids.size() == 0;
  if (!whole_rows) {
    return parse_error("push_request: " + num(m.grads.size()) + " grads for " + num(m.ids.size()) +
                       " ids (not a positive multiple)");
  }
  return status::ok();
}

status get(schema::PushReply::Reader r, push_reply& m) {
  m.rows = r.getRows();
  return status::ok();
}

status get(schema::DenseRequest::Reader, dense_request&) { return status::ok(); }

status get(schema::DenseReply::Reader r, dense_reply& m) {
  m.version = r.getVersion();
  get_list<float>(r.getParams(), m.params);
  get_list<float>(r.getMomentum(), m.momentum);
  return status::ok();
}

status get(schema::SyncRestore::Reader r, sync_restore& m) {
  m.slice = r.getSlice();
  get_list<float>(r.getParams(), m.params);
  get_list<float>(r.getMomentum(), m.momentum);
  if (!m.momentum.empty() && m.momentum.size() != m.params.size())
    return parse_error("sync_restore: " + num(m.momentum.size()) + " momentum values for " + num(m.params.size()) +
                       " parameters");
  return status::ok();
}

status get(schema::ExportRequest::Reader r, export_request& m) {
  m.path = get_text(r.getPath());
  return status::ok();
}

status get(schema::ExportReply::Reader r, export_reply& m) {
  m.path = get_text(r.getPath());
  m.rows = r.getRows();
  m.bytes = r.getBytes();
  m.seconds = r.getSeconds();
  return status::ok();
}

status get(schema::DenseReport::Reader r, dense_report& m) {
  m.trainer = r.getTrainer();
  m.examples = r.getExamples();
  get_list<float>(r.getParams(), m.params);
  return status::ok();
}

status get(schema::SyncRequest::Reader r, sync_request& m) {
  m.trainer = r.getTrainer();
  m.slice = r.getSlice();
  m.offset = r.getOffset();
  m.batches = r.getBatches();
  get_list<float>(r.getParams(), m.params);
  return status::ok();
}

status get(schema::SyncReply::Reader r, sync_reply& m) {
  m.round = r.getRound();
  m.is_delta = r.getIsDelta();
  m.participants = r.getParticipants();
  m.distance = r.getDistance();
  get_list<float>(r.getParams(), m.params);
  return status::ok();
}

status get(schema::SnapshotNow::Reader, snapshot_now&) { return status::ok(); }

status get(schema::SnapshotRequest::Reader r, snapshot_request& m) {
  m.snapshot_id = r.getSnapshotId();
  get_list<std::uint64_t>(r.getKeep(), m.keep);
  return status::ok();
}

status get(schema::SnapshotReply::Reader r, snapshot_reply& m) {
  m.snapshot_id = r.getSnapshotId();
  m.path = get_text(r.getPath());
  m.rows = r.getRows();
  m.bytes = r.getBytes();
  m.checksum = r.getChecksum();
  m.seconds = r.getSeconds();
  return status::ok();
}

status get(schema::DumpRequest::Reader r, dump_request& m) {
  m.table = r.getTable();
  m.position = r.getPosition();
  m.max_rows = r.getMaxRows();
  return status::ok();
}

status get(schema::DumpReply::Reader r, dump_reply& m) {
  get_list<std::uint32_t>(r.getTables(), m.tables);
  get_list<std::uint64_t>(r.getIds(), m.ids);
  get_list<float>(r.getValues(), m.values);
  m.next_table = r.getNextTable();
  m.next_position = r.getNextPosition();
  m.done = r.getDone();
  if (m.tables.size() != m.ids.size())
    return parse_error("dump_reply: " + num(m.tables.size()) + " tables for " + num(m.ids.size()) + " ids");
  if (m.ids.empty() ? !m.values.empty() : m.values.size() % m.ids.size() != 0)
    return parse_error("dump_reply: " + num(m.values.size()) + " values for " + num(m.ids.size()) +
                       " ids (not a whole number of rows)");
  return status::ok();
}

status get(schema::StatusRequest::Reader, status_request&) { return status::ok(); }

status get(schema::StatusReply::Reader r, status_reply& m) {
  m.json = get_text(r.getJson());
  return status::ok();
}

status get(schema::StopRequest::Reader r, stop_request& m) {
  m.reason = get_text(r.getReason());
  return status::ok();
}

status get(schema::Ack::Reader, ack&) { return status::ok(); }

template <class T, class Reader>
status get_into(Reader r, body& out) {
  T m;
  SS_RETURN_IF_ERROR(get(r, m));
  out = std::move(m);
  return status::ok();
}

status get_body(Body::Reader r, body& out) {
  switch (r.which()) {
    case Body::ERROR_REPLY: return get_into<error_reply>(r.getErrorReply(), out);
    case Body::REGISTER_REQUEST: return get_into<register_request>(r.getRegisterRequest(), out);
    case Body::REGISTER_REPLY: return get_into<register_reply>(r.getRegisterReply(), out);
    case Body::HEARTBEAT: return get_into<heartbeat>(r.getHeartbeat(), out);
    case Body::HEARTBEAT_REPLY: return get_into<heartbeat_reply>(r.getHeartbeatReply(), out);
    case Body::LEAVE: return get_into<leave>(r.getLeave(), out);
    case Body::PULL_REQUEST: return get_into<pull_request>(r.getPullRequest(), out);
    case Body::BATCH_MESSAGE: return get_into<batch_message>(r.getBatchMessage(), out);
    case Body::END_OF_DATA: return get_into<end_of_data>(r.getEndOfData(), out);
    case Body::BATCH_ACK: return get_into<batch_ack>(r.getBatchAck(), out);
    case Body::LOOKUP_REQUEST: return get_into<lookup_request>(r.getLookupRequest(), out);
    case Body::LOOKUP_REPLY: return get_into<lookup_reply>(r.getLookupReply(), out);
    case Body::PUSH_REQUEST: return get_into<push_request>(r.getPushRequest(), out);
    case Body::PUSH_REPLY: return get_into<push_reply>(r.getPushReply(), out);
    case Body::DENSE_REQUEST: return get_into<dense_request>(r.getDenseRequest(), out);
    case Body::DENSE_REPLY: return get_into<dense_reply>(r.getDenseReply(), out);
    case Body::DENSE_REPORT: return get_into<dense_report>(r.getDenseReport(), out);
    case Body::STATUS_REQUEST: return get_into<status_request>(r.getStatusRequest(), out);
    case Body::STATUS_REPLY: return get_into<status_reply>(r.getStatusReply(), out);
    case Body::STOP_REQUEST: return get_into<stop_request>(r.getStopRequest(), out);
    case Body::ACK: return get_into<ack>(r.getAck(), out);
    case Body::SYNC_REQUEST: return get_into<sync_request>(r.getSyncRequest(), out);
    case Body::SYNC_REPLY: return get_into<sync_reply>(r.getSyncReply(), out);
    case Body::SNAPSHOT_NOW: return get_into<snapshot_now>(r.getSnapshotNow(), out);
    case Body::SNAPSHOT_REQUEST: return get_into<snapshot_request>(r.getSnapshotRequest(), out);
    case Body::SNAPSHOT_REPLY: return get_into<snapshot_reply>(r.getSnapshotReply(), out);
    case Body::DUMP_REQUEST: return get_into<dump_request>(r.getDumpRequest(), out);
    case Body::DUMP_REPLY: return get_into<dump_reply>(r.getDumpReply(), out);
    case Body::SYNC_RESTORE: return get_into<sync_restore>(r.getSyncRestore(), out);
    case Body::EXPORT_REQUEST: return get_into<export_request>(r.getExportRequest(), out);
    case Body::EXPORT_REPLY: return get_into<export_reply>(r.getExportReply(), out);
  }
  return parse_error("unknown message type " + num(static_cast<std::uint16_t>(r.which())) +
                     " (sent by a newer peer?)");
}

std::string version_mismatch_message(std::uint16_t peer) {
  return "peer speaks protocol " + num(peer) + ", this build speaks " + num(protocol_version);
}

// `bytes` is word aligned and its size was checked by check_size.
result<envelope> decode_words(const std::uint8_t* bytes, std::size_t size,
                              const decode_limits& limits) {
  const std::size_t words = size / sizeof(capnp::word);
  SS_RETURN_IF_ERROR(check_segment_table(bytes, words));
  try {
    capnp::FlatArrayMessageReader reader(
        kj::ArrayPtr<const capnp::word>(reinterpret_cast<const capnp::word*>(bytes), words),
        reader_options(words, limits));
    auto root = reader.getRoot<schema::Envelope>();
    envelope e;
    e.version = root.getVersion();
    if (e.version != protocol_version) {
      return status(errc::version_mismatch, version_mismatch_message(e.version));
    }
    e.request_id = root.getRequestId();
    SS_RETURN_IF_ERROR(get_body(root.getBody(), e.message));
    return result<envelope>(std::move(e));
  } catch (const kj::Exception& ex) {
    return parse_error("malformed frame: " + describe(ex));
  } catch (const std::exception& ex) {
    return parse_error(std::string("malformed frame: ") + ex.what());
  }
}

}  // namespace

frame encode(const envelope& e) {
  const std::size_t words =
      1 + struct_words<schema::Envelope>() + std::visit(encoded_words{}, e.message);
  try {
    frame_builder builder(words);
    auto root = builder.initRoot<schema::Envelope>();
    root.setVersion(e.version);
    root.setRequestId(e.request_id);
    std::visit(body_writer{root.initBody()}, e.message);
    return builder.finish();
  } catch (const kj::Exception& ex) {
    throw std::length_error("ss::wire::encode: " + describe(ex));
  }
}

result<envelope> decode(const frame_bytes& bytes, const decode_limits& limits) {
  SS_RETURN_IF_ERROR(check_size(bytes.size(), limits));
  return decode_words(bytes.data(), bytes.size(), limits);
}

result<envelope> decode(const std::uint8_t* data, std::size_t size, const decode_limits& limits) {
  SS_RETURN_IF_ERROR(check_size(size, limits));
  if (data == nullptr) return parse_error("null frame data");
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(capnp::word) == 0) {
    return decode_words(data, size, limits);
  }
  // capnp 0.9 refuses unaligned segments even on x86; ZeroMQ often hands them out.
  std::unique_ptr<std::uint64_t[]> aligned(new (std::nothrow)
                                               std::uint64_t[size / sizeof(std::uint64_t)]);
  if (!aligned) {
    return status(errc::resource_exhausted,
                  "no memory for an aligned copy of a frame of " + num(size) + " bytes");
  }
  std::memcpy(aligned.get(), data, size);
  return decode_words(reinterpret_cast<const std::uint8_t*>(aligned.get()), size, limits);
}

result<envelope_header> peek_header(const frame_bytes& bytes, const decode_limits& limits) {
  SS_RETURN_IF_ERROR(check_size(bytes.size(), limits));
  const std::size_t words = bytes.size() / sizeof(capnp::word);
  SS_RETURN_IF_ERROR(check_segment_table(bytes.data(), words));
  try {
    capnp::FlatArrayMessageReader reader(
        kj::ArrayPtr<const capnp::word>(reinterpret_cast<const capnp::word*>(bytes.data()), words),
        reader_options(words, limits));
    auto root = reader.getRoot<schema::Envelope>();
    return envelope_header{root.getVersion(), root.getRequestId()};
  } catch (const kj::Exception& ex) {
    return parse_error("malformed frame: " + describe(ex));
  } catch (const std::exception& ex) {
    return parse_error(std::string("malformed frame: ") + ex.what());
  }
}

}  // namespace ss::wire
