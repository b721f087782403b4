// A fixed-size, 64-byte aligned, zero-initialized array: parameter and activation buffers, so
// vector loads never straddle cache lines and GEMM libraries take their fast paths.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace ss {

template <class T>
class aligned_buffer {
 public:
  static constexpr std::size_t alignment = 64;

  aligned_buffer() = default;
  explicit aligned_buffer(std::size_t n) { resize(n); }
  aligned_buffer(const aligned_buffer& other) { *this = other; }
  aligned_buffer(aligned_buffer&& other) noexcept { swap(other); }
  aligned_buffer& operator=(const aligned_buffer& other) {
    if (this != &other) {
      resize(other.size_);
      if (size_ > 0) std::memcpy(data_, other.data_, size_ * sizeof(T));
    }
    return *this;
  }
  aligned_buffer& operator=(aligned_buffer&& other) noexcept {
    swap(other);
    return *this;
  }
  ~aligned_buffer() { std::free(data_); }

  // Reallocates to n zeroed elements (contents are not kept).
  void resize(std::size_t n) {
    if (n == size_) {
      zero();
      return;
    }
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
    if (n == 0) return;
    std::size_t bytes = (n * sizeof(T) + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, bytes);
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    data_ = static_cast<T*>(p);
    size_ = n;
  }
  void zero() {
    if (size_ > 0) std::memset(data_, 0, size_ * sizeof(T));
  }
  void swap(aligned_buffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace ss
