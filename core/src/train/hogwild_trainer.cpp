#include "ss/core/train/hogwild_trainer.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "ss/core/metrics/accumulator.hpp"
#include "ss/core/train/train_step.hpp"

namespace ss::train {
namespace {

// A bounded queue of parsed batches between the reader thread and the workers, with a pool of
// spent batches so steady state allocates nothing. A full queue blocks the reader: parsing never
// runs ahead of training by more than `capacity` batches.
class batch_queue {
 public:
  explicit batch_queue(std::size_t capacity) : capacity_(capacity) {}

  std::unique_ptr<data::example_batch> take_spare() {
    std::lock_guard<std::mutex> lock(mu_);
    if (spare_.empty()) return std::make_unique<data::example_batch>();
    auto b = std::move(spare_.back());
    spare_.pop_back();
    return b;
  }
  void give_back(std::unique_ptr<data::example_batch> b) {
    std::lock_guard<std::mutex> lock(mu_);
    spare_.push_back(std::move(b));
    --taken_;
    if (taken_ == 0 && ready_.empty()) drained_.notify_all();
  }
  // Waits until every queued batch was popped and given back (the workers are idle).
  void wait_drained() {
    std::unique_lock<std::mutex> lock(mu_);
    drained_.wait(lock, [this] { return ready_.empty() && taken_ == 0; });
  }
  // false when the queue was closed while waiting.
  bool push(std::unique_ptr<data::example_batch> b) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [this] { return closed_ || ready_.size() < capacity_; });
    if (closed_) return false;
    ready_.push_back(std::move(b));
    not_empty_.notify_one();
    return true;
  }
  // nullptr when closed and drained.
  std::unique_ptr<data::example_batch> pop() {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [this] { return closed_ || !ready_.empty(); });
    if (ready_.empty()) return nullptr;
    auto b = std::move(ready_.front());
    ready_.pop_front();
    ++taken_;
    not_full_.notify_one();
    return b;
  }
  // No more pushes; pops drain what is queued (or nothing, with discard).
  void close(bool discard) {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    if (discard) ready_.clear();
    not_full_.notify_all();
    not_empty_.notify_all();
    drained_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_, drained_;
  std::size_t taken_ = 0;  // popped and not yet given back
  std::deque<std::unique_ptr<data::example_batch>> ready_;
  std::vector<std::unique_ptr<data::example_batch>> spare_;
  std::size_t capacity_;
  bool closed_ = false;
};

// The first error of any thread wins and stops the others.
class first_error {
 public:
  void set(status s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.is_ok()) error_ = std::move(s);
    failed_.store(true);
  }
  bool failed() const { return failed_.load(); }
  status get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  mutable std::mutex mu_;
  status error_;
  std::atomic<bool> failed_{false};
};

// Runs the reader loop on the calling thread: source -> queue, until exhausted, failed or stopped.
// Every pause_every examples (0: never), before queueing more, it waits until the workers have
// trained everything queued and calls on_pause with the examples queued so far.
void read_batches(batch_source& source, const model::dlrm_config& config, batch_queue& queue,
                  first_error& error, const std::atomic<bool>* cancel, std::uint64_t pause_every = 0,
                  const std::function<void(std::uint64_t)>& on_pause = {}) {
  std::uint64_t queued = 0, next_pause = pause_every;
  for (;;) {
    if (error.failed() || (cancel != nullptr && cancel->load())) break;
    auto batch = queue.take_spare();
    auto more = source.next(*batch);
    if (!more.is_ok()) {
      error.set(more.error());
      break;
    }
    if (!*more) break;
    if (batch->empty()) continue;
    if (auto st = check_batch(config, *batch); !st.is_ok()) {
      error.set(st);
      break;
    }
    if (pause_every > 0 && queued >= next_pause) {  // more follows: pause before it
      queue.wait_drained();
      if (!error.failed()) on_pause(queued);
      while (next_pause <= queued) next_pause += pause_every;
    }
    queued += batch->size();
    if (!queue.push(std::move(batch))) break;
  }
}

}  // namespace

