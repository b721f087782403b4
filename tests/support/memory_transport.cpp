#include "memory_transport.hpp"

#include <utility>

namespace ss::test {

using actors::peer_address;

memory_network::memory_network(memory_network_options options) : options_(options) {}

memory_network::~memory_network() = default;

std::size_t memory_network::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void memory_network::drop_next(std::size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  drop_next_ += n;
}

void memory_network::duplicate_next(std::size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  duplicate_next_ += n;
}

void memory_network::disconnect(const std::string& endpoint) {
  std::lock_guard<std::mutex> lock(mu_);
  disconnected_.insert(endpoint);
}

void memory_network::reconnect(const std::string& endpoint) {
  std::lock_guard<std::mutex> lock(mu_);
  disconnected_.erase(endpoint);
}

void memory_network::set_identity(const std::string& name, actors::peer_identity identity) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, t] : transports_)
    if (t.name == name) t.identity = identity;
}

memory_network_stats memory_network::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::uint64_t memory_network::dropped_at(const std::string& endpoint) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = dropped_at_.find(endpoint);
  return it == dropped_at_.end() ? 0 : it->second;
}

int memory_network::attach(memory_transport* t, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const int id = next_transport_++;
  transports_[id].transport = t;
  transports_[id].name = name;
  return id;
}

void memory_network::detach(int id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    it = it->second == id ? listeners_.erase(it) : std::next(it);
  }
  for (auto it = routes_.begin(); it != routes_.end();) {
    it = it->second.transport == id ? routes_.erase(it) : std::next(it);
  }
  // Its frames still queued are dropped at delivery (the sender is gone).
  transports_.erase(id);
}

bool memory_network::deliver_one() {
  memory_transport::frame_handler handler;
  peer_address from;
  wire::frame frame;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.empty()) return false;
    envelope e = std::move(queue_.front());
    queue_.pop_front();
    if (!e.duplicate) {
      auto key = queue_key{e.sender, e.link, e.route};
      if (auto it = per_link_pending_.find(key); it != per_link_pending_.end() && --it->second == 0) {
        per_link_pending_.erase(it);
      }
      if (auto s = transports_.find(e.sender); s != transports_.end()) --s->second.pending;
    }

    auto dropped = [&](const std::string* endpoint) {
      ++stats_.dropped;
      if (endpoint != nullptr) ++dropped_at_[*endpoint];
      return true;
    };
    if (drop_next_ > 0) {
      --drop_next_;
      return dropped(nullptr);
    }
    // Resolve the destination now: names, links and transports may have changed since send().
    auto sender = transports_.find(e.sender);
    if (sender == transports_.end() || sender->second.stopped) return dropped(nullptr);
    memory_transport* target = nullptr;
    if (e.link != 0) {
      auto link = sender->second.links.find(e.link);
      if (link == sender->second.links.end()) return dropped(nullptr);  // closed meanwhile
      const std::string& endpoint = link->second.endpoint;
      if (disconnected_.count(endpoint) != 0) return dropped(&endpoint);
      auto listener = listeners_.find(endpoint);
      if (listener == listeners_.end()) return dropped(nullptr);  // nobody bound there
      auto t = transports_.find(listener->second);
      if (t == transports_.end() || t->second.stopped) return dropped(nullptr);
      target = t->second.transport;
      from = peer_address{0, link->second.route, sender->second.identity};
    } else {
      auto route = routes_.find(e.route);
      if (route == routes_.end()) return dropped(nullptr);
      if (disconnected_.count(route->second.endpoint) != 0) return dropped(&route->second.endpoint);
      auto t = transports_.find(route->second.transport);
      if (t == transports_.end() || t->second.stopped) return dropped(nullptr);
      if (t->second.links.count(route->second.link) == 0) return dropped(nullptr);
      target = t->second.transport;
      from = peer_address{route->second.link, {}};
    }
    if (!target->handler_) return dropped(nullptr);

    if (duplicate_next_ > 0 && !e.duplicate) {
      --duplicate_next_;
      ++stats_.duplicated;
      envelope copy = e;
      copy.duplicate = true;
      queue_.push_front(std::move(copy));
    }
    ++stats_.delivered;
    ++target->stats_.frames_in;
    target->stats_.bytes_in += e.frame->size();
    handler = target->handler_;
    frame = std::move(e.frame);
  }
  handler(from, std::move(frame));  // outside the lock: the handler may send
  return true;
}

