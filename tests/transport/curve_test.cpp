// zmq_transport with CURVE over tcp loopback: an authorized client and the server exchange frames
// both ways; an unknown client key, a plain client and a client that pinned another server key
// are refused (no frame delivered, counted, logged); key files parse with precise errors; the
// secret key files' ownership and mode rule (own files 0600, root-owned files readable by the
// process's group: Kubernetes Secret volumes with fsGroup); keys written by write_key_pair read back. Catch2 assertions run on the test thread only.
#include <catch2/catch.hpp>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ss/transport/curve.hpp"
#include "ss/transport/zmq_transport.hpp"
#include "zmq_test_support.hpp"

using namespace ss::test;  // text frames, eventually, listening and connected

namespace {

using namespace std::chrono_literals;
using ss::actors::peer_address;
using ss::transport::curve_key_pair;
using ss::transport::make_zmq_context;
using ss::transport::security_mode;
using ss::transport::transport_security;
using ss::transport::zmq_transport;
using ss::transport::zmq_transport_options;
using ss::wire::frame;

struct received {
  std::mutex mu;
  std::vector<std::pair<peer_address, std::string>> frames;
  std::size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return frames.size();
  }
  ss::actors::transport::frame_handler handler() {
    return [this](const peer_address& from, frame f) {
      std::lock_guard<std::mutex> lock(mu);
      frames.emplace_back(from, text(f));
    };
  }
};

struct log_lines {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& l) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(l);
    };
  }
  bool contains(const std::string& part) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& l : lines)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
};

curve_key_pair fresh() {
  auto k = ss::transport::generate_curve_key_pair();
  REQUIRE(k.is_ok());
  return *k;
}

struct cluster_keys {
  curve_key_pair server = fresh();
  curve_key_pair member = fresh();
  transport_security for_member(const curve_key_pair& client) const {
    transport_security s;
    s.mode = security_mode::curve;
    s.server = server;
    s.client = client;
    s.authorized_clients = {member.public_key};
    return s;
  }
};

zmq_transport_options options(const std::string& name, transport_security s, log_lines* log = nullptr) {
  zmq_transport_options o;
  o.name = name;
  o.security = std::move(s);
  if (log != nullptr) o.warn = log->sink();
  return o;
}

std::filesystem::path temp_dir() {
  char tmpl[] = "/tmp/ss-curve-test.XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  return d;
}

void write_text(const std::filesystem::path& p, const std::string& s, mode_t mode) {
  std::ofstream(p) << s;
  ::chmod(p.c_str(), mode);
}

// A CURVE server that admits keys.member, logs into `log`, records what it receives in
// `at_server` (before the server: its handler uses it until stop), and listens on tcp loopback
// at `ep`.
struct curve_server {
  cluster_keys keys;
  std::shared_ptr<zmq::context_t> ctx = make_zmq_context();
  log_lines log;
  received at_server;
  zmq_transport server{ctx, options("server", keys.for_member(keys.member), &log)};
  std::string ep;

  curve_server() {
    server.on_frame(at_server.handler());
    ep = listening(server);
  }
};

}  // namespace

TEST_CASE("curve is available in this libzmq") { REQUIRE(ss::transport::curve_available()); }

TEST_CASE("an authorized curve client and the curve server exchange frames both ways") {
  cluster_keys keys;
  auto ctx = make_zmq_context();
  log_lines log;
  zmq_transport server(ctx, options("server", keys.for_member(keys.member), &log));
  zmq_transport client(ctx, options("client", keys.for_member(keys.member)));
  received at_server, at_client;
  server.on_frame([&](const peer_address& from, frame f) {
    at_server.handler()(from, f);
    (void)server.send(from, text_frame("pong:" + text(f)));
  });
  client.on_frame(at_client.handler());
  const std::uint32_t link = connected(client, listening(server));
  for (int i = 0; i < 10; ++i) REQUIRE(client.send(peer_address{link, {}}, text_frame("ping" + std::to_string(i))).is_ok());
  REQUIRE(eventually([&] { return at_client.size() == 10; }));
  CHECK(at_server.size() == 10);
  std::lock_guard<std::mutex> lock(at_client.mu);
  CHECK(at_client.frames.front().second == "pong:ping0");
  CHECK(at_client.frames.back().second == "pong:ping9");
  CHECK(server.counters().auth_refused == 0);
  CHECK(server.counters().handshakes_failed == 0);
  CHECK_FALSE(log.contains("plain"));
}