result<train_result> train_hogwild(dense_model& model, embedding::local_embeddings& store,
                                   batch_source& source, const hogwild_options& options,
                                   const clock_source& clock, const progress_callback& on_progress) {
  const int threads = std::max(1, options.threads);
  batch_queue queue(options.queue_batches > 0 ? options.queue_batches : 2 * threads + 2);
  first_error error;

  // Shared progress state: totals and the recent-examples window, under one mutex touched once
  // per batch (128 examples), far below the cost of a training step.
  std::mutex stats_mu;
  std::condition_variable stats_cv;
  metrics::progressive_window window(options.window);
  std::uint64_t examples = 0, batches = 0, clicks = 0;
  double loss_sum = 0;
  int workers_running = threads;
  std::atomic<std::uint64_t> started{0};  // examples of the batches workers took, for the schedule

  const double start = clock.now_seconds();
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w) {
    workers.emplace_back([&] {
      worker_scratch scratch(model.config(), 256);
      while (auto batch = queue.pop()) {
        if (!error.failed()) {
          prepare_rows(model.config(), *batch, options.buckets, scratch);
          if (auto st = store.fetch(scratch.rows); !st.is_ok()) {
            error.set(st);
            queue.close(/*discard=*/true);
          } else {
            const float lr_scale =
                options.schedule.scale(options.examples_before + started.fetch_add(batch->size()));
            const double loss = train_batch(model, *batch, scratch, lr_scale);
            store.apply(scratch.rows, lr_scale);
            std::uint64_t batch_clicks = 0;
            for (float l : batch->labels) batch_clicks += metrics::is_click(l) ? 1 : 0;
            const double scored_at = clock.now_seconds();
            std::lock_guard<std::mutex> lock(stats_mu);
            // The predictions train_batch made before it updated the model: progressive evaluation.
            window.add(scored_at, scratch.ws.probs.data(), batch->labels.data(), batch->size());
            examples += batch->size();
            clicks += batch_clicks;
            loss_sum += loss * static_cast<double>(batch->size());
            ++batches;
          }
        }
        queue.give_back(std::move(batch));
      }
      std::lock_guard<std::mutex> lock(stats_mu);
      --workers_running;
      stats_cv.notify_all();
    });
  }

  std::thread reader([&] {
    auto pause = [&](std::uint64_t queued) {
      double rate = 0;
      {
        std::lock_guard<std::mutex> lock(stats_mu);
        rate = examples > 0 ? static_cast<double>(clicks) / static_cast<double>(examples) : 0.0;
      }
      options.on_pause(queued, rate);
    };
    read_batches(source, model.config(), queue, error, options.cancel, options.on_pause ? options.pause_every : 0,
                 pause);
    queue.close(/*discard=*/error.failed());
  });

  // The calling thread reports progress until the workers are done.
  {
    std::unique_lock<std::mutex> lock(stats_mu);
    const auto interval = std::chrono::duration<double>(
        options.progress_interval_seconds > 0 ? options.progress_interval_seconds : 3600.0);
    while (workers_running > 0) {
      stats_cv.wait_for(lock, interval, [&] { return workers_running == 0; });
      if (workers_running == 0 || !on_progress || options.progress_interval_seconds <= 0) continue;
      train_progress p;
      p.examples = examples;
      p.seconds = clock.now_seconds() - start;
      p.examples_per_sec = p.seconds > 0 ? static_cast<double>(examples) / p.seconds : 0;
      p.train_click_rate = examples > 0 ? static_cast<double>(clicks) / static_cast<double>(examples) : 0;
      p.window = window.summary(clock.now_seconds(), p.train_click_rate);
      p.fraction_done = source.fraction_done();
      if (p.fraction_done > 0 && p.fraction_done <= 1)
        p.eta_seconds = p.seconds * (1 - p.fraction_done) / p.fraction_done;
      lock.unlock();
      on_progress(p);
      lock.lock();
    }
  }
  reader.join();
  for (auto& t : workers) t.join();
  if (error.failed()) return error.get();

  train_result r;
  r.examples = examples;
  r.batches = batches;
  r.seconds = clock.now_seconds() - start;
  r.examples_per_sec = r.seconds > 0 ? static_cast<double>(examples) / r.seconds : 0;
  r.train_log_loss = examples > 0 ? loss_sum / static_cast<double>(examples) : 0;
  r.train_click_rate = examples > 0 ? static_cast<double>(clicks) / static_cast<double>(examples) : 0;
  r.cancelled = options.cancel != nullptr && options.cancel->load();
  r.last_window = window.summary(clock.now_seconds(), r.train_click_rate);
  return r;
}

result<metrics::summary> evaluate(const dense_model& model, const embedding::local_embeddings& store,
                                  batch_source& source, double base_click_rate,
                                  const eval_options& options) {
  const int threads = std::max(1, options.threads);
  batch_queue queue(2 * threads + 2);
  first_error error;
  std::vector<metrics::accumulator> results(threads);
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w) {
    workers.emplace_back([&, w] {
      worker_scratch scratch(model.config(), 256);
      while (auto batch = queue.pop()) {
        if (!error.failed()) {
          prepare_rows(model.config(), *batch, options.buckets, scratch);
          if (auto st = store.peek(scratch.rows); !st.is_ok()) {
            error.set(st);
            queue.close(/*discard=*/true);
          } else {
            predict_batch(model, *batch, scratch);
            results[w].add(scratch.ws.probs.data(), batch->labels.data(), batch->size());
          }
        }
        queue.give_back(std::move(batch));
      }
    });
  }
  read_batches(source, model.config(), queue, error, nullptr);
  queue.close(/*discard=*/error.failed());
  for (auto& t : workers) t.join();
  if (error.failed()) return error.get();
  for (int w = 1; w < threads; ++w) results[0].merge(results[w]);
  return results[0].compute(base_click_rate);
}

}  // namespace ss::train
