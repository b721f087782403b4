#include "zap_authenticator.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include <zmq.hpp>

namespace ss::transport::detail {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";

std::mutex registry_mu;
std::map<const zmq::context_t*, std::weak_ptr<zap_authenticator>>& registry() {
  static std::map<const zmq::context_t*, std::weak_ptr<zap_authenticator>> r;
  return r;
}

}  // namespace

struct zap_authenticator::impl {
  struct domain_state {
    domain_policy policy;
    std::map<std::string, std::string> keys;  // Z85 key -> user id
  };

  std::shared_ptr<zmq::context_t> ctx;
  int stop_fd = -1;
  std::thread thread;
  std::mutex mu;
  std::unordered_map<std::string, domain_state> domains;

  ~impl() {
    if (thread.joinable()) {
      const std::uint64_t one = 1;
      if (::write(stop_fd, &one, sizeof one) < 0) {
        // EAGAIN only: a stop is already pending.
      }
      thread.join();
    }
    if (stop_fd >= 0) ::close(stop_fd);
  }

  // Answers one request; `parts` as received (ZAP: version, request id, domain, address,
  // identity, mechanism, credentials...).
  void answer(zmq::socket_t& rep, std::vector<zmq::message_t>& parts) {
    auto text = [&](std::size_t i) { return i < parts.size() ? parts[i].to_string() : std::string(); };
    std::string code = "400", reason = "refused", user_id;
    if (parts.size() >= 6 && text(0) == "1.0") {
      const std::string domain = text(2), address = text(3), mechanism = text(5);
      std::lock_guard<std::mutex> lock(mu);
      auto it = domains.find(domain);
      if (it == domains.end()) {
        reason = "unknown ZAP domain";
      } else if (it->second.policy.curve) {
        if (mechanism == "CURVE" && parts.size() >= 7 && parts[6].size() == 32) {
          char z85[41] = {0};
          zmq_z85_encode(z85, static_cast<const std::uint8_t*>(parts[6].data()), 32);
          if (auto key = it->second.keys.find(z85); key != it->second.keys.end()) {
            code = "200";
            user_id = key->second;
          } else {
            reason = "unknown client key";
            if (it->second.policy.on_refused) it->second.policy.on_refused(z85, address);
          }
        } else {
          reason = "mechanism " + mechanism + " is not accepted";
        }
      } else if (mechanism == "NULL") {
        code = "200";
      } else {
        reason = "mechanism " + mechanism + " is not accepted";
      }
      if (code == "200" && it->second.policy.admit && !it->second.policy.admit()) {
        code = "400";
        reason = "too many connections";
        if (it->second.policy.on_full) it->second.policy.on_full(address);
      }
      if (code == "200") reason = "OK";
    }
    const std::string request_id = text(1);
    rep.send(zmq::buffer(std::string("1.0")), zmq::send_flags::sndmore);
    rep.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
    rep.send(zmq::buffer(code), zmq::send_flags::sndmore);
    rep.send(zmq::buffer(reason), zmq::send_flags::sndmore);
    // libzmq attaches the user id to every message of the connection ("User-Id" property).
    rep.send(zmq::buffer(code == "200" ? user_id : std::string()), zmq::send_flags::sndmore);
    rep.send(zmq::buffer(std::string()), zmq::send_flags::none);     // metadata
  }

  void run(std::promise<status>& bound) {
    sigset_t set;
    sigfillset(&set);
    for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) sigdelset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    pthread_setname_np(pthread_self(), "zap");
    std::optional<zmq::socket_t> rep;
    try {
      rep.emplace(*ctx, zmq::socket_type::rep);
      rep->set(zmq::sockopt::linger, 0);
      // An authenticator of this context that just stopped has unbound already; retry briefly
      // anyway in case a handler of someone else's is going away.
      for (int attempt = 0;; ++attempt) {
        try {
          rep->bind(kZapEndpoint);
          break;
        } catch (const zmq::error_t& e) {
          if (e.num() != EADDRINUSE || attempt >= 20) throw;
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    } catch (const zmq::error_t& e) {
      bound.set_value(status(errc::unavailable, std::string("cannot start the ZAP handler (client "
                                                            "authentication and connection limits) at ") +
                                                    kZapEndpoint + ": " + e.what()));
      return;
    }
    bound.set_value(status::ok());
    try {
      for (;;) {
        zmq::pollitem_t items[] = {{rep->handle(), 0, ZMQ_POLLIN, 0}, {nullptr, stop_fd, ZMQ_POLLIN, 0}};
        try {
          zmq::poll(items, 2, std::chrono::milliseconds(-1));
        } catch (const zmq::error_t& e) {
          if (e.num() == EINTR) continue;
          throw;
        }
        if (items[1].revents & ZMQ_POLLIN) break;
        if (!(items[0].revents & ZMQ_POLLIN)) continue;
        std::vector<zmq::message_t> parts;
        for (;;) {
          zmq::message_t m;
          if (!rep->recv(m, zmq::recv_flags::dontwait)) break;
          const bool more = m.more();
          parts.push_back(std::move(m));
          if (!more) break;
        }
        if (!parts.empty()) answer(*rep, parts);
      }
    } catch (const zmq::error_t&) {
      // ETERM: the context is going away; nothing more to answer.
    }
    try {
      rep->unbind(kZapEndpoint);  // inproc: unregistered at once, unlike a close
    } catch (const zmq::error_t&) {
    }
    rep.reset();
  }
};

zap_authenticator::zap_authenticator(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

zap_authenticator::~zap_authenticator() = default;

result<std::shared_ptr<zap_authenticator>> zap_authenticator::for_context(const std::shared_ptr<zmq::context_t>& ctx) {
  std::lock_guard<std::mutex> lock(registry_mu);
  for (auto it = registry().begin(); it != registry().end();) {
    it = it->second.expired() ? registry().erase(it) : std::next(it);
  }
  auto& slot = registry()[ctx.get()];
  if (auto existing = slot.lock()) return existing;
  auto p = std::make_unique<impl>();
  p->ctx = ctx;
  p->stop_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (p->stop_fd < 0) return status(errc::io_error, "ZAP handler: eventfd failed");
  std::promise<status> bound;
  auto ready = bound.get_future();
  impl* raw = p.get();
  p->thread = std::thread([raw, &bound] { raw->run(bound); });
  status st = ready.get();
  if (!st.is_ok()) return st;  // p's destructor joins the finished thread
  std::shared_ptr<zap_authenticator> a(new zap_authenticator(std::move(p)));
  slot = a;
  return a;
}

void zap_authenticator::add_domain(const std::string& domain, domain_policy policy) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto& d = impl_->domains[domain];
  d.keys = policy.keys;
  d.policy = std::move(policy);
}

void zap_authenticator::remove_domain(const std::string& domain) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->domains.erase(domain);
}

}  // namespace ss::transport::detail
