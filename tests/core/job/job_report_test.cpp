#include <catch2/catch.hpp>

#include <cmath>

#include "ss/core/job/job_report.hpp"

using namespace ss;
using namespace ss::job;

namespace {
job_report sample() {
  job_report r;
  r.ok = true;
  r.examples = 2000;
  r.examples_committed = 2000;
  r.examples_read = 2000;
  r.epochs = 3;
  r.epochs_run = 2;
  r.best_epoch = 1;
  r.stopped_early = true;
  metrics::summary v;
  v.log_loss = 0.5;
  v.ne = 0.9;
  v.auc = 0.7;
  r.epoch_scores = {{1, v}, {2, v}};
  r.evaluations = {{1, 1000, v}};
  r.seconds = 4;
  r.trainers = 2;
  r.shards = 2;
  r.readers = 1;
  r.batch_size = 128;
  r.train_logloss = 0.45;
  r.train_ne = 0.8;
  r.train_click_rate = 0.25;
  r.progressive_window = 5000;
  r.progressive.metrics.examples = 5100;
  r.progressive.metrics.log_loss = 0.47;
  r.progressive.metrics.ne = 0.83;
  r.progressive.metrics.auc = 0.78;
  r.progressive.metrics.calibration = 1.01;
  r.progressive.auc_error_bound = 0.002;
  r.progressive.seconds = 3.5;
  r.progressive.enough = true;
  r.tested = true;
  r.test.examples = 300;
  r.test.log_loss = 0.46;
  r.test.ne = 0.81;
  r.test.auc = 0.79;
  r.test.calibration = 0.99;
  r.sync = "s-easgd";
  r.sync_servers = 2;
  r.sync_rounds = 17;
  r.sync_gap = 3.5;
  r.job_id = 0xfedcba9876543210ULL;  // above 2^53: exact only if read as an integer
  r.snapshots = 4;
  r.last_snapshot_id = 9;
  r.export_path = "/tmp/m.ssm";
  r.export_rows = 77;
  r.export_bytes = 12345;
  r.per_trainer = {{"trainer-0", 1000, 2.0, 9, 3.5, 1.0, 2.0, 0.01, 0},
                   {"trainer-1", 1000, 2.1, 8, 3.5, 1.1, 2.2, 0.02, 0, 0, true}};  // trainer-1 left the job
  return r;
}
}  // namespace

TEST_CASE("job_report: the JSON line reads back field for field", "[core][job]") {
  const job_report r = sample();
  const std::string line = r.to_json();
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.rfind("{\"command\":\"cluster\",\"ok\":true,", 0) == 0);
  auto back = job_report::from_json(line);
  REQUIRE(back.is_ok());
  CHECK(back->to_json() == line);
  CHECK(back->job_id == 0xfedcba9876543210ULL);
  CHECK(back->per_trainer.size() == 2);
  CHECK(back->per_trainer[1].name == "trainer-1");
  CHECK_FALSE(back->per_trainer[0].left);
  CHECK(back->per_trainer[1].left);
  CHECK(back->epoch_scores[1].validation.auc == Approx(0.7));
  CHECK(back->examples_per_sec() == Approx(500));
  CHECK(back->progressive.metrics.ne == 0.83);
  CHECK(back->progressive.enough);
  CHECK(back->progressive_window == 5000);
}

TEST_CASE("job_report: progressive metrics are shown over their window, or said to be too few", "[core][job]") {
  job_report r = sample();
  r.epochs_run = 1;
  CHECK(r.summary().find("  window  progressive NE 0.83000 AUC 0.78000 (+-0.0020) calibration 1.0100 over 5100 "
                         "examples (4s); window: the last 5000 examples\n") != std::string::npos);
  r.progressive_window = 0;
  r.progressive_window_seconds = 30;
  CHECK(r.summary().find("; window: the last 30 s\n") != std::string::npos);
  r.progressive.enough = false;
  r.progressive.metrics.examples = 400;
  r.progressive.metrics.positives = 90;
  CHECK(r.summary().find("  window  progressive: too few examples (400 with 90 clicks; at least 1000") !=
        std::string::npos);
  const std::string line = r.to_json();
  CHECK(line.find("\"progressive_ne\":null") != std::string::npos);  // no number rather than noise
  CHECK(line.find("\"progressive_enough\":false") != std::string::npos);
}

TEST_CASE("job_report: exit status and summary follow the fields", "[core][job]") {
  job_report r = sample();
  CHECK(r.exit_status() == 0);
  const std::string s = r.summary();
  CHECK(s.rfind("shadowsync cluster: 2000 examples in 4.0s (500 examples/s) on 2 trainers, 2 shards, 1 reader\n", 0) == 0);
  CHECK(s.find("valid   best epoch 1 of 2 (stopped early)") != std::string::npos);
  CHECK(s.find("test    300 examples") != std::string::npos);
  CHECK(s.find("(the model of epoch 1)") != std::string::npos);
  CHECK(s.find("model   /tmp/m.ssm: 77 embedding rows") != std::string::npos);
  r.snapshot_error = "disk full";
  CHECK(r.exit_status() == 3);
  CHECK(r.summary().find("the last snapshot FAILED (disk full): the newest complete one is snapshot 9") !=
        std::string::npos);
  r.snapshot_error.clear();
  r.publish_dir = "/srv/pub";
  r.publications = 12;
  r.publications_failed = 2;
  r.last_publication = 14;
  CHECK(r.exit_status() == 0);
  CHECK(r.summary().find("publish 12 publications to /srv/pub (2 failed), the newest 14") != std::string::npos);
  r.publish_error = "delta 15: no space left on the device";
  CHECK(r.exit_status() == 3);
  CHECK(r.summary().find("the final publication FAILED (delta 15: no space left on the device)") != std::string::npos);
  auto published = job_report::from_json(r.to_json());
  REQUIRE(published.is_ok());
  CHECK(published->publish_dir == "/srv/pub");
  CHECK(published->publications == 12);
  CHECK(published->publications_failed == 2);
  CHECK(published->last_publication == 14);
  CHECK(published->publish_error == r.publish_error);
  r.ok = false;
  r.error = "shard 0 has been away";
  r.tested = false;
  r.export_path.clear();
  r.export_error = "no model";
  CHECK(r.exit_status() == 1);
  const std::string failed = r.summary();
  CHECK(failed.find("[FAILED]\n  error   shard 0 has been away\n") != std::string::npos);
  CHECK(failed.find("test ") == std::string::npos);
  CHECK(failed.find("model   NOT written: no model") != std::string::npos);
  // A failed job's line says so in its fields, whatever its strings hold.
  r.error = "\"ok\":true";
  auto back = job_report::from_json(r.to_json());
  REQUIRE(back.is_ok());
  CHECK_FALSE(back->ok);
}

TEST_CASE("job_report: an older line reads with defaults; other JSON is refused", "[core][job]") {
  auto old = job_report::from_json(R"({"command":"cluster","ok":true,"examples":5,"test_examples":3,"test_ne":null})");
  REQUIRE(old.is_ok());
  CHECK(old->ok);
  CHECK(old->examples == 5);
  CHECK(old->tested);  // before "tested", scored test examples said so
  CHECK(std::isnan(old->test.ne));
  auto other = job_report::from_json(R"({"command":"train","ok":true})");
  REQUIRE_FALSE(other.is_ok());
  CHECK(other.error().message().find("not a cluster result") != std::string::npos);
  auto broken = job_report::from_json(R"({"command":"cluster","ok":tru)");
  REQUIRE_FALSE(broken.is_ok());
  CHECK(broken.error().message().find("a job result line") != std::string::npos);
}
