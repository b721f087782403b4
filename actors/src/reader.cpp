#include "ss/actors/reader.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <map>

#include "ss/actors/gateway.hpp"
#include "ss/actors/messages.hpp"
#include "ss/core/json.hpp"

namespace ss::actors {
namespace {

struct reader_state {
  static inline const char* name = "reader";
  std::unique_ptr<data::batch_reader> reader;
  reader_options options;
  std::shared_ptr<reader_counters> counters;
  std::uint64_t next_sequence = 0;
  // Batches handed out and not yet committed, by sequence. A batch is committed once it and
  // every batch before it were acked: the committed position only moves over a trained prefix.
  struct handed_out {
    std::uint64_t examples = 0;
    wire::read_position end;
    bool acked = false;
  };
  std::map<std::uint64_t, handed_out> in_flight;
  std::uint64_t unacked = 0;
  wire::read_position committed;  // everything before it was trained
  status failure;
};

using reader_actor = caf::stateful_actor<reader_state>;

void update_progress(reader_state& st) {
  auto& c = *st.counters;
  if (st.reader) {
    c.bytes_done.store(st.reader->bytes_consumed(), std::memory_order_relaxed);
    c.rows_read.store(st.reader->counters().rows_read, std::memory_order_relaxed);
    c.bad_rows.store(st.reader->counters().bad, std::memory_order_relaxed);
  }
  c.finished.store(c.exhausted.load() && st.unacked == 0, std::memory_order_relaxed);
}

body_ptr serve_pull(reader_actor* self) {
  auto& st = self->state;
  if (!st.failure.is_ok()) return make_body(wire::error_reply{st.failure.code(), st.failure.message()});
  if (st.counters->exhausted.load()) return make_body(wire::end_of_data{st.options.index, st.next_sequence});
  wire::batch_message m;
  m.reader_index = st.options.index;
  auto more = st.reader->next(m.batch);
  const auto& reports = st.reader->bad_row_reports();
  if (!reports.empty()) {
    std::lock_guard<std::mutex> lock(st.counters->mu);
    std::string joined;
    for (const auto& r : reports) joined += r + "\n";
    if (joined != st.counters->bad_row_reports) {
      for (std::size_t i = std::count(st.counters->bad_row_reports.begin(), st.counters->bad_row_reports.end(), '\n');
           i < reports.size(); ++i)
        spdlog::warn("{}: bad row {}", st.options.name, reports[i]);
      st.counters->bad_row_reports = joined;
    }
  }
  if (!more.is_ok()) {
    st.failure = more.error();
    spdlog::error("{}: reading stopped: {}", st.options.name, st.failure.message());
    {
      std::lock_guard<std::mutex> lock(st.counters->mu);
      st.counters->error = st.failure.message();
    }
    update_progress(st);
    return make_body(wire::error_reply{st.failure.code(), st.failure.message()});
  }
  if (!*more) {
    st.counters->exhausted.store(true);
    update_progress(st);
    spdlog::info("{}: all {} batches handed out", st.options.name, st.next_sequence);
    return make_body(wire::end_of_data{st.options.index, st.next_sequence});
  }
  const auto pos = st.reader->position();
  m.end = wire::read_position{pos.file_index, pos.byte_offset, pos.line_number};
  m.sequence = st.next_sequence++;
  const std::uint64_t n = m.batch.size();
  st.in_flight.emplace(m.sequence, reader_state::handed_out{n, m.end, false});
  ++st.unacked;
  st.counters->batches_sent.fetch_add(1, std::memory_order_relaxed);
  st.counters->examples_sent.fetch_add(n, std::memory_order_relaxed);
  update_progress(st);
  return make_body(std::move(m));
}

body_ptr serve_ack(reader_actor* self, const wire::batch_ack& ack) {
  auto& st = self->state;
  auto it = st.in_flight.find(ack.sequence);
  if (it == st.in_flight.end() || it->second.acked) {
    // A duplicate or unknown ack must not count twice.
    return make_body(wire::error_reply{errc::not_found, st.options.name + " has no batch " +
                                                            std::to_string(ack.sequence) + " in flight"});
  }
  it->second.acked = true;
  --st.unacked;
  st.counters->batches_acked.fetch_add(1, std::memory_order_relaxed);
  st.counters->examples_acked.fetch_add(it->second.examples, std::memory_order_relaxed);
  while (!st.in_flight.empty() && st.in_flight.begin()->second.acked) {
    st.committed = st.in_flight.begin()->second.end;
    st.in_flight.erase(st.in_flight.begin());
  }
  update_progress(st);
  return make_body(wire::ack{});
}

body_ptr serve_status(reader_actor* self) {
  auto& st = self->state;
  auto& c = *st.counters;
  std::string error;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    error = c.error;
  }
  return make_body(wire::status_reply{json_object()
                                          .add("role", "reader")
                                          .add("name", st.options.name)
                                          .add("index", st.options.index)
                                          .add("batches_sent", c.batches_sent.load())
                                          .add("examples_sent", c.examples_sent.load())
                                          .add("batches_acked", c.batches_acked.load())
                                          .add("examples_acked", c.examples_acked.load())
                                          .add("in_flight", st.unacked)
                                          .add("rows_read", c.rows_read.load())
                                          .add("bad_rows", c.bad_rows.load())
                                          .add("bytes_done", c.bytes_done.load())
                                          .add("bytes_total", c.bytes_total.load())
                                          .add("committed_file", st.committed.file_index)
                                          .add("committed_offset", st.committed.byte_offset)
                                          .add("finished", c.finished.load())
                                          .add("error", error)
                                          .str()});
}

caf::behavior reader(reader_actor* self, std::shared_ptr<std::unique_ptr<data::batch_reader>> input,
                     reader_options options, std::shared_ptr<reader_counters> counters) {
  auto& st = self->state;
  st.reader = std::move(*input);
  st.options = std::move(options);
  st.counters = std::move(counters);
  if (st.reader) {
    st.counters->bytes_total.store(st.reader->total_bytes());
  } else {
    st.counters->exhausted.store(true);
    update_progress(st);
  }
  return {
      [self](serve_atom, const envelope_ptr& env) -> body_ptr {
        if (std::holds_alternative<wire::pull_request>(env->message)) return serve_pull(self);
        if (const auto* ack = std::get_if<wire::batch_ack>(&env->message)) return serve_ack(self, *ack);
        if (std::holds_alternative<wire::status_request>(env->message)) return serve_status(self);
        return make_body(wire::error_reply{errc::invalid_argument, std::string("a reader does not serve ") +
                                                                       wire::message_name(env->message)});
      },
  };
}

}  // namespace

caf::actor spawn_reader(caf::actor_system& sys, const caf::actor& gateway, std::unique_ptr<data::batch_reader> reader,
                        const reader_options& options, std::shared_ptr<reader_counters> counters) {
  auto input = std::make_shared<std::unique_ptr<data::batch_reader>>(std::move(reader));
  auto a = sys.spawn(actors::reader, input, options, counters);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::pull_request>(), a);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::batch_ack>(), a);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::status_request>(), a);
  return a;
}

}  // namespace ss::actors
