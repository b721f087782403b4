// The worker threads of ops_http_server's requests with a body (private to services/http/src): each
// worker makes its own handler (its own scratch), takes requests from a bounded queue, and hands
// each answer back to the server's loop thread, which it wakes. The loop never waits for a handler.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ss/core/status.hpp"
#include "ss/http/ops_http_server.hpp"

namespace ss::http::detail {

class handler_pool {
 public:
  struct job {
    std::uint64_t connection = 0;  // the loop's name for the connection to answer
    http_request request;
  };
  struct answer {
    std::uint64_t connection = 0;
    http_response response;
  };

  // `capacity`: requests queued or being handled at most; `wake`: tells the loop an answer is ready.
  handler_pool(std::size_t capacity, std::function<void()> wake);
  ~handler_pool();  // stop()
  handler_pool(const handler_pool&) = delete;
  handler_pool& operator=(const handler_pool&) = delete;

  // Starts `workers` threads, each calling make_handler() once. resource_exhausted when a thread
  // cannot be started.
  status start(int workers, const std::function<http_handler()>& make_handler);
  // Queues a request; false when `capacity` are queued or being handled (the caller answers 503).
  bool submit(job j);
  // The answers ready since the last call, into `out` (cleared first).
  void take_answers(std::vector<answer>& out);
  // Ends the workers once the requests they are handling are answered; queued ones are dropped.
  // Idempotent.
  void stop();

 private:
  void work(http_handler handler);

  const std::size_t capacity_;
  const std::function<void()> wake_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<job> queue_;
  std::size_t busy_ = 0;  // queued plus being handled
  std::vector<answer> answers_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ss::http::detail
