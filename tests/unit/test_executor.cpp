// Executor behaviour with a fake runner: order, -j bound, atomic outputs, failure stop.
#include <catch2/catch.hpp>

#include <fstream>

#include "offload_build/exec/executor.hpp"
#include "offload_build/report/build_report.hpp"
#include "support/fake_runner.hpp"
#include "support/temp_dir.hpp"

using namespace ob;

namespace {

// A diamond per TU: two "device" jobs -> package -> host, then one link.
plan::Plan diamond_plan(const fs::path& dir, int tus) {
  plan::Plan plan;
  plan.cwd = dir;
  plan.directories = {dir / "out"};
  auto add = [&](plan::JobKind kind, std::vector<plan::JobId> deps, const std::string& out) {
    plan::Job j;
    j.id = plan.jobs.size();
    j.kind = kind;
    j.source = dir / "src.c";
    j.deps = std::move(deps);
    j.outputs = {dir / "out" / out};
    j.argv = {"tool", "-o", "out/" + out};
    plan.jobs.push_back(j);
    return j.id;
  };
  std::vector<plan::JobId> hosts;
  for (int t = 0; t < tus; ++t) {
    std::string n = std::to_string(t);
    plan::JobId d1 = add(plan::JobKind::DeviceCompile, {}, n + ".d1");
    plan::JobId d2 = add(plan::JobKind::DeviceCompile, {}, n + ".d2");
    plan::JobId p = add(plan::JobKind::Package, {d1, d2}, n + ".pkg");
    hosts.push_back(add(plan::JobKind::HostCompile, {p}, n + ".o"));
  }
  add(plan::JobKind::Link, hosts, "prog");
  plan.program = dir / "out/prog";
  return plan;
}

}  // namespace

TEST_CASE("executor runs every job after its dependencies", "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 3);
  test::FakeRunner runner;
  exec::ExecOptions opts;
  opts.parallelism = 4;
  auto summary = exec::execute(plan, runner, opts);
  REQUIRE(summary.ok());
  CHECK(summary->jobs_run == plan.jobs.size());
  REQUIRE(runner.started.size() == plan.jobs.size());
  std::vector<size_t> position(plan.jobs.size());
  for (size_t i = 0; i < runner.started.size(); ++i) position[runner.started[i]] = i;
  for (const auto& job : plan.jobs)
    for (plan::JobId d : job.deps) CHECK(position[d] < position[job.id]);
  CHECK(runner.started.back() == plan.jobs.back().id);  // link last
  CHECK(runner.max_running_seen <= 4);
  CHECK(runner.max_running_seen > 1);
  for (const auto& job : plan.jobs) CHECK(fs::exists(job.outputs[0]));
  CHECK_FALSE(test::has_temp_files(tmp.path() / "out"));
}

TEST_CASE("executor never exceeds -j", "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 5);
  for (size_t j : {1, 2, 3}) {
    test::FakeRunner runner;
    exec::ExecOptions opts;
    opts.parallelism = j;
    REQUIRE(exec::execute(plan, runner, opts).ok());
    CHECK(runner.max_running_seen == j);
  }
}

TEST_CASE("commands write to temporary names that are renamed on success", "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 1);
  test::FakeRunner runner;
  REQUIRE(exec::execute(plan, runner, exec::ExecOptions{}).ok());
  const auto& argv = runner.commands[0].argv;
  CHECK(argv[2] != "out/0.d1");
  CHECK(argv[2].find("out/.0.d1.ob-tmp-") == 0);
  CHECK(runner.commands[0].cwd == tmp.path());
  std::ifstream in(tmp.path() / "out/0.d1");
  std::string line;
  std::getline(in, line);
  CHECK(line == "output of job 0");
}

TEST_CASE("a failing job stops the build and leaves no partial output", "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 2);
  test::FakeRunner runner;
  runner.exit_codes[1] = 1;  // second device job of TU 0 fails
  exec::ExecOptions opts;
  opts.parallelism = 1;
  auto summary = exec::execute(plan, runner, opts);
  REQUIRE_FALSE(summary.ok());
  CHECK(summary.error().code == 1);
  CHECK_THAT(summary.error().message,
             Catch::Contains("device src.c failed with exit code 1") &&
                 Catch::Contains("command: tool -o out/0.d2"));
  // With -j1: job 0 ran and committed, job 1 failed, nothing else started.
  CHECK(runner.started == std::vector<plan::JobId>{0, 1});
  CHECK(fs::exists(plan.jobs[0].outputs[0]));
  CHECK_FALSE(fs::exists(plan.jobs[1].outputs[0]));
  CHECK_FALSE(test::has_temp_files(tmp.path() / "out"));
  CHECK_FALSE(fs::exists(plan.program));
}

