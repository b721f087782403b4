// Codec entries of schema/model.capnp: the dense model (central copy, replicas' reports) and the
// sync rounds between trainers and sync servers. See table.hpp for what an entry is.
#pragma once

#include "../wire_fields.hpp"

namespace ss::wire::detail {

template <>
struct codec<dense_request>
    : union_member<Body::DENSE_REQUEST, &Body::Builder::initDenseRequest, &Body::Reader::getDenseRequest> {
  static constexpr const char* name = "dense_request";
  using fields = field_list<Wire,
      field<&dense_request::optimizer, &Wire::Builder::setOptimizer, &Wire::Reader::getOptimizer>>;
};

template <>
struct codec<dense_reply>
    : union_member<Body::DENSE_REPLY, &Body::Builder::initDenseReply, &Body::Reader::getDenseReply> {
  static constexpr const char* name = "dense_reply";
  using fields = field_list<Wire,
      field<&dense_reply::version, &Wire::Builder::setVersion, &Wire::Reader::getVersion>,
      list<&dense_reply::params, &Wire::Builder::initParams, &Wire::Reader::getParams>,
      list<&dense_reply::momentum, &Wire::Builder::initMomentum, &Wire::Reader::getMomentum>,
      list<&dense_reply::optimizer, &Wire::Builder::initOptimizer, &Wire::Reader::getOptimizer>,
      field<&dense_reply::optimizer_steps, &Wire::Builder::setOptimizerSteps, &Wire::Reader::getOptimizerSteps>,
      field<&dense_reply::examples, &Wire::Builder::setExamples, &Wire::Reader::getExamples>>;
};

template <>
struct codec<dense_report>
    : union_member<Body::DENSE_REPORT, &Body::Builder::initDenseReport, &Body::Reader::getDenseReport> {
  static constexpr const char* name = "dense_report";
  using fields = field_list<Wire,
      field<&dense_report::trainer, &Wire::Builder::setTrainer, &Wire::Reader::getTrainer>,
      field<&dense_report::examples, &Wire::Builder::setExamples, &Wire::Reader::getExamples>,
      list<&dense_report::params, &Wire::Builder::initParams, &Wire::Reader::getParams>>;
};

template <>
struct codec<sync::quantized_vector> {
  using Wire = schema::QuantizedVector;
  using fields = field_list<Wire,
      field<&sync::quantized_vector::block, &Wire::Builder::setBlock, &Wire::Reader::getBlock>,
      list<&sync::quantized_vector::scales, &Wire::Builder::initScales, &Wire::Reader::getScales>,
      bytes<&sync::quantized_vector::values, &Wire::Builder::initValues, &Wire::Reader::getValues>>;
};

template <>
struct codec<sync_request>
    : union_member<Body::SYNC_REQUEST, &Body::Builder::initSyncRequest, &Body::Reader::getSyncRequest> {
  static constexpr const char* name = "sync_request";
  using fields = field_list<Wire,
      field<&sync_request::trainer, &Wire::Builder::setTrainer, &Wire::Reader::getTrainer>,
      field<&sync_request::slice, &Wire::Builder::setSlice, &Wire::Reader::getSlice>,
      field<&sync_request::offset, &Wire::Builder::setOffset, &Wire::Reader::getOffset>,
      field<&sync_request::batches, &Wire::Builder::setBatches, &Wire::Reader::getBatches>,
      list<&sync_request::params, &Wire::Builder::initParams, &Wire::Reader::getParams>,
      field<&sync_request::closing, &Wire::Builder::setClosing, &Wire::Reader::getClosing>,
      field<&sync_request::base, &Wire::Builder::setBase, &Wire::Reader::getBase>,
      nested<&sync_request::quantized, &Wire::Builder::initQuantized, &Wire::Reader::getQuantized>,
      field<&sync_request::membership, &Wire::Builder::setMembership, &Wire::Reader::getMembership>>;
};

template <>
struct codec<sync_reply>
    : union_member<Body::SYNC_REPLY, &Body::Builder::initSyncReply, &Body::Reader::getSyncReply> {
  static constexpr const char* name = "sync_reply";
  using fields = field_list<Wire,
      field<&sync_reply::round, &Wire::Builder::setRound, &Wire::Reader::getRound>,
      field<&sync_reply::is_delta, &Wire::Builder::setIsDelta, &Wire::Reader::getIsDelta>,
      field<&sync_reply::participants, &Wire::Builder::setParticipants, &Wire::Reader::getParticipants>,
      field<&sync_reply::distance, &Wire::Builder::setDistance, &Wire::Reader::getDistance>,
      list<&sync_reply::params, &Wire::Builder::initParams, &Wire::Reader::getParams>,
      field<&sync_reply::sequence, &Wire::Builder::setSequence, &Wire::Reader::getSequence>,
      nested<&sync_reply::quantized, &Wire::Builder::initQuantized, &Wire::Reader::getQuantized>>;
};

template <>
struct codec<sync_restore>
    : union_member<Body::SYNC_RESTORE, &Body::Builder::initSyncRestore, &Body::Reader::getSyncRestore> {
  static constexpr const char* name = "sync_restore";
  using fields = field_list<Wire,
      field<&sync_restore::slice, &Wire::Builder::setSlice, &Wire::Reader::getSlice>,
      list<&sync_restore::params, &Wire::Builder::initParams, &Wire::Reader::getParams>,
      list<&sync_restore::momentum, &Wire::Builder::initMomentum, &Wire::Reader::getMomentum>>;

  static status check(const sync_restore& m) {
    if (!m.momentum.empty() && m.momentum.size() != m.params.size())
      return parse_error("sync_restore: " + num(m.momentum.size()) + " momentum values for " +
                         num(m.params.size()) + " parameters");
    return status::ok();
  }
};


template <>
struct codec<sync_close>
    : union_member<Body::SYNC_CLOSE, &Body::Builder::initSyncClose, &Body::Reader::getSyncClose> {
  static constexpr const char* name = "sync_close";
  using fields = field_list<Wire,
      field<&sync_close::generation, &Wire::Builder::setGeneration, &Wire::Reader::getGeneration>>;
};

}  // namespace ss::wire::detail
