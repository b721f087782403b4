// zmq_transport's public API, the callers' side and the lifecycle. The public functions and
// impl::send, wake, execute and stopped_status run on any caller's thread: they touch only what
// mu guards and the atomics, and hand everything else to the poll thread (execute posts a
// command and waits for its answer, inline when called from the poll thread itself). run() is
// the poll thread's body: it blocks signals, runs loop() (zmq_poll_loop.cpp) and ends with
// shut_down(), which closes every socket on that same thread. The impl struct and the map of
// the other units are in zmq_transport_impl.hpp.
#include "ss/transport/zmq_transport.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <future>
#include <random>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

#include "ss/core/io/hex.hpp"
#include "zmq_transport_impl.hpp"

namespace ss::transport {
namespace {

// Asynchronous signals (SIGINT, SIGTERM, ...) belong to the service's signal thread, never to the
// poll thread: blocked here they cannot interrupt zmq_poll or kill the process through a thread
// that does not wait for them. Synchronous faults stay deliverable.
void block_async_signals() {
  sigset_t set;
  sigfillset(&set);
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) sigdelset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace

std::uint64_t detail::random64() {
  std::random_device rd;
  const auto t = static_cast<std::uint64_t>(clock_type::now().time_since_epoch().count());
  return ((std::uint64_t{rd()} << 32) ^ rd()) ^ (t * 0x9e3779b97f4a7c15ULL);
}

zmq_transport::impl::impl(std::shared_ptr<zmq::context_t> c, zmq_transport_options o)
    : ctx(std::move(c)),
      opts(std::move(o)),
      id_prefix(opts.name.substr(0, 200) + "#" + io::hex(detail::random64(), 16) + ".") {}

void zmq_transport::impl::warn(const std::string& message) const {
  if (opts.warn) {
    opts.warn(message);
  } else {
    spdlog::warn("{}", message);
  }
}

// ---------------------------------------------------------------- callers' side

// Wakes the poll thread. The flag keeps a burst of sends to one eventfd write: the poll thread
// clears it *before* it takes the queue, so a sender that finds it set knows its frame will be
// seen by a drain that has not happened yet.
void zmq_transport::impl::wake() {
  if (wake_pending.exchange(true)) return;
  const std::uint64_t one = 1;
  if (::write(wake_fd, &one, sizeof one) < 0) {
    // Only EAGAIN is possible (the counter is saturated): the thread is awake anyway.
  }
}

// Runs `fn` on the poll thread and returns its result; inline when already there.
template <class R, class F>
R zmq_transport::impl::execute(F fn, R when_stopped) {
  if (on_poll_thread()) return stop_requested.load() ? when_stopped : fn();
  auto done = std::make_shared<std::promise<R>>();
  auto answer = done->get_future();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (stopped || stop_requested.load()) return when_stopped;
    commands.push_back({[done, fn = std::move(fn)]() mutable { done->set_value(fn()); },
                        [done, when_stopped] { done->set_value(when_stopped); }});
  }
  wake();
  return answer.get();
}

status zmq_transport::impl::stopped_status() const {
  std::lock_guard<std::mutex> lock(mu);
  if (!failure.empty()) return {errc::internal, prefix() + failure};
  return {errc::cancelled, prefix() + "transport stopped"};
}

status zmq_transport::impl::send(const peer_address& to, wire::frame f) {
  auto fail = [this](errc code, std::string message) {
    send_failures.fetch_add(1, std::memory_order_relaxed);
    return status(code, prefix() + message);
  };
  if (!f || f->size() == 0) return fail(errc::invalid_argument, "cannot send an empty frame");
  const std::size_t size = f->size();
  if (size > opts.max_frame_bytes) {
    return fail(errc::out_of_range, "frame of " + std::to_string(size) +
                                        " bytes exceeds max_frame_bytes " +
                                        std::to_string(opts.max_frame_bytes));
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    if (stopped || stop_requested.load()) {
      send_failures.fetch_add(1, std::memory_order_relaxed);
      return {failure.empty() ? errc::cancelled : errc::internal,
              prefix() + (failure.empty() ? std::string("transport stopped") : failure)};
    }
    if (to.link == 0) {
      if (!listening) return fail(errc::not_found, "cannot reply on a route: not listening");
      if (to.route.empty()) return fail(errc::invalid_argument, "empty route");
    } else if (open_links.count(to.link) == 0) {
      return fail(errc::not_found, "no open link " + std::to_string(to.link));
    }
    if (queued_frames >= opts.max_queued_frames ||
        (queued_frames > 0 && queued_bytes + size > opts.max_queued_bytes)) {
      return fail(errc::resource_exhausted,
                  "outbound queue full (" + std::to_string(queued_frames) + " frames, " +
                      std::to_string(queued_bytes) + " bytes)");
    }
    inbox.push_back({to, std::move(f)});
    ++queued_frames;
    queued_bytes += size;
    if (queued_frames > queue_high_water) queue_high_water = queued_frames;
  }
  wake();
  return status::ok();
}

template <class Counts>
void zmq_transport::impl::read_admission_counts(Counts& out) const {
  out.auth_refused = auth_refused.load(std::memory_order_relaxed);
  out.handshakes_failed = handshakes_failed.load(std::memory_order_relaxed);
  out.connections_open = connections.open();
  out.connections_refused = connections.refused();
  out.links_refused = links_refused.load(std::memory_order_relaxed);
}

// ---------------------------------------------------------------- lifecycle

void zmq_transport::impl::run() {
  block_async_signals();
  pthread_setname_np(pthread_self(), opts.name.substr(0, 15).c_str());
  try {
    loop();
  } catch (const std::exception& e) {
    // libzmq refused something that cannot fail in a healthy process (ETERM: someone
    // terminated the shared context). Reported by every later call instead of crashing.
    std::lock_guard<std::mutex> lock(mu);
    failure = std::string("poll thread failed: ") + e.what();
  }
  shut_down();
}

// Closes every socket (linger per options) and answers whatever is still posted.
void zmq_transport::impl::shut_down() {
  std::deque<command> left;
  {
    std::lock_guard<std::mutex> lock(mu);
    stopped = true;
    left.swap(commands);
    inbox.clear();
    open_links.clear();
    listening = false;
    queued_frames = queued_bytes = 0;
  }
  for (auto& c : left) c.cancel();
  for (auto& [id, l] : links) close_dealer(l);
  links.clear();
  router_pending.clear();
  // No ZAP callback reaches this transport after this (the authenticator itself stops,
  // unbinding inproc://zeromq.zap.01, when the last transport of the context lets go of it).
  if (zap) zap->remove_domain(zap_domain);
  zap.reset();
  if (router && monitor) zmq_socket_monitor(router->handle(), nullptr, 0);
  monitor.reset();
  router.reset();
  handler.reset();  // what it captured is released here, on the thread that used it
}

void zmq_transport::impl::stop() {
  stop_requested.store(true);
  const std::uint64_t one = 1;
  if (::write(wake_fd, &one, sizeof one) < 0) {
    // EAGAIN only: a wake-up is already pending.
  }
  if (on_poll_thread()) return;  // from the handler: the loop ends when it returns
  std::lock_guard<std::mutex> lock(join_mu);
  if (thread.joinable()) thread.join();
}

// ---------------------------------------------------------------- public API

std::shared_ptr<zmq::context_t> make_zmq_context(int io_threads) {
  auto ctx = std::make_shared<zmq::context_t>(io_threads);
  // Sockets that do not set ZMQ_LINGER (a test's raw socket) do not hold up termination either.
  ctx->set(zmq::ctxopt::blocky, false);
  // A local cluster of hundreds of members shares one context: as many sockets as libzmq allows
  // (its default, 1023, ends a 256-trainer `local` with "Too many open files").
  ctx->set(zmq::ctxopt::max_sockets, std::min(ctx->get(zmq::ctxopt::socket_limit), 65535));
  return ctx;
}

zmq_transport::zmq_transport(std::shared_ptr<zmq::context_t> context, zmq_transport_options options)
    : impl_(std::make_unique<impl>(std::move(context), std::move(options))) {
  if (!impl_->ctx) throw std::invalid_argument("zmq_transport: null context");
  if (auto st = check_security(impl_->opts.security); !st.is_ok()) {
    throw std::invalid_argument(impl_->prefix() + st.message());
  }
  impl_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->wake_fd < 0) {
    throw std::system_error(errno, std::generic_category(), impl_->prefix() + "eventfd");
  }
  impl* self = impl_.get();
  impl_->thread = std::thread([self] { self->run(); });
  impl_->thread_id = impl_->thread.get_id();
}

