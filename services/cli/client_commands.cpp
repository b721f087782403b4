// Client commands: one request to a running coordinator, one answer.
//   shadowsync status   --coordinator EP          the job's status JSON
//   shadowsync snapshot --coordinator EP          take a cluster snapshot now
//   shadowsync export   --coordinator EP --out F  write the current model to F
//   shadowsync stop     --coordinator EP          end the job (a following one as at the end of its data)
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "client.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/json.hpp"
#include "ss/core/json_value.hpp"
#include "ss/transport/zmq_transport.hpp"
#include "ss/wire/codec.hpp"

namespace ss::cli {
namespace {

struct client_flags {
  std::string coordinator = "tcp://127.0.0.1:5555";
  double timeout = 30;
  std::string curve_server_key;  // the cluster's server.pub (or server.key); "" = plain
  std::string curve_client_key;  // a client pair listed in the cluster's authorized_keys
  transport::transport_security security;  // loaded from the two above
};

void add_client_flags(config::option_set& opts, client_flags& f, double default_timeout) {
  f.timeout = default_timeout;
  opts.add("coordinator", &f.coordinator, "The coordinator's endpoint.");
  opts.add("timeout", &f.timeout, "Seconds to wait for the answer.").range(0.1, 86400.0);
  opts.add("curve-server-key", &f.curve_server_key,
           "A CURVE cluster's server public key file (server.pub); with --curve-client-key. Empty: plain.");
  opts.add("curve-client-key", &f.curve_client_key,
           "This client's CURVE key pair file (e.g. admin.key; its public key must be in the cluster's "
           "authorized_keys).");
}

// Loads --curve-* into f.security; false (after printing why) when they are wrong.
bool load_client_security(const char* name, client_flags& f) {
  auto sec = transport::load_curve_security(f.curve_server_key, f.curve_client_key, "", false);
  if (!sec.is_ok()) {
    std::fprintf(stderr, "shadowsync %s: %s\n", name, sec.error().message().c_str());
    return false;
  }
  f.security = *sec;
  return true;
}

// A timeout from a CURVE cluster looks the same as one from a dead coordinator: say so.
std::string with_hint(const status& st, const client_flags& f) {
  if (st.code() != errc::timeout) return st.message();
  return st.message() + (f.security.mode == transport::security_mode::plain
                             ? " (if the cluster runs CURVE, give --curve-server-key and --curve-client-key)"
                             : " (or the coordinator refused this client's key: is it in authorized_keys?)");
}

}  // namespace

namespace {

// One connection to a service and the first answer that comes over it: a request may be sent
// again (to a restarted service at the same endpoint) and any answer ends the wait.
class service_call {
 public:
  service_call(const std::string& endpoint, const transport::transport_security& security)
      : endpoint_(endpoint), transport_(transport::make_zmq_context(), options(security)) {
    transport_.on_frame([this](const actors::peer_address&, wire::frame f) {
      auto env = wire::decode(*f);
      std::lock_guard<std::mutex> lock(mu_);
      if (answer_) return;
      if (!env.is_ok()) answer_ = env.error().with_context("the answer of " + endpoint_);
      else answer_ = std::move(env->message);
      answered_.notify_all();
    });
  }
  ~service_call() { transport_.stop(); }

  status send(wire::body message) {
    if (link_ == 0) {
      auto link = transport_.connect(endpoint_);
      if (!link.is_ok()) return link.error();
      link_ = *link;
    }
    wire::envelope e;
    e.request_id = ++sent_;
    e.message = std::move(message);
    return transport_.send(actors::peer_address{link_, {}}, wire::encode(e));
  }

  // The answer, once one came within `seconds`; else nothing.
  std::optional<result<wire::body>> wait(double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    answered_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return answer_.has_value(); });
    if (!answer_) return std::nullopt;
    auto out = std::move(answer_);
    answer_.reset();
    return out;
  }

  // Why no answer came: a refused handshake, or silence.
  status silence(double seconds) const {
    if (transport_.counters().links_refused > 0)
      return status(errc::unavailable, endpoint_ + " refused this client's connection at its handshake: it is at its "
                                                   "--max-connections, or it does not authorize this client's key");
    return status(errc::timeout, "no answer from " + endpoint_ + " within " + std::to_string(seconds) + "s");
  }

