// One message on the wire: an immutable, 8-byte aligned byte buffer, shared (never copied)
// between the transport thread and the actors. Cap'n Proto reads it in place only when it is
// word aligned, so frames are always allocated in words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace ss::wire {

class frame_bytes {
 public:
  // `size` bytes of zeroed, word-aligned storage.
  explicit frame_bytes(std::size_t size)
      : words_(new std::uint64_t[(size + 7) / 8]()), size_(size) {}
  // A word-aligned copy of [data, data + size).
  frame_bytes(const void* data, std::size_t size) : frame_bytes(size) {
    if (size > 0) std::memcpy(words_.get(), data, size);
  }

  const std::uint8_t* data() const { return reinterpret_cast<const std::uint8_t*>(words_.get()); }
  std::uint8_t* mutable_data() { return reinterpret_cast<std::uint8_t*>(words_.get()); }
  const std::uint64_t* words() const { return words_.get(); }
  std::size_t size() const { return size_; }
  std::size_t word_count() const { return (size_ + 7) / 8; }

 private:
  std::unique_ptr<std::uint64_t[]> words_;
  std::size_t size_;
};

using frame = std::shared_ptr<const frame_bytes>;

inline frame make_frame(const void* data, std::size_t size) {
  return std::make_shared<const frame_bytes>(data, size);
}

}  // namespace ss::wire