zmq_transport::~zmq_transport() {
  impl_->stop();
  ::close(impl_->wake_fd);
}

void zmq_transport::on_frame(frame_handler handler) {
  impl* self = impl_.get();
  (void)impl_->execute(
      [self, h = std::move(handler)]() mutable {
        self->handler = std::make_shared<const frame_handler>(std::move(h));
        return true;
      },
      false);
}

result<std::string> zmq_transport::listen(const std::string& endpoint) {
  impl* self = impl_.get();
  return impl_->execute([self, endpoint] { return self->do_listen(endpoint); },
                        result<std::string>(impl_->stopped_status()));
}

result<std::uint32_t> zmq_transport::connect(const std::string& endpoint) {
  impl* self = impl_.get();
  return impl_->execute([self, endpoint] { return self->do_connect(endpoint); },
                        result<std::uint32_t>(impl_->stopped_status()));
}

void zmq_transport::close_link(std::uint32_t link) {
  {
    // Refuse sends on the link at once; the socket closes on the poll thread.
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->open_links.erase(link);
  }
  impl* self = impl_.get();
  (void)impl_->execute(
      [self, link] {
        self->do_close_link(link);
        return true;
      },
      false);
}

status zmq_transport::send(const actors::peer_address& to, wire::frame f) {
  return impl_->send(to, std::move(f));
}

actors::transport_stats zmq_transport::stats() const {
  actors::transport_stats s;
  s.frames_in = impl_->frames_in.load(std::memory_order_relaxed);
  s.frames_out = impl_->frames_out.load(std::memory_order_relaxed);
  s.bytes_in = impl_->bytes_in.load(std::memory_order_relaxed);
  s.bytes_out = impl_->bytes_out.load(std::memory_order_relaxed);
  s.frames_rejected = impl_->frames_rejected.load(std::memory_order_relaxed);
  s.send_failures = impl_->send_failures.load(std::memory_order_relaxed);
  impl_->read_admission_counts(s);
  s.max_connections = impl_->opts.max_connections;
  std::lock_guard<std::mutex> lock(impl_->mu);
  s.queue_depth = impl_->queued_frames;
  s.queue_high_water = impl_->queue_high_water;
  return s;
}

zmq_transport_counters zmq_transport::counters() const {
  zmq_transport_counters c;
  c.peers_accepted = impl_->peers_accepted.load(std::memory_order_relaxed);
  c.peers_disconnected = impl_->peers_disconnected.load(std::memory_order_relaxed);
  c.unroutable = impl_->unroutable.load(std::memory_order_relaxed);
  c.handler_exceptions = impl_->handler_exceptions.load(std::memory_order_relaxed);
  impl_->read_admission_counts(c);
  return c;
}

void zmq_transport::stop() { impl_->stop(); }

const zmq_transport_options& zmq_transport::options() const { return impl_->opts; }

}  // namespace ss::transport
