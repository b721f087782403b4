// Client commands: one request to a running coordinator, one answer.
//   shadowsync status   --coordinator EP          the job's status JSON
//   shadowsync snapshot --coordinator EP          take a cluster snapshot now
#include <chrono>
#include <cstdio>
#include <future>
#include <mutex>
#include <string>

#include "client.hpp"
#include "command_line.hpp"
#include "commands.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/json.hpp"
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

result<wire::body> call_once(const std::string& endpoint, wire::body message, double timeout_seconds,
                             const transport::transport_security& security) {
  auto ctx = transport::make_zmq_context();
  transport::zmq_transport_options o;
  o.name = "client";
  o.security = security;
  transport::zmq_transport t(ctx, o);
  std::promise<result<wire::body>> answer;
  auto future = answer.get_future();
  std::once_flag once;
  t.on_frame([&](const actors::peer_address&, wire::frame f) {
    auto env = wire::decode(*f);
    std::call_once(once, [&] {
      if (!env.is_ok()) answer.set_value(env.error().with_context("the coordinator's answer"));
      else answer.set_value(std::move(env->message));
    });
  });
  auto link = t.connect(endpoint);
  if (!link.is_ok()) return link.error();
  wire::envelope e;
  e.request_id = 1;
  e.message = std::move(message);
  if (auto st = t.send(actors::peer_address{*link, {}}, wire::encode(e)); !st.is_ok()) return st;
  if (future.wait_for(std::chrono::duration<double>(timeout_seconds)) != std::future_status::ready) {
    const bool refused = t.counters().links_refused > 0;
    t.stop();
    if (refused)
      return status(errc::unavailable, endpoint + " refused this client's connection at its handshake: it is at its "
                                                  "--max-connections, or it does not authorize this client's key");
    return status(errc::timeout, "no answer from " + endpoint + " within " + std::to_string(timeout_seconds) + "s");
  }
  auto out = future.get();
  t.stop();
  return out;
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
        auto r = ask<wire::snapshot_reply>(f, wire::snapshot_now{});
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

int run_export(const args& a, const config::environment& env) {
  std::string out;
  return run_client(
      "export",
      "Asks a running coordinator to write the current model (the central dense state and every "
      "shard's embedding rows) to a model file on the coordinator's file system, for `shadowsync "
      "predict`. Training goes on meanwhile. (For the final model, give the coordinator or "
      "`shadowsync local` --export.) Prints a summary and one JSON line.",
      600, a, env,
      [&out](config::option_set& opts) {
        opts.add("out", &out, "Path of the model file, on the coordinator's machine (absolute, or relative to its "
                              "working directory).");
      },
      [&out](const client_flags& f) {
        if (out.empty()) return refusal{"export", ""}("--out is required");
        auto r = ask<wire::export_reply>(f, wire::export_request{out});
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

}  // namespace ss::cli