TEST_CASE("the server learns each frame's sender from the handshake: the key's role and name, the address") {
  cluster_keys keys;
  const curve_key_pair ops = fresh();
  transport_security server_side = keys.for_member(keys.member);
  server_side.authorized_clients = {ss::transport::authorized_client(keys.member.public_key, "reader-0"),
                                    ss::transport::authorized_client(ops.public_key, "ops", ss::actors::peer_role::admin)};
  auto ctx = make_zmq_context();
  zmq_transport server(ctx, options("server", server_side));
  zmq_transport reader(ctx, options("reader", keys.for_member(keys.member)));
  zmq_transport admin(ctx, options("admin", keys.for_member(ops)));
  received at_server;
  server.on_frame(at_server.handler());
  const std::string ep = listening(server);
  const std::uint32_t r = connected(reader, ep), a = connected(admin, ep);
  REQUIRE(reader.send(peer_address{r, {}}, text_frame("from reader")).is_ok());
  REQUIRE(eventually([&] { return at_server.size() == 1; }));
  REQUIRE(admin.send(peer_address{a, {}}, text_frame("from admin")).is_ok());
  REQUIRE(eventually([&] { return at_server.size() == 2; }));
  std::lock_guard<std::mutex> lock(at_server.mu);
  const auto& from_reader = at_server.frames[0].first.sender;
  const auto& from_admin = at_server.frames[1].first.sender;
  CHECK(from_reader.role == ss::actors::peer_role::member);
  CHECK(from_reader.name == "reader-0");
  CHECK(from_reader.address == "127.0.0.1");
  CHECK(from_reader.local);
  CHECK(from_admin.role == ss::actors::peer_role::admin);
  CHECK(from_admin.name == "ops");
  CHECK(from_admin.describe() == "admin key 'ops' at 127.0.0.1");
}

TEST_CASE("a plain sender is unauthenticated, with its address; identity_of reads user ids and addresses") {
  auto ctx = make_zmq_context();
  zmq_transport server(ctx, options("server", {}));
  zmq_transport client(ctx, options("client", {}));
  received at_server;
  server.on_frame(at_server.handler());
  const std::uint32_t link = connected(client, listening(server));
  REQUIRE(client.send(peer_address{link, {}}, text_frame("hello")).is_ok());
  REQUIRE(eventually([&] { return at_server.size() == 1; }));
  {
    std::lock_guard<std::mutex> lock(at_server.mu);
    const auto& sender = at_server.frames[0].first.sender;
    CHECK(sender.role == ss::actors::peer_role::unauthenticated);
    CHECK(sender.address == "127.0.0.1");
    CHECK(sender.local);
  }
  using ss::transport::identity_of;
  CHECK_FALSE(identity_of("", "10.1.2.3").local);
  CHECK(identity_of("", "::1").local);
  CHECK(identity_of("", "::ffff:127.0.0.1").local);
  CHECK(identity_of("", "").local);  // inproc, ipc
  CHECK(identity_of("coordinator:coordinator", "10.0.0.2").role == ss::actors::peer_role::coordinator);
  CHECK(identity_of("root:eve", "10.0.0.2").role == ss::actors::peer_role::unauthenticated);
}

TEST_CASE_METHOD(curve_server, "a curve client with an unknown key is refused and logged and counted") {
  const curve_key_pair stranger = fresh();
  // Its own context: a separate process as far as ZAP is concerned.
  auto other = make_zmq_context();
  zmq_transport client(other, options("stranger", keys.for_member(stranger)));
  const std::uint32_t link = connected(client, ep);
  REQUIRE(client.send(peer_address{link, {}}, text_frame("let me in")).is_ok());
  REQUIRE(eventually([&] { return server.counters().auth_refused >= 1; }));
  CHECK(eventually([&] { return log.contains("refused a CURVE client with unknown key " + stranger.public_key +
                                              " from 127.0.0.1"); }));
  std::this_thread::sleep_for(300ms);  // several redials
  CHECK(at_server.size() == 0);
  CHECK(server.stats().frames_in == 0);
  // Redials are counted, but logged once a minute at most.
  std::lock_guard<std::mutex> lock(log.mu);
  CHECK(log.lines.size() == 1);
}

