// One key per job (exec/job_keys.hpp): the key the job cache computed when it
// looked a job up is the one the remote runner sends in its action, so each
// job is described once per build (cache::describe_job_count), whether it
// hits, runs here or runs on an engine, and with no job cache at all
// (--no-cache: cache::JobKeyTable). The engine is an in-process fake
// registered by its scheme that executes nothing: it answers each compile
// with its outputs and records the key stamp each action carried.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <mutex>

#include "offload_build/cache/job_cache.hpp"
#include "offload_build/exec/remote/runner.hpp"
#include "offload_build/process/subprocess.hpp"
#include "support/fake_runner.hpp"
#include "support/temp_dir.hpp"

using namespace ob;

namespace {

// `n` compiles of their own source each (cp stands for the compiler: a
// program the worker has at the same path, with a --version).
plan::Plan compile_plan(const fs::path& dir, size_t n) {
  plan::Plan plan;
  plan.cwd = dir;
  plan.build_dir = dir / "out";
  plan.program = dir / "out/prog";
  plan.name_anchor = dir;
  plan.base_dirs = {dir};
  plan.directories = {dir / "out"};
  fs::create_directories(dir / "out");
  for (size_t i = 0; i < n; ++i) {
    const std::string name = std::to_string(i);
    std::ofstream(dir / (name + ".c")) << "int f" << name << "(void) { return " << name << "; }\n";
    plan::Job j;
    j.kind = plan::JobKind::HostCompile;
    j.source = dir / (name + ".c");
    j.inputs = {j.source};
    j.outputs = {dir / "out" / (name + ".o")};
    j.argv = {"/bin/cp", name + ".c", "out/" + name + ".o"};
    plan.add(std::move(j));
  }
  return plan;
}

// The engine: compiler checks answered as this machine answers them, every
// other action with its outputs; the stamp each action carried, by target.
struct Engine {
  std::mutex mu;
  std::map<std::string, std::string> stamps;  // Action::target_id -> OFFLOAD_BUILD_ACTION_KEY
  size_t compiles = 0;
};

class FakeClient final : public reapi::Client {
 public:
  explicit FakeClient(Engine& e) : e_(e) {}
  bool capabilities(reapi::Capabilities& caps, std::string&) override {
    caps.exec_enabled = true;
    return true;
  }
  bool run(const reapi::Action& action, reapi::ActionResult& result, std::string& error) override {
    if (action.mnemonic == "compiler-check") {
      auto local = process::capture(process::Command{action.argv, {}, {}}, 30000);
      if (!local) return error = "cannot run " + action.argv[0], false;
      result.exit_code = local->exit_code;
      result.stdout_text = local->out;
      return true;
    }
    std::lock_guard lock(e_.mu);
    ++e_.compiles;
    for (const auto& [name, value] : action.env)
      if (name == "OFFLOAD_BUILD_ACTION_KEY") e_.stamps[action.target_id] = value;
    for (const auto& out : action.output_files) result.outputs.push_back({out, "remote " + out, false});
    return true;
  }
  void cancel() override {}

 private:
  Engine& e_;
};

std::unique_ptr<exec::RemoteRunner> fake_remote(Engine& engine, exec::EngineRegistry& registry,
                                                const plan::Plan& plan) {
  exec::EngineScheme scheme;
  scheme.prefix = "fake://";
  scheme.usage = "fake://NAME";
  scheme.parse_address = [](std::string_view rest, reapi::Endpoint& endpoint) -> std::optional<std::string> {
    endpoint.target = std::string(rest);
    return std::nullopt;
  };
  scheme.open = [&engine](const reapi::Endpoint&) -> Result<std::unique_ptr<reapi::Client>> {
    return std::unique_ptr<reapi::Client>(new FakeClient(engine));
  };
  registry.add({scheme});
  auto config = exec::parse_remote_execution("fake://pool|jobs=2", registry);
  REQUIRE(config);
  exec::RemoteRunnerSetup setup;
  setup.config = *config;
  setup.plan = &plan;
  auto runner = exec::make_remote_runner(std::move(setup));
  REQUIRE(runner);
  REQUIRE(*runner);
  return std::move(*runner);
}

// The stamp each job's action must carry: its key as the local cache defines it.
std::map<std::string, std::string> expected_stamps(const plan::Plan& plan) {
  cache::FileFactsCache files(cache::project_dirs(plan));
  std::map<std::string, std::string> out;
  for (const auto& job : plan.jobs)
    out[job.describe(plan.cwd)] =
        cache::action_key(plan, job, cache::describe_job(plan, job), {job.inputs[0]}, files, false).stamp;
  return out;
}

}  // namespace

