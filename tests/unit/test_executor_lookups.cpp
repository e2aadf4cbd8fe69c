// The executor's runner seam and its concurrent cache lookups, with a fake
// runner and fake `serve` hooks: what a runner is given, lookups in flight at
// once (proved by a latch, not by timing), bounded, off the scheduler thread,
// and the executor's guarantees kept (failure stop, temporaries, event order).
#include <catch2/catch.hpp>

#include <thread>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

#include "offload_build/exec/executor.hpp"
#include "support/fake_runner.hpp"
#include "support/latch.hpp"
#include "support/temp_dir.hpp"

using namespace ob;

namespace {

// `n` independent device jobs, then a link of all of them.
plan::Plan wide_plan(const fs::path& dir, size_t n) {
  plan::Plan plan;
  plan.cwd = dir;
  plan.directories = {dir / "out"};
  std::vector<plan::JobId> objects;
  for (size_t i = 0; i <= n; ++i) {
    const bool link = i == n;
    plan::Job j;
    j.kind = link ? plan::JobKind::Link : plan::JobKind::DeviceCompile;
    const std::string out = link ? "prog" : std::to_string(i) + ".o";
    j.source = link ? fs::path() : dir / (std::to_string(i) + ".c");
    if (!link) j.inputs = {j.source};
    else
      for (plan::JobId o : objects) j.inputs.push_back(dir / "out" / (std::to_string(o) + ".o"));
    j.outputs = {dir / "out" / out};
    j.tools = {"/usr/bin/ld.lld"};
    j.env = {{"OB_TEST", std::string("1")}};
    j.argv = {"tool", "-c", "-o", "out/" + out};
    if (link) j.deps = objects;
    const plan::JobId id = plan.add(std::move(j));
    if (!link) objects.push_back(id);
  }
  plan.program = dir / "out/prog";
  return plan;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A hit: the job's output written to its temporary, as the job cache does.
exec::Served write_hit(const plan::Job& job, const std::vector<fs::path>& temps) {
  std::ofstream(temps.at(0)) << "served " << job.id << "\n";
  return exec::Served::FromCache;
}

// Every event, in order, as "<event> <job>".
struct EventLog : report::Progress {
  std::vector<std::string> events;
  void job_started(const plan::Job& j) override { events.push_back("started " + std::to_string(j.id)); }
  void job_served(const plan::Job& j, report::ServedFrom, double) override { events.push_back("served " + std::to_string(j.id)); }
  void job_finished(const plan::Job& j, double) override { events.push_back("finished " + std::to_string(j.id)); }
  void job_failed(const plan::Job& j, int, double, const std::string&) override {
    events.push_back("failed " + std::to_string(j.id));
  }
  size_t at(const std::string& e) const {
    return static_cast<size_t>(std::find(events.begin(), events.end(), e) - events.begin());
  }
};

}  // namespace

TEST_CASE("the runner is given the job: kind, inputs, outputs, tools, environment and temporaries",
          "[executor][runner]") {
  test::TempDir tmp;
  plan::Plan plan = wide_plan(tmp.path(), 2);
  test::FakeRunner runner;
  REQUIRE(exec::execute(plan, runner, exec::ExecOptions{}).ok());
  REQUIRE(runner.jobs.size() == 3);
  for (size_t i = 0; i < runner.jobs.size(); ++i) {
    const plan::Job& given = runner.jobs[i];
    const plan::Job& planned = plan.jobs[runner.started[i]];
    CHECK(given.id == planned.id);
    CHECK(given.kind == planned.kind);
    CHECK(given.inputs == planned.inputs);
    CHECK(given.outputs == planned.outputs);  // final paths
    CHECK(given.tools == planned.tools);
    CHECK(given.env == planned.env);
    // Where to write them: the temporaries its command names, renamed after success.
    REQUIRE(runner.temps[i].size() == 1);
    CHECK(runner.temps[i][0] == exec::temporary_path(planned.outputs[0], planned.id));
    CHECK(runner.commands[i].argv.back() == plan::arg_path(runner.temps[i][0], plan.cwd).string());
    CHECK(runner.commands[i].cwd == plan.cwd);
  }
  CHECK(runner.jobs.back().kind == plan::JobKind::Link);
  CHECK(runner.jobs.back().inputs.size() == 2);
}

TEST_CASE("cache lookups run at once, off the scheduler thread, bounded", "[executor][lookups]") {
  test::TempDir tmp;
  const size_t n = 10;
  plan::Plan plan = wide_plan(tmp.path(), n);
  // limit 0 is the default: max(-j, kDefaultLookups), at least the 10 lookups here.
  for (size_t limit : {size_t{0}, size_t{3}}) {
    DYNAMIC_SECTION("lookups " << limit) {
      const size_t want = limit ? limit : n;
      test::OverlapLatch latch(want);
      test::FakeRunner runner;
      exec::ExecOptions opts;
      opts.parallelism = 1;  // lookups are not commands: -j1 does not serialize them
      opts.lookups = limit;
      opts.serve = [&](const plan::Job& job, const std::vector<fs::path>& temps) {
        if (job.kind == plan::JobKind::Link) return exec::Served::No;
        latch.arrive_and_wait();
        return write_hit(job, temps);
      };
      auto summary = exec::execute(plan, runner, opts);
      REQUIRE(summary.ok());
      CHECK_FALSE(latch.gave_up());  // one at a time never gets `want` in flight
      CHECK(latch.peak() == want);   // and never more than the bound
      CHECK(latch.off_main_thread());
      CHECK(summary->jobs_served == n);
      CHECK(runner.started == std::vector<plan::JobId>{n});  // only the link ran, after every object
      for (size_t i = 0; i < n; ++i) CHECK(read(plan.jobs[i].outputs[0]) == fmt::format("served {}\n", i));
      CHECK_FALSE(test::has_temp_files(tmp.path() / "out"));
    }
  }
}

TEST_CASE("one lookup at a time is asked on the executor's own thread, no lookup threads", "[executor][lookups]") {
  test::TempDir tmp;
  const size_t n = 5;
  plan::Plan plan = wide_plan(tmp.path(), n);
  test::FakeRunner runner;
  exec::ExecOptions opts;
  opts.lookups = 1;  // what a build with only a local cache uses (cli/build_context.cpp)
  const auto main_thread = std::this_thread::get_id();
  size_t asked = 0, elsewhere = 0;
  opts.serve = [&](const plan::Job& job, const std::vector<fs::path>& temps) {
    ++asked;
    if (std::this_thread::get_id() != main_thread) ++elsewhere;
    if (job.kind == plan::JobKind::Link) return exec::Served::No;
    return write_hit(job, temps);
  };
  auto summary = exec::execute(plan, runner, opts);
  REQUIRE(summary.ok());
  CHECK(asked == n + 1);
  CHECK(elsewhere == 0);
  CHECK(summary->jobs_served == n);
  CHECK(runner.started == std::vector<plan::JobId>{n});
  for (size_t i = 0; i < n; ++i) CHECK(read(plan.jobs[i].outputs[0]) == fmt::format("served {}\n", i));
  CHECK_FALSE(test::has_temp_files(tmp.path() / "out"));
}

TEST_CASE("concurrent lookups keep the order of events and call after_serve on the executor's thread",
          "[executor][lookups]") {
  test::TempDir tmp;
  plan::Plan plan = wide_plan(tmp.path(), 6);
  test::FakeRunner runner;
  EventLog log;
  exec::ExecOptions opts;
  opts.parallelism = 2;
  opts.observer = &log;
  test::OverlapLatch latch(6);
  const auto main = std::this_thread::get_id();
  std::vector<plan::JobId> after;  // touched on the executor's thread only
  opts.serve = [&](const plan::Job& job, const std::vector<fs::path>& temps) {
    if (job.kind == plan::JobKind::Link) return exec::Served::No;
    latch.arrive_and_wait();
    return job.id % 2 ? write_hit(job, temps) : exec::Served::No;  // odd ones hit, even ones run
  };
  opts.after_serve = [&](const plan::Job& job, exec::Served) {
    CHECK(std::this_thread::get_id() == main);
    CHECK(log.at("served " + std::to_string(job.id)) == log.events.size());  // before its event
    after.push_back(job.id);
  };
  REQUIRE(exec::execute(plan, runner, opts).ok());
  CHECK_FALSE(latch.gave_up());
  CHECK(after.size() == plan.jobs.size());
  for (plan::JobId id = 0; id < 6; ++id) {
    if (id % 2) {
      CHECK(log.at("served " + std::to_string(id)) < log.at("started 6"));
    } else {
      CHECK(log.at("started " + std::to_string(id)) < log.at("finished " + std::to_string(id)));
      CHECK(log.at("finished " + std::to_string(id)) < log.at("started 6"));
    }
  }
  CHECK(log.events.back() == "finished 6");
  CHECK(runner.max_running_seen <= 2);
}

TEST_CASE("a failure while lookups are in flight: nothing more starts, no temporary is left",
          "[executor][lookups]") {
  test::TempDir tmp;
  plan::Plan plan = wide_plan(tmp.path(), 8);
  test::FakeRunner runner;
  for (plan::JobId id = 0; id < 8; ++id) runner.exit_codes[id] = 1;
  exec::ExecOptions opts;
  opts.parallelism = 1;
  std::atomic<int> asked{0};
  opts.serve = [&](const plan::Job&, const std::vector<fs::path>&) {
    ++asked;
    return exec::Served::No;
  };
  auto summary = exec::execute(plan, runner, opts);
  REQUIRE_FALSE(summary.ok());
  CHECK_THAT(summary.error().message, Catch::Contains("failed with exit code 1"));
  CHECK(runner.started.size() == 1);  // the first to run failed; the rest never started
  CHECK(asked.load() <= 8);           // the link was never looked up
  CHECK_FALSE(fs::exists(plan.program));
  CHECK_FALSE(test::has_temp_files(tmp.path() / "out"));
}

TEST_CASE("a lookup that hits after a failure still commits whole outputs", "[executor][lookups]") {
  test::TempDir tmp;
  plan::Plan plan = wide_plan(tmp.path(), 4);
  test::FakeRunner runner;
  runner.exit_codes[0] = 1;
  exec::ExecOptions opts;
  std::mutex mu;
  opts.serve = [&](const plan::Job& job, const std::vector<fs::path>& temps) {
    std::lock_guard lock(mu);
    return job.id == 0 ? exec::Served::No : write_hit(job, temps);
  };
  auto summary = exec::execute(plan, runner, opts);
  REQUIRE_FALSE(summary.ok());
  CHECK(runner.started == std::vector<plan::JobId>{0});
  for (plan::JobId id = 1; id < 4; ++id) CHECK(read(plan.jobs[id].outputs[0]) == fmt::format("served {}\n", id));
  CHECK_FALSE(fs::exists(plan.jobs[0].outputs[0]));
  CHECK_FALSE(fs::exists(plan.program));
  CHECK_FALSE(test::has_temp_files(tmp.path() / "out"));
}
