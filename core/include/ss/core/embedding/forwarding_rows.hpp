// forwarding_rows: a durable_rows that passes every call to another one it owns. A wrapper that
// changes one behaviour (a test's failing writes, a benchmark's slow reads) derives from it and
// overrides only that call.
#pragma once

#include <memory>
#include <utility>

#include "ss/core/embedding/durable_rows.hpp"

namespace ss::embedding {

class forwarding_rows : public durable_rows {
 public:
  explicit forwarding_rows(std::unique_ptr<durable_rows> inner) : inner_(std::move(inner)) {}

  std::uint32_t row_floats() const override { return inner_->row_floats(); }
  status write(const std::uint32_t* t, const std::uint64_t* i, const float* r, std::size_t n) override {
    return inner_->write(t, i, r, n);
  }
  status erase(const std::uint32_t* t, const std::uint64_t* i, std::size_t n) override { return inner_->erase(t, i, n); }
  status erase_stored(const std::uint32_t* t, const std::uint64_t* i, std::size_t n) override {
    return inner_->erase_stored(t, i, n);
  }
  status scan(const row_visitor& fn) override { return inner_->scan(fn); }
  status scan_concurrently(const row_visitor& fn) override { return inner_->scan_concurrently(fn); }
  std::uint64_t rows() const override { return inner_->rows(); }
  status read(const std::uint32_t* t, const std::uint64_t* i, std::size_t n, float* r,
              std::uint8_t* found) const override {
    return inner_->read(t, i, n, r, found);
  }
  result<std::size_t> scan_from(std::uint32_t t, std::uint64_t id, std::size_t max_rows,
                                const row_visitor& fn) const override {
    return inner_->scan_from(t, id, max_rows, fn);
  }
  std::string live_damage() const override { return inner_->live_damage(); }
  std::uint64_t memory_bytes() const override { return inner_->memory_bytes(); }
  std::uint64_t memory_bound_bytes() const override { return inner_->memory_bound_bytes(); }
  storage_io io() const override { return inner_->io(); }
  result<checkpoint_info> checkpoint(std::uint64_t id) override { return inner_->checkpoint(id); }
  result<std::vector<checkpoint_info>> checkpoints() const override { return inner_->checkpoints(); }
  status verify(std::uint64_t id) const override { return inner_->verify(id); }
  status restore(std::uint64_t id) override { return inner_->restore(id); }
  status restore_loading(std::uint64_t id, const row_visitor& load, const row_visitor& unload) override {
    return inner_->restore_loading(id, load, unload);
  }
  result<std::string> checkpoint_row_layout(std::uint64_t id) const override { return inner_->checkpoint_row_layout(id); }
  status restore_converting(std::uint64_t id, const row_conversion& c, const row_visitor& load,
                            const row_visitor& unload) override {
    return inner_->restore_converting(id, c, load, unload);
  }
  status drop(std::uint64_t id) override { return inner_->drop(id); }
  status set_meta(const std::string& k, const std::string& v) override { return inner_->set_meta(k, v); }
  result<std::string> get_meta(const std::string& k) const override { return inner_->get_meta(k); }
  status clear() override { return inner_->clear(); }

 protected:
  durable_rows& inner() const { return *inner_; }

 private:
  std::unique_ptr<durable_rows> inner_;
};

}  // namespace ss::embedding
