// Codec entries of schema/control.capnp: status, stop, snapshots, the shards' dumps and the model
// export. See table.hpp for what an entry is.
#pragma once

#include "../wire_fields.hpp"

namespace ss::wire::detail {

constexpr int wire(schema::MovePass p) { return static_cast<int>(p); }
static_assert(wire(schema::MovePass::WHOLE) == static_cast<int>(move_pass::whole));
static_assert(wire(schema::MovePass::COPY) == static_cast<int>(move_pass::copy));
static_assert(wire(schema::MovePass::CHANGED) == static_cast<int>(move_pass::changed));

template <>
struct codec<status_request>
    : union_member<Body::STATUS_REQUEST, &Body::Builder::initStatusRequest, &Body::Reader::getStatusRequest> {
  static constexpr const char* name = "status_request";
  using fields = field_list<Wire>;
};

template <>
struct codec<status_reply>
    : union_member<Body::STATUS_REPLY, &Body::Builder::initStatusReply, &Body::Reader::getStatusReply> {
  static constexpr const char* name = "status_reply";
  using fields = field_list<Wire, field<&status_reply::json, &Wire::Builder::setJson, &Wire::Reader::getJson>>;
};

template <>
struct codec<stop_request>
    : union_member<Body::STOP_REQUEST, &Body::Builder::initStopRequest, &Body::Reader::getStopRequest> {
  static constexpr const char* name = "stop_request";
  using fields =
      field_list<Wire, field<&stop_request::reason, &Wire::Builder::setReason, &Wire::Reader::getReason>>;
};

template <>
struct codec<reshard_request>
    : union_member<Body::RESHARD_REQUEST, &Body::Builder::initReshardRequest, &Body::Reader::getReshardRequest> {
  static constexpr const char* name = "reshard_request";
  using fields =
      field_list<Wire, field<&reshard_request::shards, &Wire::Builder::setShards, &Wire::Reader::getShards>>;
};

template <>
struct codec<reshard_reply>
    : union_member<Body::RESHARD_REPLY, &Body::Builder::initReshardReply, &Body::Reader::getReshardReply> {
  static constexpr const char* name = "reshard_reply";
  using fields = field_list<Wire,
      field<&reshard_reply::accepted, &Wire::Builder::setAccepted, &Wire::Reader::getAccepted>,
      field<&reshard_reply::message, &Wire::Builder::setMessage, &Wire::Reader::getMessage>,
      field<&reshard_reply::from, &Wire::Builder::setFrom, &Wire::Reader::getFrom>,
      field<&reshard_reply::to, &Wire::Builder::setTo, &Wire::Reader::getTo>>;
};

template <>
struct codec<snapshot_now>
    : union_member<Body::SNAPSHOT_NOW, &Body::Builder::initSnapshotNow, &Body::Reader::getSnapshotNow> {
  static constexpr const char* name = "snapshot_now";
  using fields = field_list<Wire>;
};

template <>
struct codec<snapshot_request>
    : union_member<Body::SNAPSHOT_REQUEST, &Body::Builder::initSnapshotRequest, &Body::Reader::getSnapshotRequest> {
  static constexpr const char* name = "snapshot_request";
  using fields = field_list<Wire,
      field<&snapshot_request::snapshot_id, &Wire::Builder::setSnapshotId, &Wire::Reader::getSnapshotId>,
      list<&snapshot_request::keep, &Wire::Builder::initKeep, &Wire::Reader::getKeep>>;
};

template <>
struct codec<snapshot_reply>
    : union_member<Body::SNAPSHOT_REPLY, &Body::Builder::initSnapshotReply, &Body::Reader::getSnapshotReply> {
  static constexpr const char* name = "snapshot_reply";
  using fields = field_list<Wire,
      field<&snapshot_reply::snapshot_id, &Wire::Builder::setSnapshotId, &Wire::Reader::getSnapshotId>,
      field<&snapshot_reply::path, &Wire::Builder::setPath, &Wire::Reader::getPath>,
      field<&snapshot_reply::rows, &Wire::Builder::setRows, &Wire::Reader::getRows>,
      field<&snapshot_reply::bytes, &Wire::Builder::setBytes, &Wire::Reader::getBytes>,
      field<&snapshot_reply::checksum, &Wire::Builder::setChecksum, &Wire::Reader::getChecksum>,
      field<&snapshot_reply::seconds, &Wire::Builder::setSeconds, &Wire::Reader::getSeconds>>;
};

template <>
struct codec<dump_request>
    : union_member<Body::DUMP_REQUEST, &Body::Builder::initDumpRequest, &Body::Reader::getDumpRequest> {
  static constexpr const char* name = "dump_request";
  using fields = field_list<Wire,
      field<&dump_request::table, &Wire::Builder::setTable, &Wire::Reader::getTable>,
      field<&dump_request::position, &Wire::Builder::setPosition, &Wire::Reader::getPosition>,
      field<&dump_request::max_rows, &Wire::Builder::setMaxRows, &Wire::Reader::getMaxRows>,
      field<&dump_request::placement_shards, &Wire::Builder::setPlacementShards, &Wire::Reader::getPlacementShards>,
      field<&dump_request::placement_index, &Wire::Builder::setPlacementIndex, &Wire::Reader::getPlacementIndex>,
      field<&dump_request::whole_rows, &Wire::Builder::setWholeRows, &Wire::Reader::getWholeRows>,
      enumeration<&dump_request::pass, &Wire::Builder::setMovePass, &Wire::Reader::getMovePass, check_move_pass>>;

  static status check(const dump_request& m) {
    if (m.placement_shards > 0 && m.placement_index >= m.placement_shards)
      return parse_error("dump_request: shard " + num(m.placement_index) + " of a placement over " +
                         num(m.placement_shards) + " shards");
    return status::ok();
  }
};

template <>
struct codec<publish_rows_request>
    : union_member<Body::PUBLISH_ROWS_REQUEST, &Body::Builder::initPublishRowsRequest,
                   &Body::Reader::getPublishRowsRequest> {
  static constexpr const char* name = "publish_rows_request";
  using fields = field_list<Wire,
      field<&publish_rows_request::sequence, &Wire::Builder::setSequence, &Wire::Reader::getSequence>,
      field<&publish_rows_request::last_written, &Wire::Builder::setLastWritten, &Wire::Reader::getLastWritten>,
      field<&publish_rows_request::base, &Wire::Builder::setBase, &Wire::Reader::getBase>,
      field<&publish_rows_request::position, &Wire::Builder::setPosition, &Wire::Reader::getPosition>,
      field<&publish_rows_request::max_rows, &Wire::Builder::setMaxRows, &Wire::Reader::getMaxRows>>;
};

template <>
struct codec<publish_rows_reply>
    : union_member<Body::PUBLISH_ROWS_REPLY, &Body::Builder::initPublishRowsReply, &Body::Reader::getPublishRowsReply> {
  static constexpr const char* name = "publish_rows_reply";
  using fields = field_list<Wire,
      field<&publish_rows_reply::needs_base, &Wire::Builder::setNeedsBase, &Wire::Reader::getNeedsBase>,
      list<&publish_rows_reply::tables, &Wire::Builder::initTables, &Wire::Reader::getTables>,
      list<&publish_rows_reply::ids, &Wire::Builder::initIds, &Wire::Reader::getIds>,
      list<&publish_rows_reply::values, &Wire::Builder::initValues, &Wire::Reader::getValues>,
      field<&publish_rows_reply::next_position, &Wire::Builder::setNextPosition, &Wire::Reader::getNextPosition>,
      field<&publish_rows_reply::staged, &Wire::Builder::setStaged, &Wire::Reader::getStaged>,
      list<&publish_rows_reply::gone_tables, &Wire::Builder::initGoneTables, &Wire::Reader::getGoneTables>,
      list<&publish_rows_reply::gone_ids, &Wire::Builder::initGoneIds, &Wire::Reader::getGoneIds>>;

  static status check(const publish_rows_reply& m) {
    if (m.tables.size() != m.ids.size())
      return parse_error("publish_rows_reply: " + num(m.tables.size()) + " tables for " + num(m.ids.size()) + " ids");
    if (m.gone_tables.size() != m.gone_ids.size())
      return parse_error("publish_rows_reply: " + num(m.gone_tables.size()) + " tables for " + num(m.gone_ids.size()) +
                         " tombstones");
    if (m.ids.empty() ? !m.values.empty() : m.values.size() % m.ids.size() != 0)
      return parse_error("publish_rows_reply: " + num(m.values.size()) + " values for " + num(m.ids.size()) +
                         " ids (not a whole number of rows)");
    return status::ok();
  }
};

template <>
struct codec<dump_reply>
    : union_member<Body::DUMP_REPLY, &Body::Builder::initDumpReply, &Body::Reader::getDumpReply> {
  static constexpr const char* name = "dump_reply";
  using fields = field_list<Wire,
      list<&dump_reply::tables, &Wire::Builder::initTables, &Wire::Reader::getTables>,
      list<&dump_reply::ids, &Wire::Builder::initIds, &Wire::Reader::getIds>,
      list<&dump_reply::values, &Wire::Builder::initValues, &Wire::Reader::getValues>,
      field<&dump_reply::next_table, &Wire::Builder::setNextTable, &Wire::Reader::getNextTable>,
      field<&dump_reply::next_position, &Wire::Builder::setNextPosition, &Wire::Reader::getNextPosition>,
      field<&dump_reply::done, &Wire::Builder::setDone, &Wire::Reader::getDone>,
      field<&dump_reply::row_floats, &Wire::Builder::setRowFloats, &Wire::Reader::getRowFloats>,
      list<&dump_reply::gone_tables, &Wire::Builder::initGoneTables, &Wire::Reader::getGoneTables>,
      list<&dump_reply::gone_ids, &Wire::Builder::initGoneIds, &Wire::Reader::getGoneIds>,
      field<&dump_reply::crc32c, &Wire::Builder::setCrc32c, &Wire::Reader::getCrc32c>>;

  static status check(const dump_reply& m) {
    if (m.tables.size() != m.ids.size())
      return parse_error("dump_reply: " + num(m.tables.size()) + " tables for " + num(m.ids.size()) + " ids");
    if (m.values.size() != m.ids.size() * std::size_t{m.row_floats})
      return parse_error("dump_reply: " + num(m.values.size()) + " values for " + num(m.ids.size()) + " rows of " +
                         num(m.row_floats) + " floats");
    if (m.gone_tables.size() != m.gone_ids.size())
      return parse_error("dump_reply: " + num(m.gone_tables.size()) + " tables for " + num(m.gone_ids.size()) +
                         " gone ids");
    if (dump_page_crc(m) != m.crc32c)
      return parse_error("dump_reply: the page fails its checksum (CRC32C " + num(dump_page_crc(m)) + ", sent " +
                         num(m.crc32c) + ")");
    return status::ok();
  }
};

template <>
struct codec<export_request>
    : union_member<Body::EXPORT_REQUEST, &Body::Builder::initExportRequest, &Body::Reader::getExportRequest> {
  static constexpr const char* name = "export_request";
  using fields =
      field_list<Wire, field<&export_request::path, &Wire::Builder::setPath, &Wire::Reader::getPath>>;
};

template <>
struct codec<export_reply>
    : union_member<Body::EXPORT_REPLY, &Body::Builder::initExportReply, &Body::Reader::getExportReply> {
  static constexpr const char* name = "export_reply";
  using fields = field_list<Wire,
      field<&export_reply::path, &Wire::Builder::setPath, &Wire::Reader::getPath>,
      field<&export_reply::rows, &Wire::Builder::setRows, &Wire::Reader::getRows>,
      field<&export_reply::bytes, &Wire::Builder::setBytes, &Wire::Reader::getBytes>,
      field<&export_reply::seconds, &Wire::Builder::setSeconds, &Wire::Reader::getSeconds>>;
};

template <>
struct codec<take_rows_request>
    : union_member<Body::TAKE_ROWS_REQUEST, &Body::Builder::initTakeRowsRequest, &Body::Reader::getTakeRowsRequest> {
  static constexpr const char* name = "take_rows_request";
  using fields = field_list<Wire,
      list<&take_rows_request::sources, &Wire::Builder::initSources, &Wire::Reader::getSources>,
      field<&take_rows_request::placement_shards, &Wire::Builder::setPlacementShards,
            &Wire::Reader::getPlacementShards>,
      enumeration<&take_rows_request::pass, &Wire::Builder::setMovePass, &Wire::Reader::getMovePass,
                  check_move_pass>>;
};

template <>
struct codec<take_rows_reply>
    : union_member<Body::TAKE_ROWS_REPLY, &Body::Builder::initTakeRowsReply, &Body::Reader::getTakeRowsReply> {
  static constexpr const char* name = "take_rows_reply";
  using fields = field_list<Wire,
      field<&take_rows_reply::rows, &Wire::Builder::setRows, &Wire::Reader::getRows>,
      field<&take_rows_reply::bytes, &Wire::Builder::setBytes, &Wire::Reader::getBytes>,
      field<&take_rows_reply::seconds, &Wire::Builder::setSeconds, &Wire::Reader::getSeconds>>;
};

template <>
struct codec<drop_rows_request>
    : union_member<Body::DROP_ROWS_REQUEST, &Body::Builder::initDropRowsRequest, &Body::Reader::getDropRowsRequest> {
  static constexpr const char* name = "drop_rows_request";
  using fields = field_list<Wire, field<&drop_rows_request::placement_shards, &Wire::Builder::setPlacementShards,
                                        &Wire::Reader::getPlacementShards>>;
};

template <>
struct codec<drop_rows_reply>
    : union_member<Body::DROP_ROWS_REPLY, &Body::Builder::initDropRowsReply, &Body::Reader::getDropRowsReply> {
  static constexpr const char* name = "drop_rows_reply";
  using fields = field_list<Wire,
      field<&drop_rows_reply::dropped, &Wire::Builder::setDropped, &Wire::Reader::getDropped>,
      field<&drop_rows_reply::kept, &Wire::Builder::setKept, &Wire::Reader::getKept>>;
};

}  // namespace ss::wire::detail