TEST_CASE("running jobs finish after a failure but no new job starts", "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 2);
  test::FakeRunner runner;
  runner.exit_codes[0] = 2;
  exec::ExecOptions opts;
  opts.parallelism = 3;  // jobs 0, 1, 2 start together
  auto summary = exec::execute(plan, runner, opts);
  REQUIRE_FALSE(summary.ok());
  CHECK(runner.started == std::vector<plan::JobId>{0, 1, 4});
  CHECK(fs::exists(plan.jobs[1].outputs[0]));  // finished after the failure: kept
  CHECK_FALSE(fs::exists(plan.jobs[0].outputs[0]));
}

TEST_CASE("a job that does not write its output fails", "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 1);
  test::FakeRunner runner;
  runner.skip_output.insert(0);
  auto summary = exec::execute(plan, runner, exec::ExecOptions{});
  REQUIRE_FALSE(summary.ok());
  CHECK_THAT(summary.error().message, Catch::Contains("did not write"));
}

TEST_CASE("an output check can fail a job before its output is committed", "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 1);
  test::FakeRunner runner;
  exec::ExecOptions opts;
  std::vector<fs::path> checked;
  opts.check_outputs = [&](const plan::Job& job, const std::vector<fs::path>& temps) -> Result<void> {
    checked.push_back(temps[0]);
    CHECK(fs::exists(temps[0]));
    if (job.id == 1) return Error::failure("bad object");
    return {};
  };
  auto summary = exec::execute(plan, runner, opts);
  REQUIRE_FALSE(summary.ok());
  CHECK(summary.error().message == "bad object");
  CHECK(checked.size() == 2);
  CHECK_FALSE(fs::exists(plan.jobs[1].outputs[0]));
  CHECK_FALSE(test::has_temp_files(tmp.path() / "out"));
}

TEST_CASE("an output that exists and is not a regular file is never replaced", "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 1);
  fs::create_directories(plan.jobs[0].outputs[0]);  // a directory where a file should go
  test::FakeRunner runner;
  auto summary = exec::execute(plan, runner, exec::ExecOptions{});
  REQUIRE_FALSE(summary.ok());
  CHECK_THAT(summary.error().message, Catch::Contains("which is not a regular file"));
  CHECK(fs::is_directory(plan.jobs[0].outputs[0]));
  CHECK_FALSE(test::has_temp_files(tmp.path() / "out"));
}

TEST_CASE("progress lines count jobs", "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 1);
  test::FakeRunner runner;
  std::ostringstream progress;
  exec::ExecOptions opts;
  opts.progress = &progress;
  REQUIRE(exec::execute(plan, runner, opts).ok());
  CHECK(progress.str() ==
        "[1/5] device src.c\n[2/5] device src.c\n[3/5] package src.c\n[4/5] host src.c\n"
        "[5/5] link out/prog\n");
}

TEST_CASE("dry-run script is cd, mkdir and every command, quoted", "[executor]") {
  plan::Plan plan;
  plan.cwd = "/my proj";
  plan.directories = {"/my proj/build/obj"};
  plan::Job j;
  j.argv = {"clang", "-DMSG=hello world", "-o", "build/obj/a.o"};
  j.outputs = {"/my proj/build/obj/a.o"};
  plan.jobs = {j};
  CHECK(exec::dry_run_script(plan) ==
        "cd '/my proj'\nmkdir -p build/obj\nclang '-DMSG=hello world' -o build/obj/a.o\n");
}

TEST_CASE("a command that found its outputs current counts as up to date, and a runner's error is the failure's",
          "[executor]") {
  test::TempDir tmp;
  plan::Plan plan = diamond_plan(tmp.path(), 1);
  test::FakeRunner runner;
  runner.found_current = {0, 3};  // cargo said fresh: one device job and the host job
  report::BuildRecorder recorder;
  exec::ExecOptions opts;
  opts.observer = &recorder;
  auto summary = exec::execute(plan, runner, opts);
  REQUIRE(summary.ok());
  CHECK(runner.started.size() == plan.jobs.size());  // every command started...
  CHECK(summary->jobs_run == plan.jobs.size() - 2);  // ...two found their outputs current
  CHECK(summary->jobs_up_to_date == 2);
  CHECK(recorder.job(0).status == report::JobEvents::Status::UpToDate);
  CHECK(recorder.job(1).status == report::JobEvents::Status::Ran);
  CHECK(recorder.job(3).status == report::JobEvents::Status::UpToDate);
  for (const auto& job : plan.jobs) CHECK(fs::exists(job.outputs[0]));  // committed as any output

  test::FakeRunner failing;
  failing.exit_codes[1] = 101;
  failing.errors[1] = "the device pass of k for target host failed (cargo's messages above say why)";
  auto failed = exec::execute(plan, failing, exec::ExecOptions{});
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == failing.errors[1]);
}
