// The model options: the bottom MLP sized to the input when --bottom-mlp is empty, a shape that
// cannot be built named with its flags and fix, and check_job finding it before a job starts.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ss/core/job/job_options.hpp"
#include "ss/core/job/model_options.hpp"
#include "ss/core/model/dlrm_config.hpp"

using namespace ss;
using layers = std::vector<std::uint32_t>;

TEST_CASE("model options: an empty --bottom-mlp is sized to the input", "[core][job]") {
  job::model_options o;
  REQUIRE(o.bottom_mlp.empty());
  auto hidden = model::parse_layer_list(job::auto_bottom_hidden);
  REQUIRE(hidden.is_ok());

  o.embedding_dim = 8;
  auto with_dense = job::bottom_layers(o, 13);
  REQUIRE(with_dense.is_ok());
  layers expected = *hidden;
  expected.push_back(8);
  CHECK(*with_dense == expected);

  // No dense features: one layer with no inputs, whose bias is a learned vector.
  auto without = job::bottom_layers(o, 0);
  REQUIRE(without.is_ok());
  CHECK(*without == layers{8});

  // --embedding-dim alone gives a model that builds, with and without dense features.
  for (int dim : {1, 4, 32, 128}) {
    o.embedding_dim = dim;
    for (std::uint32_t dense : {0u, 3u}) {
      auto setup = job::resolve_model(o, dense, 5);
      REQUIRE(setup.is_ok());
      CHECK(setup->dlrm.bottom_mlp.back() == static_cast<std::uint32_t>(dim));
      CHECK(setup->dlrm.num_dense == dense);
    }
  }
}

TEST_CASE("model options: a given --bottom-mlp is kept, and one that misses the embedding dim is refused",
          "[core][job]") {
  job::model_options o;
  o.embedding_dim = 16;
  o.bottom_mlp = "64-16";
  auto ok = job::bottom_layers(o, 13);
  REQUIRE(ok.is_ok());
  CHECK(*ok == layers{64, 16});
  CHECK(model::layer_list_text(*ok) == "64-16");

  o.embedding_dim = 8;
  auto bad = job::resolve_model(o, 13, 26);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.error().code() == errc::invalid_argument);
  CHECK(bad.error().message() ==
        "--bottom-mlp 64-16 ends in 16, but its last layer meets the embeddings, and --embedding-dim is 8: end it "
        "in 8, or leave --bottom-mlp unset to size it to the input");

  o.bottom_mlp = "64-x";
  auto garbage = job::resolve_model(o, 13, 26);
  REQUIRE_FALSE(garbage.is_ok());
  CHECK(garbage.error().message().find("--bottom-mlp") != std::string::npos);
}

TEST_CASE("model options: check_job refuses a shape that cannot be built once the feature counts are known",
          "[core][job]") {
  job::job_options j;
  j.train = {"train.tsv"};
  j.model.embedding_dim = 8;
  j.model.bottom_mlp = "64-16";
  CHECK(job::check_job(j).is_ok());  // counts unknown: the shape is checked where they are
  j.dense_features = 13;
  j.categorical_features = 26;
  auto st = job::check_job(j);
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("--embedding-dim is 8") != std::string::npos);
  j.model.bottom_mlp.clear();
  CHECK(job::check_job(j).is_ok());
}

TEST_CASE("job options: more shards than rows can be placed on are refused", "[core][job]") {
  job::job_options j;
  j.train = {"train.tsv"};
  j.shards = 1024;
  CHECK(job::check_job(j).is_ok());
  j.shards = 1025;
  auto st = job::check_job(j);
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message() == "--shards 1025 is more than the 1024 shards rows can be placed on");
}

