// A whole job on the deterministic scheduler: coordinator, shards, readers and trainers trained to
// the end, without sync, with shadow EASGD, with foreground model averaging, and the closing round.
#include "actor_helpers.hpp"

using namespace ss;
using namespace ss::actors;
using namespace ss::test;

namespace {

struct job_outcome {
  job::job_report result;
  std::string result_json;  // as printed
  std::uint64_t acked = 0;
  std::vector<std::uint64_t> shard_rows;
  std::string sync_status;  // sync server 0's status JSON at the end
  std::vector<std::vector<std::uint64_t>> slice_rounds;  // per trainer, per slice
};

// stalled_slice: a second sync server (slice 1) registers but never serves, as a paused one; the
// job runs only until every trainer completed 2 rounds of slice 0 (of the few a job this short has).
struct job_setup {
  std::string sync_name;
  int trainers = 1;
  bool stalled_slice = false;
  std::string quantize = "none";
};

// A whole job, every service composed by hand over the in-memory network: a coordinator (with
// sync server 0), 2 shards, 1 reader and `trainers` trainers, stepped to the end.
job_outcome run_job(const job_setup& js) {
  const std::string& sync_name = js.sync_name;
  const int trainers = js.trainers;
  actor_fixture f;
  ss::test::temp_dir dir;
  data::generator_options g;
  g.rows = 2000;
  REQUIRE(data::generate_train_test(g, 300, dir.str("train.tsv"), dir.str("test.tsv")).is_ok());
  job::job_options job;
  job.train = {dir.str("train.tsv")};
  job.test = {dir.str("test.tsv")};
  job.shards = 2;
  job.readers = 1;
  job.min_trainers = trainers;
  job.batch_size = 64;
  job.heartbeat_interval = 0.1;
  job.request_timeout = 1.0;
  job.progress_interval = 0;
  job.sync = sync_name;
  job.sync_servers = js.stalled_slice ? 2 : 1;
  job.sync_quantize = js.quantize;
  job.sync_every = 3;
  job.sync_interval = 0.05;
  job.model.embedding_dim = 4;
  job.model.bottom_mlp = "8-4";
  job.model.top_mlp = "8-1";
  REQUIRE(job::resolve_feature_counts(job).is_ok());
  auto setup = job::resolve_model(job.model, 13, 26);
  REQUIRE(setup.is_ok());

  job_outcome out;
  node coord(f, "coordinator", "mem://coordinator");
  coordinator_options co;
  co.job = job;
  co.detached_evaluator = false;
  co.endpoint = "mem://coordinator";
  co.on_result = [&out](const job::job_report& r, const std::string&) {
    out.result = r;
    out.result_json = r.to_json();
  };
  const auto dense_size = model::dense_layout(setup->dlrm).size();
  auto sync_opts = sync_options(sync_name.c_str(), dense_size);
  std::tie(sync_opts.offset, sync_opts.length) = slice_bounds(dense_size, 0, static_cast<std::uint32_t>(job.sync_servers));
  if (sync_name == "none") sync_opts.spec = sync::sync_spec{};
  sync_opts.quantize = js.quantize == "int8";
  co.local_sync = f.own(spawn_sync_server(f.sys, coord.gateway, sync_opts));
  f.own(spawn_coordinator(f.sys, coord.gateway, co));

  auto member = [&](node& n, wire::role role, int index, const std::string& endpoint,
                    std::function<wire::member_progress()> progress, std::uint64_t incarnation = 1) {
    member_options mo;
    mo.identity = wire::register_request{role, endpoint, index, endpoint, incarnation};
    mo.coordinator = "mem://coordinator";
    mo.heartbeat_interval = std::chrono::milliseconds(100);
    mo.request_timeout = std::chrono::seconds(1);
    mo.progress = std::move(progress);
    return f.own(spawn_member_agent(f.sys, n.gateway, mo));
  };

  std::vector<std::unique_ptr<node>> nodes;
  std::vector<std::shared_ptr<embedding::shard_store>> stores;
  for (int i = 0; i < 2; ++i) {
    const std::string ep = "mem://shard-" + std::to_string(i);
    nodes.push_back(std::make_unique<node>(f, ep, ep));
    embedding::shard_store_options so;
    so.dim = 4;
    so.optimizer = setup->embeddings.optimizer;
    stores.push_back(std::make_shared<embedding::shard_store>(so));
    shard_options sh;
    sh.index = static_cast<std::uint32_t>(i);
    sh.shards = 2;
    f.own(spawn_shard(f.sys, nodes.back()->gateway, stores.back(), sh, std::make_shared<shard_counters>()).pool);
    member(*nodes.back(), wire::role::shard, i, ep, [] { return wire::member_progress{}; });
  }
  nodes.push_back(std::make_unique<node>(f, "mem://reader-0", "mem://reader-0"));
  auto rc = std::make_shared<reader_counters>();
  data::epoch_reader_options ro;
  ro.input.schema = data::input_schema::criteo();
  ro.input.paths = job.train;
  ro.input.batch_size = 64;
  auto br = data::epoch_reader::open(ro);
  REQUIRE(br.is_ok());
  f.own(spawn_reader(f.sys, nodes.back()->gateway, std::make_unique<data::epoch_reader>(std::move(*br)), {}, rc));
  member(*nodes.back(), wire::role::reader, 0, "mem://reader-0", [rc] {
    wire::member_progress p;
    p.examples = rc->examples_sent.load();
    p.finished = rc->finished.load();
    return p;
  });

  if (js.stalled_slice) {  // its gateway is never opened: every request is answered "starting"
    nodes.push_back(std::make_unique<node>(f, "mem://sync-1", "mem://sync-1"));
    member(*nodes.back(), wire::role::sync, 1, "mem://sync-1", [] { return wire::member_progress{}; });
  }
  std::vector<std::shared_ptr<trainer_progress>> progresses;
  for (int t = 0; t < trainers; ++t) {
    const std::string ep = "mem://trainer-" + std::to_string(t);
    nodes.push_back(std::make_unique<node>(f, ep, ep));
    auto progress = std::make_shared<trainer_progress>();
    progresses.push_back(progress);
    const std::uint64_t incarnation = 0x7a1 + static_cast<std::uint64_t>(t);
    auto agent = member(
        *nodes.back(), wire::role::trainer, -1, ep, [progress] { return progress->snapshot(); }, incarnation);
    // The trainer needs its member id: wait for the registration.
    auto registration = std::make_shared<std::optional<wire::register_reply>>();
    f.sys.spawn([agent, registration](caf::event_based_actor* self) {
      self->request(agent, caf::infinite, await_atom::value).then([registration](const wire::register_reply& r) {
        *registration = r;
      });
    });
    REQUIRE(f.run_until([&] { return registration->has_value(); }, std::chrono::seconds(5)));
    trainer_options to;
    to.name = ep;
    to.detached_workers = false;
    to.incarnation = incarnation;
    to.coordinator = "mem://coordinator";
    auto model = std::make_shared<train::dense_model>(setup->dlrm, setup->dense, job.model.seed);
    f.own(spawn_trainer(f.sys, nodes.back()->gateway, agent, job, model, {}, to, progress));
  }

  const auto slice0_synced = [&] {
    return std::all_of(progresses.begin(), progresses.end(), [](const auto& p) { return p->slice_rounds()[0] >= 2; });
  };
  if (js.stalled_slice) {
    CHECK(f.run_until(slice0_synced, std::chrono::seconds(60)));
  } else {
    REQUIRE(f.run_until([&] { return !out.result_json.empty(); }, std::chrono::seconds(300)));
  }
  for (const auto& p : progresses) out.slice_rounds.push_back(p->slice_rounds());
  out.acked = rc->examples_acked.load();
  if (auto status = ask(f, co.local_sync, wire::status_request{}))
    if (const auto* r = std::get_if<wire::status_reply>(&*status)) out.sync_status = r->json;
  for (auto& st : stores) out.shard_rows.push_back(st->stats().rows);
  for (auto& n : nodes) n->transport->stop();
  return out;
}

}  // namespace

