// A reader's place in its input as each layer holds it: the reader's own (data::epoch_position),
// the wire's (wire::read_position, in batches and heartbeats), the coordinator's and snapshots'
// (job::reader_commit), and a plan's windows left unfinished (job::window_left, wire::window_left).
// Converted here only, so that a field added to one is carried by all.
#pragma once

#include <cstdint>
#include <vector>

#include "ss/core/data/epoch_reader.hpp"
#include "ss/core/job/reader_plan.hpp"
#include "ss/core/job/snapshot.hpp"
#include "ss/wire/messages.hpp"

namespace ss::actors {

wire::read_position to_wire(const data::epoch_position& p);
data::epoch_position epoch_position_of(const wire::read_position& p);

// A reader's committed position, with the good and bad rows before it.
job::reader_commit commit_of(const wire::read_position& p, std::uint64_t examples, std::uint64_t bad_rows);
wire::read_position to_wire(const job::reader_commit& c);

wire::window_left to_wire(const job::window_left& w);
job::window_left window_left_of(const wire::window_left& w);

// Files' progress as five lists of one length (register_reply, wire::window_left).
template <class Lists>
void put_progress(const std::vector<data::file_progress>& progress, Lists& out) {
  for (const auto& p : progress) {
    out.file_passes.push_back(p.passes);
    out.file_offsets.push_back(p.at.byte_offset);
    out.file_lines.push_back(p.at.line_number);
    out.file_crcs.push_back(p.at.previous_line_crc);
    out.file_sizes.push_back(p.at.file_size);
  }
}
template <class Lists>
std::vector<data::file_progress> progress_of(const Lists& in) {
  std::vector<data::file_progress> out(in.file_passes.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].passes = in.file_passes[i];
    out[i].at.byte_offset = in.file_offsets[i];
    out[i].at.line_number = in.file_lines[i];
    out[i].at.previous_line_crc = in.file_crcs[i];
    out[i].at.file_size = in.file_sizes[i];
  }
  return out;
}

}  // namespace ss::actors
