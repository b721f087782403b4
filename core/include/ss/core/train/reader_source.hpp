// Batch sources over text files: data::batch_reader (schema, bad-row policy, gzip) feeding the
// trainer, with progress measured in bytes of input consumed.
#pragma once

#include "ss/core/data/batch_reader.hpp"
#include "ss/core/data/epoch_reader.hpp"
#include "ss/core/train/hogwild_trainer.hpp"

namespace ss::train {

class reader_source final : public batch_source {
 public:
  explicit reader_source(data::batch_reader reader) : reader_(std::move(reader)) {}

  result<bool> next(data::example_batch& out) override { return reader_.next(out); }
  double fraction_done() const override {
    const auto total = reader_.total_bytes();
    return total == 0 ? -1.0 : static_cast<double>(reader_.bytes_consumed()) / static_cast<double>(total);
  }

  data::batch_reader& reader() { return reader_; }
  const data::batch_reader& reader() const { return reader_; }

 private:
  data::batch_reader reader_;
};

// The current epoch of a data::epoch_reader as a batch_source: exhausted at the epoch's end, with
// progress measured within the epoch.
class epoch_source final : public batch_source {
 public:
  explicit epoch_source(data::epoch_reader& reader) : reader_(reader) {}

  result<bool> next(data::example_batch& out) override { return reader_.next(out); }
  double fraction_done() const override {
    const auto& files = reader_.current();
    const auto total = files.total_bytes();
    return total == 0 ? -1.0 : static_cast<double>(files.bytes_consumed()) / static_cast<double>(total);
  }

 private:
  data::epoch_reader& reader_;
};

}  // namespace ss::train