TEST_CASE("cluster: a whole job on the deterministic scheduler trains every example once", "[actors]") {
  const auto out = run_job({"none", 1});
  INFO(out.result_json);
  CHECK(out.result.ok);
  CHECK(out.result.examples == 2000);
  CHECK(out.result.examples_read == 2000);
  CHECK(out.result.tested);
  CHECK(out.result.test.examples == 300);
  CHECK(out.result.exit_status() == 0);
  CHECK(out.acked == 2000);
  CHECK(out.shard_rows[0] > 0);
  CHECK(out.shard_rows[1] > 0);
}

TEST_CASE("cluster: two trainers with shadow EASGD sync in the background", "[actors]") {
  const auto out = run_job({"s-easgd", 2});
  INFO(out.result_json);
  CHECK(out.result.ok);
  CHECK(out.result.examples == 2000);
  CHECK(out.result.trainers == 2);
  CHECK(out.result.per_trainer.size() == 2);
  CHECK(out.result.sync_rounds > 0);
  CHECK(out.result.sync_wait_seconds == 0);  // shadow: workers never stop
  CHECK(std::isfinite(out.result.test.ne));
}

TEST_CASE("cluster: once the input is exhausted, one closing round folds both trainers' last progress",
          "[actors]") {
  for (const char* sync_name : {"s-ma-nesterov", "fr-bmuf"}) {
    const auto out = run_job({sync_name, 2});
    INFO(sync_name << ": " << out.result_json << "\n" << out.sync_status);
    CHECK(out.result.ok);
    CHECK(out.result.examples == 2000);
    CHECK(out.sync_status.find("\"closing_rounds\":1") != std::string::npos);
    CHECK(std::isfinite(out.result.test.ne));
  }
}

