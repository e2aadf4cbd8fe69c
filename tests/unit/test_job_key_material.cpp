// Job::key_material: a planner's word on what decides a job's outputs (the
// cargo flow's device pass) keys the job instead of its tools, argv and
// environment, which name one machine's paths.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "offload_build/cache/job_key.hpp"
#include "offload_build/toolchain/program_identity.hpp"

using namespace ob;

TEST_CASE("a job's key material keys it instead of its tools, argv and environment", "[cache]") {
  auto device_job = [](const std::string& home, const std::string& material) {
    plan::Plan plan;
    plan.cwd = home + "/app";
    plan::Job job;
    job.kind = plan::JobKind::DeviceCompile;
    job.target = manifest::Target{"x86_64-unknown-linux-gnu", "generic"};
    job.argv = {home + "/.cargo/bin/cargo", "rustc", "--target-dir", home + "/target/offload-device/host/k"};
    job.env = {{"RUSTC", home + "/.rustup/bin/rustc"}};
    job.outputs = {home + "/target/offload-device/host/k/offload/k.host.o"};
    job.key_material = material;
    cache::FileFactsCache files;
    return cache::compute_job_key(plan, job, files).direct;
  };
  // Another machine, another checkout: the same material is the same key.
  CHECK(device_job("/home/a", "m1") == device_job("/home/b/src", "m1"));
  CHECK(device_job("/home/a", "m1") != device_job("/home/a", "m2"));  // an edit in the crates
  auto without = [](const std::string& home) {
    plan::Plan plan;
    plan.cwd = home;
    plan::Job job;
    job.kind = plan::JobKind::DeviceCompile;
    job.argv = {home + "/cargo", "rustc"};
    cache::FileFactsCache files;
    return cache::compute_job_key(plan, job, files).direct;
  };
  CHECK(without("/home/a") != without("/home/b"));  // without it, argv and the tool's place count
}

// What a remote action holds besides its files (cache::action_key): the
// identities of the system files the job reads, the time-macro rule; and the
// local key says what -march=native means here.
TEST_CASE("a remote action's key holds the system files read and the time-macro rule", "[cache][remote-execution]") {
  const fs::path dir = fs::temp_directory_path() / ("ob-action-key-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "p");
  fs::create_directories(dir / "sys");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(dir / "p/k.c", "#include <h.h>\nint k(void) { return V; }\n");
  write(dir / "p/t.c", "const char* t = __TIME__;\n");
  write(dir / "sys/h.h", "#define V 1\n");
  plan::Plan plan;
  plan.cwd = dir / "p";
  plan.build_dir = dir / "p/build";
  plan::Job job;
  job.kind = plan::JobKind::HostIr;
  job.argv = {"/bin/true", "-c", "k.c"};
  auto key = [&](const std::vector<fs::path>& reads, bool allow_time_macros = false) {
    cache::FileFactsCache files({plan.cwd, plan.build_dir}, {dir / "sys"});
    return cache::action_key(plan, job, cache::describe_job(plan, job), reads, files, allow_time_macros);
  };
  const auto before = key({dir / "p/k.c", dir / "sys/h.h"});
  CHECK_FALSE(before.do_not_cache);
  CHECK(key({dir / "p/k.c", dir / "sys/h.h"}).stamp == before.stamp);
  // A project file travels by digest: not in the stamp. A system file does not: it is.
  write(dir / "p/k.c", "#include <h.h>\nint k(void) { return V + 0; }\n");
  CHECK(key({dir / "p/k.c", dir / "sys/h.h"}).stamp == before.stamp);
  write(dir / "sys/h.h", "#define V 22\n");
  CHECK(key({dir / "p/k.c", dir / "sys/h.h"}).stamp != before.stamp);
  // __TIME__: never from nor into the engine's cache, unless allowed.
  CHECK(key({dir / "p/t.c"}).do_not_cache);
  CHECK_FALSE(key({dir / "p/t.c"}, true).do_not_cache);
  fs::remove_all(dir);
}

TEST_CASE("a -march=native compile is keyed by what native means on this machine", "[cache]") {
  plan::Plan plan;
  plan.cwd = "/p";
  plan::Job job;
  job.kind = plan::JobKind::HostCompile;
  job.argv = {"/bin/true", "-O2", "-march=native", "-c", "k.c"};
  const auto key = cache::describe_job(plan, job);
  CHECK(std::find(key.env.begin(), key.env.end(), "native: " + toolchain::native_cpu()) != key.env.end());
  job.argv = {"/bin/true", "-O2", "-march=x86-64-v3", "-c", "k.c"};
  const auto plain = cache::describe_job(plan, job);
  CHECK(std::none_of(plain.env.begin(), plain.env.end(), [](const std::string& e) { return e.starts_with("native: "); }));
}