TEST_CASE_METHOD(curve_server, "a plain client against a curve server is refused") {
  zmq_transport client(ctx, options("plain", {}));
  const std::uint32_t link = connected(client, ep);
  REQUIRE(client.send(peer_address{link, {}}, text_frame("hello")).is_ok());
  REQUIRE(eventually([&] { return server.counters().handshakes_failed >= 1; }));
  // Whichever side notices the mechanism mismatch first hangs up: "does not speak CURVE" or "hung up".
  CHECK(eventually([&] { return log.contains("refused a connection on " + ep); }));
  std::this_thread::sleep_for(300ms);
  CHECK(at_server.size() == 0);
}

TEST_CASE("a client that pinned another server key cannot connect") {
  cluster_keys keys;
  auto ctx = make_zmq_context();
  log_lines log;
  zmq_transport server(ctx, options("server", keys.for_member(keys.member), &log));
  received at_server, at_client;
  server.on_frame([&](const peer_address& from, frame f) {
    at_server.handler()(from, f);
    (void)server.send(from, text_frame("answer"));
  });
  const std::string ep = listening(server);
  transport_security wrong = keys.for_member(keys.member);
  wrong.server = fresh();  // an impostor's key, as the client sees it
  wrong.server.secret_key.clear();
  zmq_transport client(ctx, options("client", wrong));
  client.on_frame(at_client.handler());
  const std::uint32_t link = connected(client, ep);
  REQUIRE(client.send(peer_address{link, {}}, text_frame("hello")).is_ok());
  REQUIRE(eventually([&] { return server.counters().handshakes_failed >= 1; }));
  CHECK(eventually([&] { return log.contains("does not decrypt"); }));
  std::this_thread::sleep_for(300ms);
  CHECK(at_server.size() == 0);
  CHECK(at_client.size() == 0);
}

TEST_CASE("plain mode warns once when bound beyond loopback and not on loopback") {
  auto ctx = make_zmq_context();
  log_lines log;
  zmq_transport t(ctx, options("svc", {}, &log));
  REQUIRE(t.listen("tcp://127.0.0.1:0").is_ok());
  CHECK_FALSE(log.contains("plain"));
  REQUIRE(t.listen("tcp://0.0.0.0:0").is_ok());
  REQUIRE(t.listen("tcp://0.0.0.0:0").is_ok());
  CHECK(log.contains("shadowsync: plain (unauthenticated, unencrypted) transport on tcp://0.0.0.0:0"));
  std::lock_guard<std::mutex> lock(log.mu);
  CHECK(log.lines.size() == 1);
  CHECK(ss::transport::is_loopback_endpoint("tcp://127.0.0.1:5555"));
  CHECK(ss::transport::is_loopback_endpoint("tcp://[::1]:5555"));
  CHECK(ss::transport::is_loopback_endpoint("inproc://shard-0"));
  CHECK(ss::transport::is_loopback_endpoint("ipc:///tmp/x"));
  CHECK_FALSE(ss::transport::is_loopback_endpoint("tcp://0.0.0.0:5555"));
  CHECK_FALSE(ss::transport::is_loopback_endpoint("tcp://10.0.0.7:5555"));
  CHECK_FALSE(ss::transport::is_loopback_endpoint("tcp://*:5555"));
}

TEST_CASE("curve settings are checked before a transport starts") {
  cluster_keys keys;
  auto ctx = make_zmq_context();
  transport_security bad = keys.for_member(keys.member);
  bad.client.public_key = keys.server.public_key;  // not the client's secret's half
  CHECK_THROWS_WITH(zmq_transport(ctx, options("x", bad)), Catch::Contains("client key pair: the public key does not belong"));
  transport_security no_secret = keys.for_member(keys.member);
  no_secret.server.secret_key.clear();
  zmq_transport t(ctx, options("dialer", no_secret));
  auto ep = t.listen("tcp://127.0.0.1:0");
  REQUIRE_FALSE(ep.is_ok());
  CHECK_THAT(ep.error().message(), Catch::Contains("no server secret key"));
}

