// shadowsync train over several epochs, as real processes: the per-epoch record, validation and
// early stopping, the best epoch's model tested and exported, the seeded shuffle, and the refusals.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "cli_support.hpp"

using namespace ss::test;

namespace {

// Generated data split into train, validation and test files.
struct split_data {
  ss::test::temp_dir dir;
  split_data() {
    REQUIRE(run_command(bin + " gen-data --out " + dir.str() + " --rows 12000 --test-rows 4000 --seed 11").exit_code ==
            0);
    std::ifstream in(dir.str("test.tsv"));
    std::ofstream validation(dir.str("validation.tsv")), test(dir.str("held-out.tsv"));
    std::string line;
    for (int i = 0; std::getline(in, line); ++i) (i < 2000 ? validation : test) << line << "\n";
  }
  // `model` scores the held-out file as the run whose result line is `result` reported.
  void check_predict(const std::string& model, const std::string& result) const {
    auto p = run_command(bin + " predict --model " + model + " --test " + dir.str("held-out.tsv"));
    REQUIRE(p.exit_code == 0);
    CHECK(json_field(last_json_line(p.out), "test_logloss") == json_field(result, "test_logloss"));
    CHECK(json_field(last_json_line(p.out), "test_auc") == json_field(result, "test_auc"));
  }
  std::string train(const std::string& flags) const {
    return bin + " train --progress-interval 0 --train " + dir.str("train.tsv") + " --test " + dir.str("held-out.tsv") +
           " --bottom-mlp 32-16 --top-mlp 32-1 " + flags;
  }
};

struct early_stop {
  double best_epoch;
  double epochs_run;
};

// The result line `j` of a run over the 12,000 training rows with --early-stop-patience 2 that
// stopped early: two epochs after its best one, with every example trained once per epoch run.
early_stop check_stopped_early(const std::string& j) {
  const early_stop e{json_number(j, "best_epoch"), json_number(j, "epochs_run")};
  CHECK(json_field(j, "stopped_early") == "true");
  CHECK(e.epochs_run == e.best_epoch + 2);
  CHECK(json_number(j, "examples") == 12000 * e.epochs_run);
  return e;
}

}  // namespace

TEST_CASE("epochs: validation after every epoch, early stop, and the best epoch's model tested and exported",
          "[cli]") {
  split_data d;
  const std::string model = d.dir.str("best.model");
  // Row-wise Adagrad overfits these 12,000 rows after the first pass (train log loss 0.54, then
  // 0.29, 0.08; validation 0.53, then 0.62, 0.79): the run stops after epoch 3 and keeps epoch 1.
  auto r = run_command(d.train("--epochs 6 --early-stop-patience 2 --sparse-optimizer rowwise-adagrad "
                               "--embedding-learning-rate 0.1 --validation " + d.dir.str("validation.tsv") +
                               " --export " + model));
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const std::string j = last_json_line(r.out);
  // The best epoch is not the last one trained, and it is the model tested and exported.
  CHECK(check_stopped_early(j).best_epoch == 1);
  CHECK(j.find("\"epochs\":[{\"epoch\":1,\"examples\":12000,") != std::string::npos);
  CHECK(j.find("\"train_progressive\":true") != std::string::npos);
  CHECK(j.find("\"validation_logloss\":") != std::string::npos);
  CHECK(r.out.find("(progressive, first pass)") != std::string::npos);

  // The file holds the best epoch's model: predict reproduces the test metrics train reported.
  d.check_predict(model, j);
}

TEST_CASE("epochs: the shuffle is seeded, and reading in order is the default for one epoch", "[cli]") {
  split_data d;
  auto a = last_json_line(run_command(d.train("--epochs 2 --seed 3")).out);
  auto b = last_json_line(run_command(d.train("--epochs 2 --seed 3")).out);
  auto c = last_json_line(run_command(d.train("--epochs 2 --seed 3 --shuffle-buffer 0")).out);
  CHECK(json_field(a, "test_logloss") == json_field(b, "test_logloss"));  // one thread, same seed: same run
  CHECK(json_field(a, "test_logloss") != json_field(c, "test_logloss"));  // shuffled vs in order
  // One epoch reads in order unless asked: the first pass of a shuffled run differs from it.
  auto one = last_json_line(run_command(d.train("--seed 3")).out);
  CHECK(json_field(one, "train_logloss") == json_field(c, "train_logloss"));
  CHECK(json_field(one, "train_logloss") != json_field(a, "train_logloss"));
}