TEST_CASE("resume conflicts: the epochs and the shuffle define the job", "[job]") {
  ss::job::job_options saved;
  saved.train = {"a.tsv"};
  auto now = saved;
  CHECK(ss::job::resume_conflicts(saved, now).empty());
  now.passes.epochs = 3;  // more epochs: another shuffle window by default, too
  const auto conflicts = ss::job::resume_conflicts(saved, now);
  REQUIRE(conflicts.size() == 2);
  CHECK(conflicts[0] == "--epochs: the snapshot has 1, this run 3");
  CHECK(conflicts[1] == "--shuffle-buffer: the snapshot has 0, this run 100000");
  // Validation and its patience do not change what was trained: a resume may change them.
  now = saved;
  now.passes.validation = {"v.tsv"};
  now.passes.eval_every = 1000;
  CHECK(ss::job::resume_conflicts(saved, now).empty());
  // Nor does the shard count: the rows move to their owners under the new one.
  now = saved;
  now.shards = 5;
  CHECK(ss::job::resume_conflicts(saved, now).empty());
  // Nor does the rows' precision: the shards convert the rows, and the resume says so.
  now = saved;
  now.model.row_precision = "bf16";
  CHECK(ss::job::resume_conflicts(saved, now).empty());
  const auto conversions = ss::job::resume_conversions(saved, now);
  REQUIRE(conversions.size() == 1);
  CHECK(conversions[0] == "--row-precision: the snapshot has fp32, this run bf16: the shards convert the embedding "
                          "rows as they restore them (rounded to the nearest)");
  CHECK(ss::job::resume_conversions(now, saved)[0].find("(exactly)") != std::string::npos);
  CHECK(ss::job::resume_conversions(saved, saved).empty());
  // A finished job's result is of the rows it had: run again at another precision, it conflicts.
  CHECK(ss::job::rerun_conflicts(saved, now) ==
        std::vector<std::string>{"--row-precision: the snapshot has fp32, this run bf16"});
  CHECK(ss::job::rerun_conflicts(saved, saved).empty());
  // Another model is still refused with it.
  now.model.embedding_dim = saved.model.embedding_dim + 1;
  CHECK(ss::job::resume_conflicts(saved, now).size() == 1);
}

TEST_CASE("model options: --row-precision picks the shards' row precision; the job config keeps it", "[job]") {
  job::model_options m;
  auto fp32 = job::resolve_model(m, 13, 26);
  REQUIRE(fp32.is_ok());
  CHECK(fp32->embeddings.precision == ss::embedding::row_precision::fp32);
  m.row_precision = "fp16";
  auto fp16 = job::resolve_model(m, 13, 26);
  REQUIRE(fp16.is_ok());
  CHECK(fp16->embeddings.precision == ss::embedding::row_precision::fp16);
  m.row_precision = "fp8";
  auto bad = job::resolve_model(m, 13, 26);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.error().message() == "--row-precision: unknown row precision 'fp8' (expected fp32, bf16 or fp16)");
  job::job_options o;
  o.train = {"a.tsv"};
  o.model.row_precision = "bf16";
  const std::string text = job::job_config_text(o);
  auto back = job::parse_job_config(text);
  REQUIRE(back.is_ok());
  CHECK(back->model.row_precision == "bf16");
  // A snapshot's config naming a precision this build does not know is refused, naming it.
  std::string unknown = text;
  const auto at = unknown.find("row-precision = bf16");
  REQUIRE(at != std::string::npos);
  unknown.replace(at, std::string("row-precision = bf16").size(), "row-precision = fp8");
  auto refused = job::parse_job_config(unknown);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.error().message().find("fp8") != std::string::npos);
}

TEST_CASE("job config: the progressive window round-trips, and an older config's `window` is read as it", "[job]") {
  job::job_options o;
  o.progressive.window = 20000;
  o.progressive.window_seconds = 45;
  const std::string text = job::job_config_text(o);
  CHECK(text.find("progressive-window = 20000\n") != std::string::npos);
  auto back = job::parse_job_config(text);
  REQUIRE(back.is_ok());
  CHECK(back->progressive.window == 20000);
  CHECK(back->progressive.window_seconds == 45);
  // A snapshot's or a model file's config written before the rename.
  auto old = job::parse_job_config("[job]\nbatch-size = 64\n  window = 7000\nwindow-size = 3\n");
  REQUIRE_FALSE(old.is_ok());  // window-size is no key: only `window` itself is renamed
  CHECK(old.error().message().find("window-size") != std::string::npos);
  old = job::parse_job_config("[job]\nbatch-size = 64\n  window = 7000\n");
  REQUIRE(old.is_ok());
  CHECK(old->progressive.window == 7000);
  CHECK(old->batch_size == 64);
}