TEST_CASE("key files parse with precise errors") {
  const auto dir = temp_dir();
  const curve_key_pair k = fresh();
  const auto good = dir / "good.key";
  write_text(good, "# comment\npublic-key = " + k.public_key + "\nsecret-key = \"" + k.secret_key + "\"\n", 0600);
  auto read = ss::transport::read_key_file(good.string(), true);
  REQUIRE(read.is_ok());
  CHECK(read->public_key == k.public_key);
  CHECK(read->secret_key == k.secret_key);

  write_text(dir / "short.key", "public-key = " + k.public_key.substr(1) + "\n", 0600);
  auto s = ss::transport::read_key_file((dir / "short.key").string(), false);
  REQUIRE_FALSE(s.is_ok());
  CHECK_THAT(s.error().message(), Catch::Contains("short.key:1: public-key: 39 characters, a Z85 CURVE key has 40"));

  std::string bad = k.public_key;
  bad[4] = '~';
  write_text(dir / "bad.pub", "\n\npublic-key = " + bad + "\n", 0644);
  auto b = ss::transport::read_key_file((dir / "bad.pub").string(), false);
  REQUIRE_FALSE(b.is_ok());
  CHECK_THAT(b.error().message(), Catch::Contains("bad.pub:3: public-key: character '~' at position 5 is not in the Z85 alphabet"));

  write_text(dir / "open.key", "public-key = " + k.public_key + "\nsecret-key = " + k.secret_key + "\n", 0644);
  auto o = ss::transport::read_key_file((dir / "open.key").string(), true);
  REQUIRE_FALSE(o.is_ok());
  CHECK_THAT(o.error().message(), Catch::Contains("must not be accessible by group or others (mode 0644)"));
  CHECK_THAT(o.error().message(), Catch::Contains("chmod 600"));

  write_text(dir / "only.pub", "public-key = " + k.public_key + "\n", 0644);
  auto p = ss::transport::read_key_file((dir / "only.pub").string(), true);
  REQUIRE_FALSE(p.is_ok());
  CHECK_THAT(p.error().message(), Catch::Contains("no 'secret-key = <Z85>' line"));

  const curve_key_pair other = fresh();
  write_text(dir / "mixed.key", "public-key = " + other.public_key + "\nsecret-key = " + k.secret_key + "\n", 0600);
  auto m = ss::transport::read_key_file((dir / "mixed.key").string(), true);
  REQUIRE_FALSE(m.is_ok());
  CHECK_THAT(m.error().message(), Catch::Contains("the public key does not belong to the secret key"));

  auto missing = ss::transport::read_key_file((dir / "nope.key").string(), true);
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.error().code() == ss::errc::not_found);

  write_text(dir / "authorized_keys",
             "# members\n" + k.public_key + "  # shard-0\n\n" + other.public_key + " name=ops role=admin  # on call\n",
             0644);
  auto keys = ss::transport::read_authorized_keys((dir / "authorized_keys").string());
  REQUIRE(keys.is_ok());
  using ss::actors::peer_role;
  using ss::transport::authorized_client;
  CHECK(*keys == std::vector<authorized_client>{authorized_client(k.public_key, k.public_key.substr(0, 8)),
                                                authorized_client(other.public_key, "ops", peer_role::admin)});
  write_text(dir / "bad_role", k.public_key + " name=x role=root\n", 0644);
  auto br = ss::transport::read_authorized_keys((dir / "bad_role").string());
  REQUIRE_FALSE(br.is_ok());
  CHECK_THAT(br.error().message(), Catch::Contains("bad_role:1: unknown role 'root' (member, coordinator or admin)"));
  write_text(dir / "bad_field", k.public_key + " shard-0\n", 0644);
  auto bf = ss::transport::read_authorized_keys((dir / "bad_field").string());
  REQUIRE_FALSE(bf.is_ok());
  CHECK_THAT(bf.error().message(), Catch::Contains("bad_field:1: unexpected 'shard-0'"));
  write_text(dir / "bad_keys", k.public_key + "\nnot-a-key\n", 0644);
  auto bk = ss::transport::read_authorized_keys((dir / "bad_keys").string());
  REQUIRE_FALSE(bk.is_ok());
  CHECK_THAT(bk.error().message(), Catch::Contains("bad_keys:2: 9 characters"));
  write_text(dir / "empty_keys", "# nobody\n", 0644);
  CHECK_FALSE(ss::transport::read_authorized_keys((dir / "empty_keys").string()).is_ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("written key pairs read back and load as curve security") {
  const auto dir = temp_dir();
  const curve_key_pair server = fresh(), member = fresh();
  REQUIRE(ss::transport::write_key_pair(dir.string(), "server", server).is_ok());
  REQUIRE(ss::transport::write_key_pair(dir.string(), "shard-0", member).is_ok());
  struct stat st{};
  REQUIRE(::stat((dir / "shard-0.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat((dir / "shard-0.pub").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  auto again = ss::transport::write_key_pair(dir.string(), "shard-0", member);
  REQUIRE_FALSE(again.is_ok());
  CHECK_THAT(again.message(), Catch::Contains("never overwritten"));
  auto pub = ss::transport::read_key_file((dir / "shard-0.pub").string(), false);
  REQUIRE(pub.is_ok());
  CHECK(pub->public_key == member.public_key);
  CHECK(pub->secret_key.empty());
  write_text(dir / "authorized_keys", member.public_key + "\n", 0644);
  auto sec = ss::transport::load_curve_security((dir / "server.key").string(), (dir / "shard-0.key").string(),
                                                (dir / "authorized_keys").string(), true);
  REQUIRE(sec.is_ok());
  CHECK(sec->mode == security_mode::curve);
  CHECK(sec->server.secret_key == server.secret_key);
  CHECK(sec->client.public_key == member.public_key);
  REQUIRE(sec->authorized_clients.size() == 1);
  CHECK(sec->authorized_clients[0].public_key == member.public_key);
  // A client command needs only the server's public key.
  auto cli = ss::transport::load_curve_security((dir / "server.pub").string(), (dir / "shard-0.key").string(), "", false);
  REQUIRE(cli.is_ok());
  auto partial = ss::transport::load_curve_security((dir / "server.key").string(), "", "", true);
  REQUIRE_FALSE(partial.is_ok());
  CHECK_THAT(partial.error().message(), Catch::Contains("give all three of --curve-server-key"));
  auto plain = ss::transport::load_curve_security("", "", "", true);
  REQUIRE(plain.is_ok());
  CHECK(plain->mode == security_mode::plain);
  std::filesystem::remove_all(dir);
}

TEST_CASE("secret key file ownership and mode: own files 0600 and root-owned files readable by our group") {
  using ss::transport::check_secret_key_file_access;
  const uid_t me = 10001;
  const gid_t my_gid = 10001;
  const std::vector<gid_t> groups{10001, 2000};
  auto check = [&](mode_t mode, uid_t owner, gid_t group) {
    return check_secret_key_file_access("k/server.key", mode, owner, group, me, my_gid, groups);
  };
  // A file this process's user owns: nothing for group or others, like ssh.
  CHECK(check(0100600, me, my_gid).is_ok());
  CHECK(check(0100400, me, my_gid).is_ok());
  auto own_group = check(0100640, me, my_gid);
  REQUIRE_FALSE(own_group.is_ok());
  CHECK(own_group.code() == ss::errc::invalid_argument);
  CHECK_THAT(own_group.message(), Catch::Contains("k/server.key: a secret key file must not be accessible by group or "
                                                  "others (mode 0640); run chmod 600 k/server.key"));
  CHECK_FALSE(check(0100604, me, my_gid).is_ok());
  CHECK_FALSE(check(0100660, me, my_gid).is_ok());

  // Owned by root and readable by this process's group: a Kubernetes Secret volume with fsGroup
  // (defaultMode 0400 or 0440 both end up 0440 root:<fsGroup>).
  CHECK(check(0100440, 0, my_gid).is_ok());
  CHECK(check(0100640, 0, my_gid).is_ok());
  CHECK(check(0100440, 0, 2000).is_ok());  // a supplementary group
  CHECK(check(0100400, 0, 0).is_ok());     // nothing for the group: no group to check
  CHECK(check(0100600, 0, 4242).is_ok());
  auto foreign = check(0100440, 0, 4242);
  REQUIRE_FALSE(foreign.is_ok());
  CHECK_THAT(foreign.message(), Catch::Contains("k/server.key: a group-readable secret key file owned by root must "
                                                "belong to one of this process's groups (10001,2000), not to gid 4242 "
                                                "(mode 0440); run chgrp 10001 k/server.key"));
  auto others = check(0100444, 0, my_gid);
  REQUIRE_FALSE(others.is_ok());
  CHECK_THAT(others.message(), Catch::Contains("owned by root may be readable by its group at most"));
  CHECK_THAT(others.message(), Catch::Contains("(mode 0444, at most 0640); run chmod 640 k/server.key"));
  CHECK_FALSE(check(0100460, 0, my_gid).is_ok());  // group-writable
  CHECK_FALSE(check(0100450, 0, my_gid).is_ok());  // group-executable
  CHECK_FALSE(check(0100404, 0, my_gid).is_ok());  // others may read

  // Owned by another user: refused whatever the mode.
  auto stranger = check(0100600, 1000, 1000);
  REQUIRE_FALSE(stranger.is_ok());
  CHECK_THAT(stranger.message(), Catch::Contains("k/server.key: a secret key file must be owned by this process's "
                                                 "user (uid 10001) or by root, not by uid 1000; run chown 10001"));
  CHECK_FALSE(check(0100440, 1000, my_gid).is_ok());

  // A process running as root owns root's files: the strict rule applies, not the group one.
  auto as_root = check_secret_key_file_access("k/server.key", 0100440, 0, 0, 0, 0, {0});
  REQUIRE_FALSE(as_root.is_ok());
  CHECK_THAT(as_root.message(), Catch::Contains("must not be accessible by group or others (mode 0440)"));
}

TEST_CASE("a non-root process reads a root-owned group-readable key file as a Kubernetes Secret volume has it") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to make root-owned files and switch to uid 10001 (the fsGroup case is covered by the "
         "rule test above)");
    return;
  }
  const auto dir = temp_dir();
  ::chmod(dir.c_str(), 0711);  // the unprivileged child must reach the files
  const curve_key_pair k = fresh();
  const std::string body = "public-key = " + k.public_key + "\nsecret-key = " + k.secret_key + "\n";
  // What the kubelet makes of a Secret with defaultMode 0400 and fsGroup 10001: root:10001, 0440.
  write_text(dir / "fsgroup.key", body, 0440);
  REQUIRE(::chown((dir / "fsgroup.key").c_str(), 0, 10001) == 0);
  write_text(dir / "foreign.key", body, 0440);
  REQUIRE(::chown((dir / "foreign.key").c_str(), 0, 10002) == 0);
  write_text(dir / "other.key", body, 0444);
  REQUIRE(::chown((dir / "other.key").c_str(), 0, 10001) == 0);
  // A child switches to uid/gid 10001 (supplementary group 10001 only) and reports, by exit status,
  // which files load: bit 0 fsgroup.key loaded, bit 1 foreign.key refused, bit 2 other.key refused.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const gid_t g = 10001;
    if (::setgroups(1, &g) != 0 || ::setresgid(g, g, g) != 0 || ::setresuid(10001, 10001, 10001) != 0) ::_exit(100);
    int bits = 0;
    if (ss::transport::read_key_file((dir / "fsgroup.key").string(), true).is_ok()) bits |= 1;
    auto foreign = ss::transport::read_key_file((dir / "foreign.key").string(), true);
    // 10001 cannot even open it (0440, another group): refused before the mode rule.
    if (!foreign.is_ok()) bits |= 2;
    auto other = ss::transport::read_key_file((dir / "other.key").string(), true);
    if (!other.is_ok() && other.error().message().find("at most 0640") != std::string::npos) bits |= 4;
    ::_exit(bits);
  }
  int wstatus = 0;
  REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
  REQUIRE(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) != 100);
  CHECK(WEXITSTATUS(wstatus) == 7);
  std::filesystem::remove_all(dir);
}
