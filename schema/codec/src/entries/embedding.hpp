// Codec entries of schema/embedding.capnp: a trainer's lookups and gradient pushes to the shards.
// The hot path: every list is one memcpy each way. See table.hpp for what an entry is.
#pragma once

#include "../wire_fields.hpp"
#include "common.hpp"

namespace ss::wire::detail {

template <>
struct codec<lookup_request>
    : union_member<Body::LOOKUP_REQUEST, &Body::Builder::initLookupRequest, &Body::Reader::getLookupRequest> {
  static constexpr const char* name = "lookup_request";
  using fields = field_list<Wire,
      field<&lookup_request::create, &Wire::Builder::setCreate, &Wire::Reader::getCreate>,
      list<&lookup_request::tables, &Wire::Builder::initTables, &Wire::Reader::getTables>,
      list<&lookup_request::ids, &Wire::Builder::initIds, &Wire::Reader::getIds>,
      field<&lookup_request::examples, &Wire::Builder::setExamples, &Wire::Reader::getExamples>>;

  static status check(const lookup_request& m) {
    if (m.tables.size() != m.ids.size()) {
      return parse_error("lookup_request: " + num(m.tables.size()) + " tables for " +
                         num(m.ids.size()) + " ids (one table per id)");
    }
    return status::ok();
  }
};

template <>
struct codec<lookup_reply>
    : union_member<Body::LOOKUP_REPLY, &Body::Builder::initLookupReply, &Body::Reader::getLookupReply> {
  static constexpr const char* name = "lookup_reply";
  using fields = field_list<Wire,
      field<&lookup_reply::dim, &Wire::Builder::setDim, &Wire::Reader::getDim>,
      enumeration<&lookup_reply::precision, &Wire::Builder::setPrecision, &Wire::Reader::getPrecision,
                  check_row_precision>,
      precise_values<&lookup_reply::values, &lookup_reply::precision, &Wire::Builder::initValues,
                     &Wire::Reader::getValues, &Wire::Builder::initHalves, &Wire::Reader::getHalves>>;

  static status check(const lookup_reply& m) {
    if (!m.values.empty() && m.dim == 0) {
      return parse_error("lookup_reply: " + num(m.values.size()) + " values with dim 0");
    }
    if (!m.values.empty() && m.values.size() % m.dim != 0) {
      return parse_error("lookup_reply: " + num(m.values.size()) +
                         " values are not a whole number of rows of dim " + num(m.dim));
    }
    return status::ok();
  }
};

template <>
struct codec<push_request>
    : union_member<Body::PUSH_REQUEST, &Body::Builder::initPushRequest, &Body::Reader::getPushRequest> {
  static constexpr const char* name = "push_request";
  using fields = field_list<Wire,
      list<&push_request::tables, &Wire::Builder::initTables, &Wire::Reader::getTables>,
      list<&push_request::ids, &Wire::Builder::initIds, &Wire::Reader::getIds>,
      enumeration<&push_request::precision, &Wire::Builder::setPrecision, &Wire::Reader::getPrecision,
                  check_row_precision>,
      precise_values<&push_request::grads, &push_request::precision, &Wire::Builder::initGrads,
                     &Wire::Reader::getGrads, &Wire::Builder::initGradHalves, &Wire::Reader::getGradHalves>,
      field<&push_request::lr_scale, &Wire::Builder::setLrScale, &Wire::Reader::getLrScale>,
      field<&push_request::trainer, &Wire::Builder::setTrainer, &Wire::Reader::getTrainer>,
      field<&push_request::membership, &Wire::Builder::setMembership, &Wire::Reader::getMembership>,
      field<&push_request::number, &Wire::Builder::setNumber, &Wire::Reader::getNumber>>;

  static status check(const push_request& m) {
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
};

template <>
struct codec<push_reply>
    : union_member<Body::PUSH_REPLY, &Body::Builder::initPushReply, &Body::Reader::getPushReply> {
  static constexpr const char* name = "push_reply";
  using fields = field_list<Wire, field<&push_reply::rows, &Wire::Builder::setRows, &Wire::Reader::getRows>,
                            field<&push_reply::duplicate, &Wire::Builder::setDuplicate, &Wire::Reader::getDuplicate>>;
};

template <>
struct codec<warm_request>
    : union_member<Body::WARM_REQUEST, &Body::Builder::initWarmRequest, &Body::Reader::getWarmRequest> {
  static constexpr const char* name = "warm_request";
  using fields = field_list<Wire,
      list<&warm_request::tables, &Wire::Builder::initTables, &Wire::Reader::getTables>,
      list<&warm_request::ids, &Wire::Builder::initIds, &Wire::Reader::getIds>>;

  static status check(const warm_request& m) {
    if (m.tables.size() != m.ids.size()) {
      return parse_error("warm_request: " + num(m.tables.size()) + " tables for " + num(m.ids.size()) +
                         " ids (one table per id)");
    }
    return status::ok();
  }
};

template <>
struct codec<warm_reply>
    : union_member<Body::WARM_REPLY, &Body::Builder::initWarmReply, &Body::Reader::getWarmReply> {
  static constexpr const char* name = "warm_reply";
  using fields = field_list<Wire,
      field<&warm_reply::rows, &Wire::Builder::setRows, &Wire::Reader::getRows>,
      field<&warm_reply::tiered, &Wire::Builder::setTiered, &Wire::Reader::getTiered>>;
};

}  // namespace ss::wire::detail
