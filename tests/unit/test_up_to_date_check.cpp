// Job::up_to_date_check: a job no cache entry is kept for (the cargo flow's
// package, stub and embed) is still skipped while its command, inputs and
// outputs are as the build state recorded, as ninja skips an edge, and runs
// again when any of them changed; nothing of it is stored in the cache.
#include <catch2/catch.hpp>

#include <fstream>

#include "offload_build/cache/job_cache.hpp"
#include "support/fake_runner.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::cache;
using namespace ob::storage;

namespace {

// One step reading in.txt and writing out/step.o, cached or not.
plan::Plan step_plan(const fs::path& dir, bool checked) {
  plan::Plan plan;
  plan.cwd = dir;
  plan.build_dir = dir / "out";
  plan.state_file = dir / "out/build-state.json";
  plan.directories = {dir / "out"};
  plan::Job j;
  j.kind = plan::JobKind::Package;
  j.source = dir / "in.txt";
  j.inputs = {j.source};
  j.outputs = {dir / "out/step.o"};
  j.argv = {"/bin/true", "-o", "out/step.o", "in.txt"};
  j.cacheable = false;
  j.up_to_date_check = checked;
  plan.add(std::move(j));
  return plan;
}

struct Built {
  std::vector<plan::JobId> ran;
  Counters counters;
};

Built build(const plan::Plan& plan, const fs::path& cache_dir) {
  Storage local(cache_dir);
  LayeredOptions options;
  options.warning_fd = -1;
  LayeredStorage layers(local, {}, options);
  JobCache cache(layers, plan, JobCacheOptions{});
  test::FakeRunner runner;
  exec::ExecOptions exec_options;
  cache.attach(exec_options);
  auto summary = exec::execute(plan, runner, exec_options);
  REQUIRE(summary.ok());
  Built b{runner.started, cache.counters()};
  cache.finish();
  return b;
}

}  // namespace

TEST_CASE("a job with up_to_date_check runs again only when its command, inputs or outputs changed, and is never stored",
          "[job-cache][build-state]") {
  test::TempDir tmp("ob-up-to-date-check");
  const fs::path dir = tmp.path();
  std::ofstream(dir / "in.txt") << "one\n";
  const plan::Plan plan = step_plan(dir, true);
  CHECK(build(plan, tmp / "cache").ran.size() == 1);
  const Built again = build(plan, tmp / "cache");
  CHECK(again.ran.empty());  // up to date
  CHECK(again.counters.stores == 0);
  CHECK(again.counters.hits == 0);
  CHECK(fs::exists(dir / "out/build-state.json"));

  std::ofstream(dir / "in.txt") << "two, longer\n";  // an input changed
  CHECK(build(plan, tmp / "cache").ran.size() == 1);
  CHECK(build(plan, tmp / "cache").ran.empty());

  fs::remove(dir / "out/step.o");  // its output gone
  CHECK(build(plan, tmp / "cache").ran.size() == 1);

  plan::Plan other = plan;  // another command
  other.jobs[0].argv.push_back("--flag");
  CHECK(build(other, tmp / "cache").ran.size() == 1);

  // Without the flag (or without a build state) it runs every time, as before.
  const plan::Plan plain = step_plan(dir, false);
  CHECK(build(plain, tmp / "cache").ran.size() == 1);
  CHECK(build(plain, tmp / "cache").ran.size() == 1);
}
