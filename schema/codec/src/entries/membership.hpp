// Codec entries of schema/membership.capnp: registration, heartbeats and leaving, with the
// cluster view and a member's progress they carry. See table.hpp for what an entry is.
#pragma once

#include "../wire_fields.hpp"
#include "common.hpp"
#include "data.hpp"

namespace ss::wire::detail {

template <>
struct codec<cluster_view> {
  using Wire = schema::ClusterView;
  using fields = field_list<Wire,
      field<&cluster_view::epoch, &Wire::Builder::setEpoch, &Wire::Reader::getEpoch>,
      list<&cluster_view::shards, &Wire::Builder::initShards, &Wire::Reader::getShards>,
      list<&cluster_view::readers, &Wire::Builder::initReaders, &Wire::Reader::getReaders>,
      list<&cluster_view::trainers, &Wire::Builder::initTrainers, &Wire::Reader::getTrainers>,
      list<&cluster_view::syncs, &Wire::Builder::initSyncs, &Wire::Reader::getSyncs>,
      list<&cluster_view::trainer_incarnations, &Wire::Builder::initTrainerIncarnations,
           &Wire::Reader::getTrainerIncarnations>,
      list<&cluster_view::shard_incarnations, &Wire::Builder::initShardIncarnations,
           &Wire::Reader::getShardIncarnations>,
      list<&cluster_view::sync_incarnations, &Wire::Builder::initSyncIncarnations,
           &Wire::Reader::getSyncIncarnations>,
      list<&cluster_view::reader_incarnations, &Wire::Builder::initReaderIncarnations,
           &Wire::Reader::getReaderIncarnations>,
      field<&cluster_view::epochs_open, &Wire::Builder::setEpochsOpen, &Wire::Reader::getEpochsOpen>,
      field<&cluster_view::epochs_stop, &Wire::Builder::setEpochsStop, &Wire::Reader::getEpochsStop>,
      field<&cluster_view::coordinator, &Wire::Builder::setCoordinator, &Wire::Reader::getCoordinator>,
      list<&cluster_view::trainer_memberships, &Wire::Builder::initTrainerMemberships,
           &Wire::Reader::getTrainerMemberships>,
      list<&cluster_view::dropped_trainers, &Wire::Builder::initDroppedTrainers, &Wire::Reader::getDroppedTrainers>,
      field<&cluster_view::input_closed, &Wire::Builder::setInputClosed, &Wire::Reader::getInputClosed>,
      field<&cluster_view::hold_input, &Wire::Builder::setHoldInput, &Wire::Reader::getHoldInput>,
      field<&cluster_view::placement_shards, &Wire::Builder::setPlacementShards, &Wire::Reader::getPlacementShards>,
      field<&cluster_view::reshaping, &Wire::Builder::setReshaping, &Wire::Reader::getReshaping>>;
};

template <>
struct codec<progressive_window> {
  using Wire = schema::ProgressiveWindow;
  using W = progressive_window;
  using fields = field_list<Wire,
      list<&W::start_ages, &Wire::Builder::initStartAges, &Wire::Reader::getStartAges>,
      list<&W::end_ages, &Wire::Builder::initEndAges, &Wire::Reader::getEndAges>,
      list<&W::examples, &Wire::Builder::initExamples, &Wire::Reader::getExamples>,
      list<&W::clicks, &Wire::Builder::initClicks, &Wire::Reader::getClicks>,
      list<&W::prediction_sums, &Wire::Builder::initPredictionSums, &Wire::Reader::getPredictionSums>,
      list<&W::log_loss_sums, &Wire::Builder::initLogLossSums, &Wire::Reader::getLogLossSums>,
      list<&W::bucket_counts, &Wire::Builder::initBucketCounts, &Wire::Reader::getBucketCounts>,
      list<&W::buckets, &Wire::Builder::initBuckets, &Wire::Reader::getBuckets>,
      list<&W::bucket_clicks, &Wire::Builder::initBucketClicks, &Wire::Reader::getBucketClicks>,
      list<&W::bucket_non_clicks, &Wire::Builder::initBucketNonClicks, &Wire::Reader::getBucketNonClicks>>;
};

template <>
struct codec<member_progress> {
  using Wire = schema::MemberProgress;
  using P = member_progress;
  using fields = field_list<Wire,
      field<&P::examples, &Wire::Builder::setExamples, &Wire::Reader::getExamples>,
      field<&P::batches, &Wire::Builder::setBatches, &Wire::Reader::getBatches>,
      field<&P::loss_sum, &Wire::Builder::setLossSum, &Wire::Reader::getLossSum>,
      field<&P::clicks, &Wire::Builder::setClicks, &Wire::Reader::getClicks>,
      field<&P::window_examples, &Wire::Builder::setWindowExamples, &Wire::Reader::getWindowExamples>,
      field<&P::window_loss_sum, &Wire::Builder::setWindowLossSum, &Wire::Reader::getWindowLossSum>,
      field<&P::window_clicks, &Wire::Builder::setWindowClicks, &Wire::Reader::getWindowClicks>,
      field<&P::bytes_done, &Wire::Builder::setBytesDone, &Wire::Reader::getBytesDone>,
      field<&P::bytes_total, &Wire::Builder::setBytesTotal, &Wire::Reader::getBytesTotal>,
      field<&P::bad_rows, &Wire::Builder::setBadRows, &Wire::Reader::getBadRows>,
      field<&P::rows, &Wire::Builder::setRows, &Wire::Reader::getRows>,
      field<&P::row_bytes, &Wire::Builder::setRowBytes, &Wire::Reader::getRowBytes>,
      field<&P::finished, &Wire::Builder::setFinished, &Wire::Reader::getFinished>,
      field<&P::detail, &Wire::Builder::setDetail, &Wire::Reader::getDetail>,
      field<&P::active_seconds, &Wire::Builder::setActiveSeconds, &Wire::Reader::getActiveSeconds>,
      field<&P::error, &Wire::Builder::setError, &Wire::Reader::getError>,
      field<&P::sync_rounds, &Wire::Builder::setSyncRounds, &Wire::Reader::getSyncRounds>,
      field<&P::sync_gap, &Wire::Builder::setSyncGap, &Wire::Reader::getSyncGap>,
      field<&P::sync_latency_p50_ms, &Wire::Builder::setSyncLatencyP50Ms, &Wire::Reader::getSyncLatencyP50Ms>,
      field<&P::sync_latency_p99_ms, &Wire::Builder::setSyncLatencyP99Ms, &Wire::Reader::getSyncLatencyP99Ms>,
      field<&P::sync_distance, &Wire::Builder::setSyncDistance, &Wire::Reader::getSyncDistance>,
      field<&P::sync_wait_seconds, &Wire::Builder::setSyncWaitSeconds, &Wire::Reader::getSyncWaitSeconds>,
      optional<field<&P::has_committed, &Wire::Builder::setHasCommitted, &Wire::Reader::getHasCommitted>,
               nested<&P::committed, &Wire::Builder::initCommitted, &Wire::Reader::getCommitted>>,
      field<&P::committed_examples, &Wire::Builder::setCommittedExamples, &Wire::Reader::getCommittedExamples>,
      field<&P::committed_bad_rows, &Wire::Builder::setCommittedBadRows, &Wire::Reader::getCommittedBadRows>,
      field<&P::epochs_done, &Wire::Builder::setEpochsDone, &Wire::Reader::getEpochsDone>,
      field<&P::sync_bytes, &Wire::Builder::setSyncBytes, &Wire::Reader::getSyncBytes>,
      nested<&P::progressive, &Wire::Builder::initProgressive, &Wire::Reader::getProgressive>,
      field<&P::batches_in_flight, &Wire::Builder::setBatchesInFlight, &Wire::Reader::getBatchesInFlight>,
      field<&P::view_epoch, &Wire::Builder::setViewEpoch, &Wire::Reader::getViewEpoch>>;
};

// ---- messages -----------------------------------------------------------------------------------

template <>
struct codec<register_request>
    : union_member<Body::REGISTER_REQUEST, &Body::Builder::initRegisterRequest, &Body::Reader::getRegisterRequest> {
  static constexpr const char* name = "register_request";
  using fields = field_list<Wire,
      enumeration<&register_request::from, &Wire::Builder::setFrom, &Wire::Reader::getFrom, check_role>,
      field<&register_request::name, &Wire::Builder::setName, &Wire::Reader::getName>,
      field<&register_request::index, &Wire::Builder::setIndex, &Wire::Reader::getIndex>,
      field<&register_request::endpoint, &Wire::Builder::setEndpoint, &Wire::Reader::getEndpoint>,
      field<&register_request::incarnation, &Wire::Builder::setIncarnation, &Wire::Reader::getIncarnation>,
      field<&register_request::heartbeat_interval_ms, &Wire::Builder::setHeartbeatIntervalMs,
            &Wire::Reader::getHeartbeatIntervalMs>,
      field<&register_request::host, &Wire::Builder::setHost, &Wire::Reader::getHost>,
      field<&register_request::pid, &Wire::Builder::setPid, &Wire::Reader::getPid>,
      field<&register_request::membership, &Wire::Builder::setMembership, &Wire::Reader::getMembership>>;
};

// Files' progress (register_reply, window_left): five lists of one length.
template <class Lists>
status check_progress_lists(const char* what, const Lists& m) {
  const std::size_t n = m.file_passes.size();
  if (m.file_offsets.size() == n && m.file_lines.size() == n && m.file_crcs.size() == n && m.file_sizes.size() == n)
    return status::ok();
  return parse_error(std::string(what) + ": the files' progress has " + num(n) + " passes, " +
                     num(m.file_offsets.size()) + " offsets, " + num(m.file_lines.size()) + " line numbers, " +
                     num(m.file_crcs.size()) + " CRCs and " + num(m.file_sizes.size()) + " sizes");
}

template <>
struct codec<window_left> {
  using Wire = schema::WindowLeft;
  using W = window_left;
  using fields = field_list<Wire,
      field<&W::readers, &Wire::Builder::setReaders, &Wire::Reader::getReaders>,
      field<&W::reader, &Wire::Builder::setReader, &Wire::Reader::getReader>,
      field<&W::epoch, &Wire::Builder::setEpoch, &Wire::Reader::getEpoch>,
      field<&W::handed, &Wire::Builder::setHanded, &Wire::Reader::getHanded>,
      nested<&W::start, &Wire::Builder::initStart, &Wire::Reader::getStart>,
      list<&W::file_passes, &Wire::Builder::initFilePasses, &Wire::Reader::getFilePasses>,
      list<&W::file_offsets, &Wire::Builder::initFileOffsets, &Wire::Reader::getFileOffsets>,
      list<&W::file_lines, &Wire::Builder::initFileLines, &Wire::Reader::getFileLines>,
      list<&W::file_crcs, &Wire::Builder::initFileCrcs, &Wire::Reader::getFileCrcs>,
      list<&W::file_sizes, &Wire::Builder::initFileSizes, &Wire::Reader::getFileSizes>>;
};

// The state comes first so that it is checked before anything else is read.
template <>
struct codec<register_reply>
    : union_member<Body::REGISTER_REPLY, &Body::Builder::initRegisterReply, &Body::Reader::getRegisterReply> {
  static constexpr const char* name = "register_reply";
  using R = register_reply;
  using fields = field_list<Wire,
      enumeration<&R::state, &Wire::Builder::setState, &Wire::Reader::getState, check_state>,
      field<&R::member_id, &Wire::Builder::setMemberId, &Wire::Reader::getMemberId>,
      field<&R::job_config, &Wire::Builder::setJobConfig, &Wire::Reader::getJobConfig>,
      nested<&R::view, &Wire::Builder::initView, &Wire::Reader::getView>,
      field<&R::restore_snapshot, &Wire::Builder::setRestoreSnapshot, &Wire::Reader::getRestoreSnapshot>,
      optional<field<&R::has_resume_position, &Wire::Builder::setHasResumePosition,
                     &Wire::Reader::getHasResumePosition>,
               nested<&R::resume_position, &Wire::Builder::initResumePosition, &Wire::Reader::getResumePosition>>,
      field<&R::resume_examples, &Wire::Builder::setResumeExamples, &Wire::Reader::getResumeExamples>,
      field<&R::job_id, &Wire::Builder::setJobId, &Wire::Reader::getJobId>,
      field<&R::resume_bad_rows, &Wire::Builder::setResumeBadRows, &Wire::Reader::getResumeBadRows>,
      field<&R::job_was_running, &Wire::Builder::setJobWasRunning, &Wire::Reader::getJobWasRunning>,
      field<&R::membership, &Wire::Builder::setMembership, &Wire::Reader::getMembership>,
      field<&R::restore_shards, &Wire::Builder::setRestoreShards, &Wire::Reader::getRestoreShards>,
      list<&R::file_passes, &Wire::Builder::initFilePasses, &Wire::Reader::getFilePasses>,
      list<&R::file_offsets, &Wire::Builder::initFileOffsets, &Wire::Reader::getFileOffsets>,
      list<&R::file_lines, &Wire::Builder::initFileLines, &Wire::Reader::getFileLines>,
      list<&R::file_crcs, &Wire::Builder::initFileCrcs, &Wire::Reader::getFileCrcs>,
      list<&R::file_sizes, &Wire::Builder::initFileSizes, &Wire::Reader::getFileSizes>,
      field<&R::schedule_examples, &Wire::Builder::setScheduleExamples, &Wire::Reader::getScheduleExamples>,
      struct_list<&R::windows_left, &Wire::Builder::initWindowsLeft, &Wire::Reader::getWindowsLeft>>;

  static status check(const register_reply& m) {
    SS_RETURN_IF_ERROR(check_progress_lists("register_reply", m));
    for (const auto& w : m.windows_left) SS_RETURN_IF_ERROR(check_progress_lists("register_reply: a window left", w));
    return status::ok();
  }
};

template <>
struct codec<heartbeat> : union_member<Body::HEARTBEAT, &Body::Builder::initHeartbeat, &Body::Reader::getHeartbeat> {
  static constexpr const char* name = "heartbeat";
  using fields = field_list<Wire,
      field<&heartbeat::member_id, &Wire::Builder::setMemberId, &Wire::Reader::getMemberId>,
      nested<&heartbeat::progress, &Wire::Builder::initProgress, &Wire::Reader::getProgress>>;
};

template <>
struct codec<heartbeat_reply>
    : union_member<Body::HEARTBEAT_REPLY, &Body::Builder::initHeartbeatReply, &Body::Reader::getHeartbeatReply> {
  static constexpr const char* name = "heartbeat_reply";
  using fields = field_list<Wire,
      enumeration<&heartbeat_reply::state, &Wire::Builder::setState, &Wire::Reader::getState, check_state>,
      nested<&heartbeat_reply::view, &Wire::Builder::initView, &Wire::Reader::getView>,
      field<&heartbeat_reply::known, &Wire::Builder::setKnown, &Wire::Reader::getKnown>>;
};

template <>
struct codec<leave> : union_member<Body::LEAVE, &Body::Builder::initLeave, &Body::Reader::getLeave> {
  static constexpr const char* name = "leave";
  using fields = field_list<Wire,
      field<&leave::member_id, &Wire::Builder::setMemberId, &Wire::Reader::getMemberId>,
      field<&leave::reason, &Wire::Builder::setReason, &Wire::Reader::getReason>>;
};

}  // namespace ss::wire::detail
