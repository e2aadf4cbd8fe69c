// Job::key_material: a planner's word on what decides a job's outputs (the
// cargo flow's device pass) keys the job instead of its tools, argv and
// environment, which name one machine's paths.
#include <catch2/catch.hpp>

#include "offload_build/cache/job_key.hpp"

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
