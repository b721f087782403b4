#include "ss/actors/read_positions.hpp"

namespace ss::actors {
namespace {

data::line_position window_end_of(const wire::read_position& p) {
  return {p.window_end_file, p.window_end_offset, p.window_end_line, p.window_end_crc, p.window_end_size};
}

void put_window_end(const data::line_position& end, wire::read_position& p) {
  p.window_end_file = end.file_index;
  p.window_end_offset = end.byte_offset;
  p.window_end_line = end.line_number;
  p.window_end_crc = end.previous_line_crc;
  p.window_end_size = end.file_size;
}

data::line_position line_position_of(const wire::read_position& p) {
  return {p.file_index, p.byte_offset, p.line_number, p.previous_line_crc, p.file_size};
}

wire::read_position position_only(const data::line_position& at) {
  wire::read_position p;
  p.file_index = at.file_index;
  p.byte_offset = at.byte_offset;
  p.line_number = at.line_number;
  p.previous_line_crc = at.previous_line_crc;
  p.file_size = at.file_size;
  return p;
}

}  // namespace

wire::read_position to_wire(const data::epoch_position& e) {
  auto p = position_only(e.window);
  p.epoch = e.epoch;
  p.window_batches = e.window_batches;
  put_window_end(e.window_end, p);
  p.inherited = e.inherited;
  return p;
}

data::epoch_position epoch_position_of(const wire::read_position& p) {
  return {p.epoch, line_position_of(p), p.window_batches, window_end_of(p), p.inherited};
}

job::reader_commit commit_of(const wire::read_position& p, std::uint64_t examples, std::uint64_t bad_rows) {
  auto c = job::commit_at(epoch_position_of(p), examples, bad_rows);
  c.file_name = p.file_name;
  c.device = p.device;
  c.inode = p.inode;
  return c;
}

wire::read_position to_wire(const job::reader_commit& c) {
  auto p = to_wire(job::resume_position_of(c));
  p.file_name = c.file_name;
  p.device = c.device;
  p.inode = c.inode;
  return p;
}

wire::window_left to_wire(const job::window_left& w) {
  wire::window_left out;
  out.readers = w.readers;
  out.reader = w.reader;
  out.epoch = w.epoch;
  out.handed = w.handed;
  out.start = position_only(w.start);
  put_progress(w.progress, out);
  return out;
}

job::window_left window_left_of(const wire::window_left& w) {
  job::window_left out;
  out.readers = w.readers;
  out.reader = w.reader;
  out.epoch = w.epoch;
  out.handed = w.handed;
  out.start = line_position_of(w.start);
  out.progress = progress_of(w);
  return out;
}

}  // namespace ss::actors