TEST_CASE("epochs: a validation file's bad rows are counted and reported once, not every epoch", "[cli]") {
  split_data d;
  {
    std::ifstream in(d.dir.str("validation.tsv"));
    std::ofstream out(d.dir.str("validation-bad.tsv"));
    std::string line;
    for (int i = 0; std::getline(in, line); ++i) out << (i == 10 ? std::string("not a row") : line) << "\n";
  }
  auto r = run_command(d.train("--epochs 3 --validation " + d.dir.str("validation-bad.tsv")));
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(json_number(last_json_line(r.out), "validation_bad_rows") == 1);
  std::size_t reports = 0;
  for (auto at = r.out.find("validation data: skipped 1 malformed rows"); at != std::string::npos;
       at = r.out.find("validation data: skipped 1 malformed rows", at + 1))
    ++reports;
  CHECK(reports == 1);
  CHECK(r.out.find("validation-bad.tsv:11: expected 40 fields, found 1") != std::string::npos);
}

TEST_CASE("epochs: contradictory options exit 2 naming the flags and the fix", "[cli]") {
  split_data d;
  expect_exit(d.train("--epochs 3 --early-stop-patience 1"), 2, "--early-stop-patience 1 needs --validation");
  expect_exit(d.train("--epochs 2 --early-stop-patience 2 --validation " + d.dir.str("validation.tsv")),
              2, "cannot stop a run of --epochs 2");
  expect_exit(d.train("--epochs 0"), 2, "--epochs");
  auto missing = expect_exit(d.train("--validation " + d.dir.str("nope.tsv")), 2, "--validation");
  CHECK(last_json_line(missing.out).find("\"ok\":false") != std::string::npos);
  expect_exit(d.train("--lr-decay cosine"), 2, "--lr-decay cosine needs --lr-decay-examples");
  expect_exit(d.train("--lr-decay linear --lr-decay-examples 10 --lr-min-ratio 2"), 2, "--lr-min-ratio");
}

TEST_CASE("epochs in the cluster: every example once per epoch, validation, early stop, the best epoch exported",
          "[cli]") {
  split_data d;
  const std::string model = d.dir.str("cluster-best.model");
  // Real processes: two readers (one file each), two trainers, two shards. The overfitting of the
  // train case above: epoch 1 is the best, and the run stops two epochs later.
  const std::string half = d.dir.str("train-b.tsv");
  {
    std::ifstream in(d.dir.str("train.tsv"));
    std::ofstream a(d.dir.str("train-a.tsv")), b(half);
    std::string line;
    for (int i = 0; std::getline(in, line); ++i) (i % 2 == 0 ? a : b) << line << "\n";
  }
  auto r = run_command(bin + " local --processes --trainers 2 --shards 2 --readers 2 --train " + d.dir.str("train-a.tsv") +
                       "," + half + " --test " + d.dir.str("held-out.tsv") + " --validation " +
                       d.dir.str("validation.tsv") +
                       " --bottom-mlp 32-16 --top-mlp 32-1 --embedding-learning-rate 0.1 --epochs 6 "
                       "--early-stop-patience 2 --progress-interval 0 --heartbeat-interval 0.2 --export " + model);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const std::string j = last_json_line(r.out);
  const auto [best, run] = check_stopped_early(j);
  CHECK(best >= 1);
  // Exactly once per epoch: the readers' committed positions cover the data once per epoch run.
  CHECK(json_number(j, "examples_committed") == 12000 * run);
  CHECK(j.find("\"epoch_scores\":[{\"epoch\":1,\"validation_logloss\":") != std::string::npos);
  CHECK(r.out.find("(the model of epoch " + std::to_string(static_cast<int>(best)) + ")") != std::string::npos);
  // The file holds the best epoch's model: predict reproduces the test metrics the job reported.
  d.check_predict(model, j);
}