TEST_CASE("cluster: two trainers with foreground model averaging every 3 batches", "[actors]") {
  const auto out = run_job({"fr-ma", 2});
  INFO(out.result_json);
  CHECK(out.result.ok);
  CHECK(out.result.examples == 2000);
  CHECK(out.result.sync_gap == Approx(3.0));  // exactly every k batches
  CHECK(out.result.sync_rounds > 5);
  CHECK(out.result.sync_wait_seconds > 0);  // foreground: workers stop for every round
}

TEST_CASE("cluster: a sync server that never answers holds back its own slice only", "[actors]") {
  // Each slice has a round loop of its own: slice 0 goes on syncing while slice 1 waits.
  const auto out = run_job({"s-easgd", 2, true});
  REQUIRE(out.slice_rounds.size() == 2);
  for (const auto& rounds : out.slice_rounds) {
    REQUIRE(rounds.size() == 2);
    CHECK(rounds[0] >= 2);
    CHECK(rounds[1] == 0);
  }
}

TEST_CASE("cluster: quantized rounds (--sync-quantize int8) train as well and move a fraction of the bytes",
          "[actors]") {
  for (const char* sync_name : {"s-easgd", "s-ma"}) {
    const auto plain = run_job({sync_name, 2, false, "none"});
    const auto quantized = run_job({sync_name, 2, false, "int8"});
    INFO(sync_name << ": " << plain.result_json << "\n" << quantized.result_json << "\n" << quantized.sync_status);
    REQUIRE(quantized.result.ok);
    CHECK(quantized.result.examples == 2000);
    CHECK(quantized.result.sync_quantize == "int8");
    REQUIRE(quantized.result.sync_rounds > 0);
    REQUIRE(plain.result.sync_rounds > 0);
    const auto per_round = [](const job_outcome& o) {
      return static_cast<double>(o.result.sync_bytes) / static_cast<double>(o.result.sync_rounds);
    };
    // Every trainer's first request and each closing round are full; the rest a quarter.
    CHECK(per_round(quantized) < per_round(plain) / 2);
    CHECK(quantized.result.test.ne == Approx(plain.result.test.ne).epsilon(0.02));
    CHECK(quantized.sync_status.find("\"refused\":0") != std::string::npos);
  }
}