TEST_CASE("a job's key is computed once per build: by the job cache, and the engine's action carries it",
          "[job-keys]") {
  test::TempDir tmp;
  const plan::Plan plan = compile_plan(tmp.path() / "p", 3);
  storage::Storage local(tmp.path() / "cache");
  storage::LayeredStorage layers(local, {});
  Engine engine;
  exec::EngineRegistry registry;
  auto remote = fake_remote(engine, registry, plan);

  auto build = [&](exec::CommandRunner& runner) {
    cache::JobCacheOptions options;
    options.keep_build_state = false;  // every build asks the storage
    cache::JobCache job_cache(layers, plan, options);
    exec::ExecOptions exec_options;
    exec_options.parallelism = 2;
    exec_options.lookups = 1;
    job_cache.attach(exec_options);
    CHECK(exec_options.keys == &job_cache);
    const size_t before = cache::describe_job_count();
    auto summary = exec::execute(plan, runner, exec_options);
    REQUIRE(summary);
    const size_t described = cache::describe_job_count() - before;
    job_cache.finish();
    return std::pair{*summary, described};
  };

  // Cold: each job looked up (a miss), sent to the engine, stored: one key each.
  auto [cold, described] = build(*remote);
  CHECK(cold.jobs_run == 3);
  CHECK(remote->counts().remote == 3);
  CHECK(described == 3);
  {
    std::ifstream in(plan.jobs[0].outputs[0]);
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}).rfind("remote ", 0) == 0);
  }
  // The stamp sent is the key the local cache defines (not a weaker one).
  CHECK(engine.stamps == expected_stamps(plan));

  // Warm: every job a hit, nothing sent, and still one key each.
  test::FakeRunner nothing;
  auto [warm, warm_described] = build(nothing);
  CHECK(warm.jobs_served == 3);
  CHECK(nothing.started.empty());
  CHECK(warm_described == 3);
  CHECK(engine.compiles == 3);
}

TEST_CASE("without a job cache the remote runner's keys are computed once per job", "[job-keys]") {
  test::TempDir tmp;
  const plan::Plan plan = compile_plan(tmp.path() / "p", 4);
  Engine engine;
  exec::EngineRegistry registry;
  auto remote = fake_remote(engine, registry, plan);
  cache::JobKeyTable keys(plan, {}, false);
  exec::ExecOptions options;
  options.parallelism = 3;
  options.keys = &keys;
  const size_t before = cache::describe_job_count();
  auto summary = exec::execute(plan, *remote, options);
  REQUIRE(summary);
  CHECK(summary->jobs_run == 4);
  CHECK(remote->counts().remote == 4);
  CHECK(cache::describe_job_count() - before == 4);
  // Asked again (direct, first entry, action key): still once each.
  for (const auto& job : plan.jobs) {
    CHECK(keys.direct(job));
    CHECK(keys.first_entry(job));
  }
  CHECK(cache::describe_job_count() - before == 4);
  CHECK(engine.stamps == expected_stamps(plan));
}

TEST_CASE("a runner given no keys sends nothing (its action would be keyed more weakly than its entry)",
          "[job-keys]") {
  test::TempDir tmp;
  const plan::Plan plan = compile_plan(tmp.path() / "p", 2);
  Engine engine;
  exec::EngineRegistry registry;
  auto remote = fake_remote(engine, registry, plan);
  exec::ExecOptions options;
  auto summary = exec::execute(plan, *remote, options);
  REQUIRE(summary);
  CHECK(summary->jobs_run == 2);
  CHECK(engine.compiles == 0);
  CHECK(remote->counts().local == 2);
  const auto note = remote->note(plan.jobs[0].id);
  REQUIRE(note);
  CHECK(note->why.find("no key") != std::string::npos);
}
