// The bound on connections a listening socket keeps open (zmq_transport_options::max_connections).
//
// libzmq accepts every tcp connection and offers no call to refuse one, except its ZAP hook: the
// ZAP handler is asked once per inbound handshake (CURVE, and NULL when the socket has a ZAP
// domain) and may refuse it, after which libzmq closes that connection. So admission happens
// there, on the ZAP thread, while the socket monitor tells the poll thread which connections were
// accepted and which closed. The two threads meet here.
//
// A connection counts from its ACCEPTED event to its DISCONNECTED event (both name its socket
// descriptor), handshaken or not: that is the resource the bound protects. The connection asking
// for admission is itself counted once the poll thread has seen its ACCEPTED event, which comes
// a few round trips before its handshake reaches ZAP; in the rare case it has not been seen yet,
// the count is one lower and a burst of simultaneous handshakes may go over by that many.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace ss::transport {

class connection_limit {
 public:
  // `max` 0: no bound (admit() always says yes; connections are still counted).
  explicit connection_limit(std::size_t max) : max_(max) {}

  // Poll thread, from the monitor: a connection was accepted on `fd`.
  void accepted(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    ++by_fd_[fd];
    ++open_;
  }

  // Poll thread, from the monitor: the connection on `fd` closed.
  void closed(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_fd_.find(fd);
    if (it == by_fd_.end()) return;  // accepted before the monitor started
    if (--it->second == 0) by_fd_.erase(it);
    --open_;
  }

  // ZAP thread: may the connection now completing its handshake stay? Counts a refusal.
  bool admit() {
    std::lock_guard<std::mutex> lock(mu_);
    if (max_ != 0 && open_ > max_) {
      ++refused_;
      return false;
    }
    return true;
  }

  std::size_t max() const { return max_; }

  // Connections open now (accepted, not yet closed; refused ones until libzmq closes them).
  std::size_t open() const {
    std::lock_guard<std::mutex> lock(mu_);
    return open_;
  }

  // Handshakes refused because the bound was reached.
  std::uint64_t refused() const {
    std::lock_guard<std::mutex> lock(mu_);
    return refused_;
  }

 private:
  const std::size_t max_;
  mutable std::mutex mu_;
  std::unordered_map<int, int> by_fd_;  // open connections by socket descriptor
  std::size_t open_ = 0;
  std::uint64_t refused_ = 0;
};

}  // namespace ss::transport