TEST_CASE("epochs in the cluster: a closing round folds the trainers' last progress at each epoch's end and at the "
          "job's end",
          "[cli]") {
  split_data d;
  // In one process, two trainers with shadow EASGD (a sync interval longer than the job: without
  // the closing rounds the center would hold little of the training), two epochs scored.
  auto r = run_command(bin + " local --trainers 2 --sync s-easgd --sync-interval 30 --train " + d.dir.str("train.tsv") +
                       " --test " + d.dir.str("held-out.tsv") + " --validation " + d.dir.str("validation.tsv") +
                       " --bottom-mlp 32-16 --top-mlp 32-1 --epochs 2 --progress-interval 0 --log-level info");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("closing round 1 folded 2 of 2 trainers' final replicas") != std::string::npos);
  CHECK(r.out.find("closing round at the end folded 2 of 2 trainers' final replicas") != std::string::npos);
  const std::string j = last_json_line(r.out);
  CHECK(json_field(j, "ok") == "true");
  CHECK(json_number(j, "examples") == 24000);
}

TEST_CASE("epochs in the cluster: contradictory options exit 2 before anything starts", "[cli]") {
  split_data d;
  auto no_validation =
      expect_exit(bin + " local --train " + d.dir.str("train.tsv") + " --epochs 3 --early-stop-patience 1", 2,
                  "--early-stop-patience 1 needs --validation");
  CHECK(last_json_line(no_validation.out).find("\"ok\":false") != std::string::npos);  // a JSON line, as always
  expect_exit(bin + " local --train " + d.dir.str("train.tsv") + " --validation " + d.dir.str("nope.tsv"),
              2, "--validation");
  expect_exit(bin + " local --train " + d.dir.str("train.tsv") + " --lr-decay step",
              2, "--lr-decay step needs --lr-decay-examples");
}

TEST_CASE("epochs: --eval-every scores the validation files within epochs, in train and in the cluster", "[cli]") {
  split_data d;
  const std::string validation = " --validation " + d.dir.str("validation.tsv");
  // train: the workers pause every 3,000 examples (at batch boundaries) while the model is scored;
  // three pauses an epoch (3,000, 6,000, 9,000 of 12,000), not at the epoch's end.
  auto r = run_command(d.train("--epochs 2 --eval-every 3000" + validation));
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const std::string j = last_json_line(r.out);
  std::size_t count = 0;
  for (auto at = j.find("{\"epoch\":", j.find("\"evaluations\":")); at != std::string::npos;
       at = j.find("{\"epoch\":", at + 1))
    ++count;
  CHECK(count == 6);
  CHECK(j.find("\"evaluations\":[{\"epoch\":1,\"examples\":3072,\"validation_logloss\":") != std::string::npos);
  CHECK(j.find("{\"epoch\":2,\"examples\":15072,") != std::string::npos);
  // Scoring mid-epoch changes nothing about the training: the same run without it ends the same.
  auto plain = run_command(d.train("--epochs 2" + validation));
  CHECK(json_field(last_json_line(plain.out), "test_logloss") == json_field(j, "test_logloss"));

  // The cluster scores the model while it trains on, at its first tick after each multiple (a
  // quarter second apart: a job long enough for a few of them).
  REQUIRE(run_command(bin + " gen-data --out " + d.dir.str("long") + " --rows 200000 --test-rows 1").exit_code == 0);
  auto c = run_command(bin + " local --trainers 2 --train " + d.dir.str("long/train.tsv") + validation +
                       " --bottom-mlp 32-16 --top-mlp 32-1 --eval-every 50000 --progress-interval 0 "
                       "--heartbeat-interval 0.2");
  INFO(c.out);
  REQUIRE(c.exit_code == 0);
  const std::string cj = last_json_line(c.out);
  CHECK(cj.find("\"evaluations\":[{\"epoch\":1,\"examples\":") != std::string::npos);
  CHECK(c.out.find("examples: validation log loss") != std::string::npos);

  expect_exit(d.train("--eval-every 1000"), 2, "--eval-every 1000 needs --validation");
}