 private:
  static transport::zmq_transport_options options(const transport::transport_security& security) {
    transport::zmq_transport_options o;
    o.name = "client";
    o.security = security;
    return o;
  }

  std::string endpoint_;
  transport::zmq_transport transport_;
  std::uint32_t link_ = 0;
  std::uint64_t sent_ = 0;
  std::mutex mu_;
  std::condition_variable answered_;
  std::optional<result<wire::body>> answer_;
};

}  // namespace

result<wire::body> call_once(const std::string& endpoint, wire::body message, double timeout_seconds,
                             const transport::transport_security& security) {
  service_call call(endpoint, security);
  if (auto st = call.send(std::move(message)); !st.is_ok()) return st;
  if (auto answer = call.wait(timeout_seconds)) return std::move(*answer);
  return call.silence(timeout_seconds);
}

std::string query_status(const std::string& endpoint, double timeout_seconds,
                         const transport::transport_security& security) {
  auto reply = call_once(endpoint, wire::status_request{}, timeout_seconds, security);
  if (!reply.is_ok()) return "";
  const auto* r = std::get_if<wire::status_reply>(&*reply);
  return r != nullptr ? r->json : "";
}

namespace {

// Parses a client command's flags (the shared ones, plus those `add_flags` adds), answers --help,
// loads the CURVE keys, then runs `fn`.
template <class AddFlags, class Fn>
int run_client(const char* name, const char* description, double default_timeout, const args& a,
               const config::environment& env, AddFlags&& add_flags, Fn&& fn) {
  client_flags f;
  command_line cmd({name, ""}, description);
  add_client_flags(cmd.options(), f, default_timeout);
  add_flags(cmd.options());
  if (auto done = cmd.parse(a, env)) return *done;
  if (!load_client_security(name, f)) return 2;
  return fn(f);
}

template <class Fn>
int run_client(const char* name, const char* description, double default_timeout, const args& a,
               const config::environment& env, Fn&& fn) {
  return run_client(name, description, default_timeout, a, env, [](config::option_set&) {}, std::forward<Fn>(fn));
}

int print_error(const char* name, const std::string& message) {
  std::fprintf(stderr, "shadowsync %s: %s\n", name, message.c_str());
  return 1;
}

// Sends `request` to the coordinator and returns its answer when it is a `Reply`; an error
// answer, another answer or none is the error.
template <class Reply>
result<Reply> ask(const client_flags& f, wire::body request) {
  auto reply = call_once(f.coordinator, std::move(request), f.timeout, f.security);
  if (!reply.is_ok()) return status(reply.error().code(), with_hint(reply.error(), f));
  if (const auto* err = std::get_if<wire::error_reply>(&*reply)) return status(err->code, err->message);
  if (auto* r = std::get_if<Reply>(&*reply)) return std::move(*r);
  return status(errc::internal, std::string("unexpected answer ") + wire::message_name(*reply));
}

// The coordinator's incarnation (a restart changes it), or 0 when it does not answer in time.
std::uint64_t coordinator_incarnation(const client_flags& f, double timeout_seconds) {
  const auto doc = json_value::parse(query_status(f.coordinator, timeout_seconds, f.security));
  return doc.is_ok() ? (*doc)["service"]["incarnation"].uint64() : 0;
}

// A request that takes a while (an export, a snapshot), answered within --timeout although the
// coordinator may restart meanwhile: a restarted coordinator never answers what its predecessor
// took, so the status is asked every couple of seconds, and when another incarnation answers, the
// request goes to it again. "Starting" answers are asked again too. Both requests are idempotent
// (a snapshot is simply taken again; an export rewrites its file atomically).
result<wire::body> call_across_restarts(const client_flags& f, const char* name, const wire::body& request) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(f.timeout);
  const auto left = [&deadline] { return std::chrono::duration<double>(deadline - clock::now()).count(); };
  constexpr double poll_seconds = 2;
  service_call call(f.coordinator, f.security);
  std::uint64_t asked = 0;  // the incarnation the request went to
  bool waiting = false;     // for an answer to the request sent last
  while (left() > 0) {
    if (waiting) {
      if (auto answer = call.wait(std::min(poll_seconds, left()))) {
        const auto* err = answer->is_ok() ? std::get_if<wire::error_reply>(&**answer) : nullptr;
        if (err == nullptr || err->code != errc::unavailable) return std::move(*answer);
        waiting = false;  // starting: asked again
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        continue;
      }
    }
    const std::uint64_t now_at = coordinator_incarnation(f, std::max(0.1, std::min(poll_seconds, left())));
    if (now_at == 0 || (waiting && now_at == asked)) continue;  // down or restarting; or still at work
    if (waiting) std::fprintf(stderr, "shadowsync %s: the coordinator restarted before it answered; asking it again\n", name);
    if (auto st = call.send(request); !st.is_ok()) return st;
    asked = now_at;
    waiting = true;
  }
  return call.silence(f.timeout);
}

