#include "handler_pool.hpp"

#include <spdlog/spdlog.h>

#include <exception>
#include <system_error>
#include <utility>

#include "http_message.hpp"

namespace ss::http::detail {

handler_pool::handler_pool(std::size_t capacity, std::function<void()> wake)
    : capacity_(capacity), wake_(std::move(wake)) {}

handler_pool::~handler_pool() { stop(); }

status handler_pool::start(int workers, const std::function<http_handler()>& make_handler) {
  for (int w = 0; w < workers; ++w) {
    try {
      threads_.emplace_back([this, make_handler] { work(make_handler()); });
    } catch (const std::system_error& e) {
      stop();
      return status(errc::resource_exhausted, std::string("http: cannot start a worker thread: ") + e.what());
    }
  }
  return status::ok();
}

bool handler_pool::submit(job j) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || busy_ >= capacity_) return false;
    ++busy_;
    queue_.push_back(std::move(j));
  }
  ready_.notify_one();
  return true;
}

void handler_pool::take_answers(std::vector<answer>& out) {
  out.clear();
  std::lock_guard<std::mutex> lock(mu_);
  out.swap(answers_);
}

void handler_pool::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  ready_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void handler_pool::work(http_handler handler) {
  for (;;) {
    job j;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      j = std::move(queue_.front());
      queue_.pop_front();
    }
    answer a;
    a.connection = j.connection;
    try {
      a.response = handler(j.request);
      if (a.response.status < 200 || a.response.status > 599) {
        spdlog::warn("http: handler returned status {} for {} {}", a.response.status, j.request.method,
                     j.request.path);
        a.response = plain(500, "internal error\n");
      }
    } catch (const std::exception& e) {
      spdlog::warn("http: handler failed on {} {}: {}", j.request.method, j.request.path, e.what());
      a.response = plain(500, "internal error\n");
    } catch (...) {
      spdlog::warn("http: handler failed on {} {}: unknown exception", j.request.method, j.request.path);
      a.response = plain(500, "internal error\n");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      --busy_;
      answers_.push_back(std::move(a));
    }
    wake_();
  }
}

}  // namespace ss::http::detail
