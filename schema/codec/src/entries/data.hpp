// Codec entries of schema/data.capnp: a reader's position, example batches and the messages that
// carry them between readers and trainers. See table.hpp for what an entry is.
#pragma once

#include <cstdio>

#include "../wire_fields.hpp"

namespace ss::wire::detail {

template <>
struct codec<read_position> {
  using Wire = schema::ReadPosition;
  using fields = field_list<Wire,
      field<&read_position::file_index, &Wire::Builder::setFileIndex, &Wire::Reader::getFileIndex>,
      field<&read_position::byte_offset, &Wire::Builder::setByteOffset, &Wire::Reader::getByteOffset>,
      field<&read_position::line_number, &Wire::Builder::setLineNumber, &Wire::Reader::getLineNumber>,
      field<&read_position::previous_line_crc, &Wire::Builder::setPreviousLineCrc,
            &Wire::Reader::getPreviousLineCrc>,
      field<&read_position::file_size, &Wire::Builder::setFileSize, &Wire::Reader::getFileSize>,
      field<&read_position::epoch, &Wire::Builder::setEpoch, &Wire::Reader::getEpoch>,
      field<&read_position::window_batches, &Wire::Builder::setWindowBatches, &Wire::Reader::getWindowBatches>,
      field<&read_position::file_name, &Wire::Builder::setFileName, &Wire::Reader::getFileName>,
      field<&read_position::device, &Wire::Builder::setDevice, &Wire::Reader::getDevice>,
      field<&read_position::inode, &Wire::Builder::setInode, &Wire::Reader::getInode>,
      field<&read_position::window_end_file, &Wire::Builder::setWindowEndFile, &Wire::Reader::getWindowEndFile>,
      field<&read_position::window_end_offset, &Wire::Builder::setWindowEndOffset, &Wire::Reader::getWindowEndOffset>,
      field<&read_position::window_end_line, &Wire::Builder::setWindowEndLine, &Wire::Reader::getWindowEndLine>,
      field<&read_position::window_end_crc, &Wire::Builder::setWindowEndCrc, &Wire::Reader::getWindowEndCrc>,
      field<&read_position::window_end_size, &Wire::Builder::setWindowEndSize, &Wire::Reader::getWindowEndSize>,
      field<&read_position::inherited, &Wire::Builder::setInherited, &Wire::Reader::getInherited>>;
};

inline std::string real(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

// Every length that the batch's counts imply, the CSR offsets, and the labels.
inline status check_batch(const data::example_batch& b, std::uint64_t n) {
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

// Written by hand: the example count is on the wire but not a member (it is labels.size()), and
// the batch is checked against it as soon as it is read.
struct example_batch_fields {
  using Wire = schema::ExampleBatch;
  using batch = data::example_batch;

  static std::size_t words(const batch& x) {
    return struct_words<Wire>() + list_words(x.labels) + list_words(x.dense) + list_words(x.ids) +
           list_words(x.offsets);
  }
  static void put(const batch& x, Wire::Builder w) {
    w.setExamples(list_size(x.size()));
    w.setNumDense(x.num_dense);
    w.setNumSparse(x.num_sparse);
    put_list(x.labels, [&](capnp::uint n) { return w.initLabels(n); });
    put_list(x.dense, [&](capnp::uint n) { return w.initDense(n); });
    put_list(x.ids, [&](capnp::uint n) { return w.initIds(n); });
    put_list(x.offsets, [&](capnp::uint n) { return w.initOffsets(n); });
  }
  static status get(Wire::Reader w, batch& x, const char*) {
    x.num_dense = w.getNumDense();
    x.num_sparse = w.getNumSparse();
    get_list(w.getLabels(), x.labels);
    get_list(w.getDense(), x.dense);
    get_list(w.getIds(), x.ids);
    get_list(w.getOffsets(), x.offsets);
    return check_batch(x, w.getExamples());
  }
};

template <>
struct codec<data::example_batch> {
  using fields = example_batch_fields;
};

// ---- messages -----------------------------------------------------------------------------------

template <>
struct codec<pull_request>
    : union_member<Body::PULL_REQUEST, &Body::Builder::initPullRequest, &Body::Reader::getPullRequest> {
  static constexpr const char* name = "pull_request";
  using fields = field_list<Wire,
      field<&pull_request::credits, &Wire::Builder::setCredits, &Wire::Reader::getCredits>,
      field<&pull_request::trainer, &Wire::Builder::setTrainer, &Wire::Reader::getTrainer>,
      field<&pull_request::pull, &Wire::Builder::setPull, &Wire::Reader::getPull>,
      list<&pull_request::abandoned, &Wire::Builder::initAbandoned, &Wire::Reader::getAbandoned>>;
};

template <>
struct codec<batch_message>
    : union_member<Body::BATCH_MESSAGE, &Body::Builder::initBatchMessage, &Body::Reader::getBatchMessage> {
  static constexpr const char* name = "batch_message";
  using fields = field_list<Wire,
      field<&batch_message::reader_index, &Wire::Builder::setReaderIndex, &Wire::Reader::getReaderIndex>,
      field<&batch_message::sequence, &Wire::Builder::setSequence, &Wire::Reader::getSequence>,
      nested<&batch_message::batch, &Wire::Builder::initBatch, &Wire::Reader::getBatch>,
      nested<&batch_message::end, &Wire::Builder::initEnd, &Wire::Reader::getEnd>,
      field<&batch_message::incarnation, &Wire::Builder::setIncarnation, &Wire::Reader::getIncarnation>,
      field<&batch_message::examples_before, &Wire::Builder::setExamplesBefore,
            &Wire::Reader::getExamplesBefore>>;
};

template <>
struct codec<end_of_data>
    : union_member<Body::END_OF_DATA, &Body::Builder::initEndOfData, &Body::Reader::getEndOfData> {
  static constexpr const char* name = "end_of_data";
  using fields = field_list<Wire,
      field<&end_of_data::reader_index, &Wire::Builder::setReaderIndex, &Wire::Reader::getReaderIndex>,
      field<&end_of_data::batches, &Wire::Builder::setBatches, &Wire::Reader::getBatches>>;
};

template <>
struct codec<batch_ack>
    : union_member<Body::BATCH_ACK, &Body::Builder::initBatchAck, &Body::Reader::getBatchAck> {
  static constexpr const char* name = "batch_ack";
  using fields = field_list<Wire,
      field<&batch_ack::reader_index, &Wire::Builder::setReaderIndex, &Wire::Reader::getReaderIndex>,
      field<&batch_ack::sequence, &Wire::Builder::setSequence, &Wire::Reader::getSequence>,
      field<&batch_ack::incarnation, &Wire::Builder::setIncarnation, &Wire::Reader::getIncarnation>,
      field<&batch_ack::trainer, &Wire::Builder::setTrainer, &Wire::Reader::getTrainer>>;
};

template <>
struct codec<position_request>
    : union_member<Body::POSITION_REQUEST, &Body::Builder::initPositionRequest, &Body::Reader::getPositionRequest> {
  static constexpr const char* name = "position_request";
  using fields = field_list<Wire>;
};

template <>
struct codec<position_reply>
    : union_member<Body::POSITION_REPLY, &Body::Builder::initPositionReply, &Body::Reader::getPositionReply> {
  static constexpr const char* name = "position_reply";
  using fields = field_list<Wire,
      nested<&position_reply::committed, &Wire::Builder::initCommitted, &Wire::Reader::getCommitted>,
      field<&position_reply::has_committed, &Wire::Builder::setHasCommitted, &Wire::Reader::getHasCommitted>,
      field<&position_reply::committed_examples, &Wire::Builder::setCommittedExamples,
            &Wire::Reader::getCommittedExamples>,
      field<&position_reply::committed_bad_rows, &Wire::Builder::setCommittedBadRows,
            &Wire::Reader::getCommittedBadRows>>;
};

}  // namespace ss::wire::detail