// ask(), for a request that takes a while: sent again to a coordinator that restarted meanwhile.
template <class Reply>
result<Reply> ask_across_restarts(const client_flags& f, const char* name, wire::body request) {
  auto reply = call_across_restarts(f, name, request);
  if (!reply.is_ok()) return status(reply.error().code(), with_hint(reply.error(), f));
  if (const auto* err = std::get_if<wire::error_reply>(&*reply)) return status(err->code, err->message);
  if (auto* r = std::get_if<Reply>(&*reply)) return std::move(*r);
  return status(errc::internal, std::string("unexpected answer ") + wire::message_name(*reply));
}

}  // namespace

int run_status(const args& a, const config::environment& env) {
  return run_client("status", "Prints the status of a running job (one JSON object) as the coordinator sees it.", 10,
                    a, env, [](const client_flags& f) {
                      auto r = ask<wire::status_reply>(f, wire::status_request{});
                      if (!r.is_ok()) return print_error("status", r.error().message());
                      std::printf("%s\n", r->json.c_str());
                      return 0;
                    });
}

int run_snapshot(const args& a, const config::environment& env) {
  return run_client(
      "snapshot",
      "Asks a running coordinator to take a cluster snapshot now (shard checkpoints, the dense state and the "
      "readers' committed positions under one id) and waits until it is complete. The coordinator needs "
      "--snapshot-dir. Prints a summary and one JSON line.",
      600, a, env, [](const client_flags& f) {
        auto r = ask_across_restarts<wire::snapshot_reply>(f, "snapshot", wire::snapshot_now{});
        if (!r.is_ok()) return print_error("snapshot", r.error().message());
        std::printf("shadowsync snapshot: snapshot %llu complete in %.2fs: %llu embedding rows (%.1f MB on the "
                    "shards) at %s\n",
                    static_cast<unsigned long long>(r->snapshot_id), r->seconds,
                    static_cast<unsigned long long>(r->rows), static_cast<double>(r->bytes) / 1e6, r->path.c_str());
        json_object j;
        j.add("command", "snapshot").add("ok", true).add("snapshot", r->snapshot_id).add("path", r->path);
        j.add("rows", r->rows).add("bytes", r->bytes).add("seconds", r->seconds);
        std::printf("%s\n", j.str().c_str());
        return 0;
      });
}

// export's own flag.
void add_export_flags(config::option_set& opts, std::string& out) {
  opts.add("out", &out, "Path of the model file, on the coordinator's machine (absolute, or relative to its "
                        "working directory).");
}

int run_export(const args& a, const config::environment& env) {
  std::string out;
  return run_client(
      "export",
      "Asks a running coordinator to write the current model (the central dense state and every "
      "shard's embedding rows) to a model file on the coordinator's file system, for `shadowsync "
      "predict`. Training goes on meanwhile. (For the final model, give the coordinator or "
      "`shadowsync local` --export.) Prints a summary and one JSON line.",
      600, a, env,
      [&out](config::option_set& opts) { add_export_flags(opts, out); },
      [&out](const client_flags& f) {
        if (out.empty()) return refusal{"export", ""}("--out is required");
        auto r = ask_across_restarts<wire::export_reply>(f, "export", wire::export_request{out});
        if (!r.is_ok()) return print_error("export", r.error().message());
        std::printf("shadowsync export: the model is at %s: %llu embedding rows, %.1f MB, in %.2fs\n", r->path.c_str(),
                    static_cast<unsigned long long>(r->rows), static_cast<double>(r->bytes) / 1e6, r->seconds);
        json_object j;
        j.add("command", "export").add("ok", true).add("path", r->path);
        j.add("rows", r->rows).add("bytes", r->bytes).add("seconds", r->seconds);
        std::printf("%s\n", j.str().c_str());
        return 0;
      });
}