std::size_t memory_network::deliver_all(std::size_t limit) {
  std::size_t n = 0;
  while (n < limit && deliver_one()) ++n;
  return n;
}

// ------------------------------------------------------------------------------------------------

memory_transport::memory_transport(memory_network& network, std::string name)
    : net_(network), name_(std::move(name)) {
  id_ = net_.attach(this, name_);
}

memory_transport::~memory_transport() { net_.detach(id_); }

void memory_transport::on_frame(frame_handler handler) {
  std::lock_guard<std::mutex> lock(net_.mu_);
  handler_ = std::move(handler);
}

result<std::string> memory_transport::listen(const std::string& endpoint) {
  std::lock_guard<std::mutex> lock(net_.mu_);
  if (net_.transports_[id_].stopped) return status(errc::cancelled, name_ + ": transport stopped");
  auto [it, inserted] = net_.listeners_.emplace(endpoint, id_);
  if (!inserted && it->second != id_) {
    return status(errc::unavailable, name_ + ": cannot bind " + endpoint + ": address in use");
  }
  listening_ = true;
  return endpoint;
}

result<std::uint32_t> memory_transport::connect(const std::string& endpoint) {
  std::lock_guard<std::mutex> lock(net_.mu_);
  auto& self = net_.transports_[id_];
  if (self.stopped) return status(errc::cancelled, name_ + ": transport stopped");
  const std::uint32_t link = self.next_link++;
  std::string route = name_ + "#" + std::to_string(id_) + "." + std::to_string(link);
  self.links[link] = {endpoint, route};
  net_.routes_[route] = {id_, link, endpoint};
  return link;
}

void memory_transport::close_link(std::uint32_t link) {
  std::lock_guard<std::mutex> lock(net_.mu_);
  auto& self = net_.transports_[id_];
  auto it = self.links.find(link);
  if (it == self.links.end()) return;
  net_.routes_.erase(it->second.route);
  self.links.erase(it);
}

status memory_transport::send(const peer_address& to, wire::frame f) {
  std::lock_guard<std::mutex> lock(net_.mu_);
  auto fail = [this](errc code, std::string message) {
    ++stats_.send_failures;
    return status(code, name_ + ": " + message);
  };
  auto& self = net_.transports_[id_];
  if (self.stopped) return fail(errc::cancelled, "transport stopped");
  if (!f || f->size() == 0) return fail(errc::invalid_argument, "cannot send an empty frame");
  if (to.link != 0) {
    if (self.links.count(to.link) == 0) {
      return fail(errc::not_found, "no open link " + std::to_string(to.link));
    }
  } else {
    if (!listening_) return fail(errc::not_found, "cannot reply on a route: not listening");
    if (net_.routes_.count(to.route) == 0) return fail(errc::not_found, "unknown route " + to.route);
  }
  const std::string route = to.link != 0 ? std::string() : to.route;
  auto& waiting = net_.per_link_pending_[memory_network::queue_key{id_, to.link, route}];
  if (waiting >= net_.options_.link_queue_bound) {
    return fail(errc::resource_exhausted,
                "link queue full (" + std::to_string(waiting) + " frames)");
  }
  ++waiting;
  ++self.pending;
  ++net_.stats_.sent;
  ++stats_.frames_out;
  stats_.bytes_out += f->size();
  if (self.pending > stats_.queue_high_water) stats_.queue_high_water = self.pending;
  net_.queue_.push_back({id_, to.link, route, std::move(f), false});
  return status::ok();
}

actors::transport_stats memory_transport::stats() const {
  std::lock_guard<std::mutex> lock(net_.mu_);
  actors::transport_stats s = stats_;
  auto it = net_.transports_.find(id_);
  s.queue_depth = it == net_.transports_.end() ? 0 : it->second.pending;
  return s;
}

void memory_transport::stop() {
  frame_handler released;  // destroyed after the lock is gone: its captures may call back
  std::lock_guard<std::mutex> lock(net_.mu_);
  net_.transports_[id_].stopped = true;
  for (auto it = net_.listeners_.begin(); it != net_.listeners_.end();) {
    it = it->second == id_ ? net_.listeners_.erase(it) : std::next(it);
  }
  listening_ = false;
  released.swap(handler_);
}

}  // namespace ss::test