// stop's own flag.
void add_stop_flags(config::option_set& opts, std::string& reason) {
  opts.add("reason", &reason, "Why, for the coordinator's log and the job's result.");
}

int run_stop(const args& a, const config::environment& env) {
  std::string reason = "shadowsync stop";
  return run_client(
      "stop",
      "Ends a running job. A following job (--follow) ends as at the end of its data: its readers hand out no new "
      "batches, those handed out are trained and committed, and the job finishes as usual (last snapshot, test "
      "scoring, --export, its result: ok). A job over fixed files is stopped as failed (\"stopped: REASON\"). "
      "Prints one JSON line once the coordinator has taken the request.",
      30, a, env, [&reason](config::option_set& opts) { add_stop_flags(opts, reason); },
      [&reason](const client_flags& f) {
        auto r = ask<wire::ack>(f, wire::stop_request{reason});
        if (!r.is_ok()) return print_error("stop", r.error().message());
        std::printf("shadowsync stop: the coordinator ends the job (%s)\n", reason.c_str());
        json_object j;
        j.add("command", "stop").add("ok", true).add("reason", reason);
        std::printf("%s\n", j.str().c_str());
        return 0;
      });
}

// reshard's own flag.
void add_reshard_flags(config::option_set& opts, int& shards) {
  opts.add("shards", &shards, "The job's new shard count.").range(1, 4096);
}

int run_reshard(const args& a, const config::environment& env) {
  int shards = 0;
  return run_client(
      "reshard",
      "Changes a running job's shard count. Then start the new shards, with the next indexes (shard --index K), "
      "within the job's --peer-wait; shards beyond a smaller count leave once their rows moved. The coordinator holds the input until what was handed out is trained, moves the rows to their "
      "new owners, switches every member to the new count, releases the input, then takes a snapshot of the new "
      "shape and drops the rows that moved. Prints one JSON line once the coordinator accepted or refused the "
      "change; its progress is in `shadowsync status` (reshape).",
      30, a, env, [&shards](config::option_set& opts) { add_reshard_flags(opts, shards); },
      [&shards](const client_flags& f) {
        if (shards < 1) return print_error("reshard", "--shards is required (the job's new shard count)");
        auto r = ask<wire::reshard_reply>(f, wire::reshard_request{static_cast<std::uint32_t>(shards)});
        if (!r.is_ok()) return print_error("reshard", r.error().message());
        if (!r->accepted) {
          std::fprintf(stderr, "shadowsync reshard: refused: %s\n", r->message.c_str());
        } else {
          std::printf("shadowsync reshard: %u -> %u shards: %s\n", r->from, r->to, r->message.c_str());
        }
        json_object j;
        j.add("command", "reshard").add("ok", r->accepted).add("from", static_cast<std::uint64_t>(r->from));
        j.add("to", static_cast<std::uint64_t>(r->to)).add("message", r->message);
        std::printf("%s\n", j.str().c_str());
        return r->accepted ? 0 : 1;
      });
}

std::vector<std::string> reshard_option_names() {
  struct reshard_flags {
    client_flags client;
    int shards = 0;
  };
  return names_of_options<reshard_flags>([](config::option_set& opts, reshard_flags& f) {
    add_client_flags(opts, f.client, 0);
    add_reshard_flags(opts, f.shards);
  });
}

std::vector<std::string> status_option_names() {
  return names_of_options<client_flags>([](config::option_set& opts, client_flags& f) { add_client_flags(opts, f, 0); });
}

std::vector<std::string> snapshot_option_names() { return status_option_names(); }

std::vector<std::string> stop_option_names() {
  struct stop_flags {
    client_flags client;
    std::string reason;
  };
  return names_of_options<stop_flags>([](config::option_set& opts, stop_flags& f) {
    add_client_flags(opts, f.client, 0);
    add_stop_flags(opts, f.reason);
  });
}

std::vector<std::string> export_option_names() {
  struct export_flags {
    client_flags client;
    std::string out;
  };
  return names_of_options<export_flags>([](config::option_set& opts, export_flags& f) {
    add_client_flags(opts, f.client, 0);
    add_export_flags(opts, f.out);
  });
}

}  // namespace ss::cli
