// The job cache's lookups through the executor, several at once: a build
// served entirely from a remote (a slow in-process fake, a private
// redis-server) gives the same outputs as the build that ran, with remote
// gets proved to overlap by a latch. The [.bench] case measures what a
// remote's latency costs with one lookup at a time and with the default.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "offload_build/cache/job_cache.hpp"
#include "support/fake_runner.hpp"
#include "support/latch.hpp"
#include "support/servers.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::cache;
using namespace ob::storage;

namespace {

// `n` cacheable jobs, each reading its own source and writing one object.
plan::Plan object_plan(const fs::path& dir, size_t n) {
  plan::Plan plan;
  plan.cwd = dir;
  plan.build_dir = dir / "out";
  plan.program = dir / "out/prog";
  plan.name_anchor = dir;
  plan.base_dirs = {dir};
  plan.directories = {dir / "out"};
  fs::create_directories(dir);
  for (size_t i = 0; i < n; ++i) {
    const std::string name = std::to_string(i);
    std::ofstream(dir / (name + ".c")) << "int f" << name << "(void) { return " << name << "; }\n";
    plan::Job j;
    j.kind = plan::JobKind::HostCompile;
    j.source = dir / (name + ".c");
    j.inputs = {j.source};
    j.outputs = {dir / "out" / (name + ".o")};
    j.argv = {"/bin/true", "-c", name + ".c", "-o", "out/" + name + ".o"};
    plan.add(std::move(j));
  }
  return plan;
}

std::map<std::string, std::string> outputs_of(const plan::Plan& plan) {
  std::map<std::string, std::string> out;
  for (const auto& job : plan.jobs) {
    std::ifstream in(job.outputs[0], std::ios::binary);
    out[job.outputs[0].filename()] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return out;
}

struct Built {
  exec::ExecSummary summary;
  std::vector<plan::JobId> ran;
  Counters counters;
  std::map<std::string, RemoteCounters> remotes;
};

// One build with the job cache over `cache_dir` and `remote`, as the CLI wires it.
Built build(const plan::Plan& plan, const fs::path& cache_dir, const RemoteConfig& remote,
            const BackendFactory& factory, size_t lookups) {
  std::error_code ec;
  fs::remove_all(plan.build_dir, ec);
  Storage local(cache_dir);
  LayeredOptions options;
  options.factory = factory;
  options.warning_fd = -1;
  LayeredStorage layers(local, {remote}, options);
  JobCacheOptions cache_options;
  cache_options.keep_build_state = false;  // every build asks the storage
  JobCache cache(layers, plan, cache_options);
  test::FakeRunner runner;
  exec::ExecOptions exec_options;
  exec_options.parallelism = 2;
  exec_options.lookups = lookups;
  cache.attach(exec_options);
  auto summary = exec::execute(plan, runner, exec_options);
  REQUIRE(summary.ok());
  Built b{*summary, runner.started, cache.counters(), {}};
  layers.finish_uploads();
  b.remotes = layers.remote_counters();  // before finish() records (and resets) them
  cache.finish();
  return b;
}

RemoteConfig remote_url(const std::string& url) {
  auto r = parse_remote_url(url);
  REQUIRE(r);
  return *r;
}

// An in-memory server answering each get after `latency`; with a latch,
// each get also waits for others to be in flight at once.
struct SlowServer {
  std::mutex mu;
  std::map<std::string, std::string> values;
  std::chrono::milliseconds latency{0};
  test::OverlapLatch* latch = nullptr;
};

class SlowBackend final : public RemoteBackend {
 public:
  explicit SlowBackend(SlowServer& s) : s_(s) {}
  RemoteResult<std::optional<std::string>> get(std::string_view kind, std::string_view key) override {
    std::this_thread::sleep_for(s_.latency);
    if (s_.latch) s_.latch->arrive_and_wait();
    std::lock_guard lock(s_.mu);
    auto it = s_.values.find(redis_key(kind, key));
    if (it == s_.values.end()) return std::optional<std::string>{};
    return std::optional<std::string>{it->second};
  }
  RemoteResult<bool> put(std::string_view kind, std::string_view key, std::string_view value, bool) override {
    std::lock_guard lock(s_.mu);
    s_.values[redis_key(kind, key)] = std::string(value);
    return true;
  }
  RemoteResult<bool> remove(std::string_view kind, std::string_view key) override {
    std::lock_guard lock(s_.mu);
    return s_.values.erase(redis_key(kind, key)) > 0;
  }

 private:
  SlowServer& s_;
};

// A remote on the SlowServer, as a build configures it.
struct SlowRemote {
  SlowServer server;
  BackendFactory factory = [this](const RemoteConfig&) { return std::make_unique<SlowBackend>(server); };
  RemoteConfig config = remote_url("redis://127.0.0.1:1|allow-unsigned");
};

double seconds(const std::function<void()>& f) {
  const auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("a build served entirely from a remote, its gets in flight at once, gives the same outputs",
          "[cache][lookups][remote]") {
  test::TempDir tmp("ob-lookups");
  const size_t n = 12;
  plan::Plan plan = object_plan(tmp / "project", n);
  SlowRemote slow;

  Built cold = build(plan, tmp / "cache1", slow.config, slow.factory, 0);
  CHECK(cold.ran.size() == n);
  CHECK(cold.counters.stores == n);
  const auto ran = outputs_of(plan);
  REQUIRE(ran.size() == n);

  // An empty local cache: every job from the remote, 8 of its gets at once.
  test::OverlapLatch latch(8);
  slow.server.latch = &latch;
  Built warm = build(plan, tmp / "cache2", slow.config, slow.factory, 0);
  slow.server.latch = nullptr;
  CHECK_FALSE(latch.gave_up());
  CHECK(latch.peak() >= 8);
  CHECK(warm.ran.empty());
  CHECK(warm.summary.jobs_served == n);
  CHECK(warm.counters.hits == n);
  CHECK(warm.remotes.begin()->second.hits == n);
  CHECK(outputs_of(plan) == ran);  // byte for byte
}

TEST_CASE("a build served entirely from a private redis-server gives the same outputs",
          "[cache][lookups][remote][redis]") {
  if (!fs::exists("/usr/bin/redis-server")) OB_SKIP("redis-server is not installed");
  test::TempDir tmp("ob-lookups-redis");
  test::RedisServer server(tmp / "redis", {false, ""});  // starts redis-server (a subprocess)
  const size_t n = 24;
  plan::Plan plan = object_plan(tmp / "project", n);
  const RemoteConfig remote =
      remote_url(fmt::format("redis://127.0.0.1:{}|allow-unsigned", server.port()));
  Built cold = build(plan, tmp / "cache1", remote, make_remote_backend, 0);
  CHECK(cold.ran.size() == n);
  CHECK(cold.remotes.begin()->second.uploads >= n);
  const auto ran = outputs_of(plan);
  for (size_t lookups : {size_t{0}, size_t{1}}) {
    DYNAMIC_SECTION("lookups " << lookups) {
      Built warm = build(plan, tmp / fmt::format("cache-warm-{}", lookups), remote, make_remote_backend,
                         lookups);
      CHECK(warm.ran.empty());
      CHECK(warm.summary.jobs_served == n);
      CHECK(warm.remotes.begin()->second.hits == n);
      CHECK(warm.remotes.begin()->second.errors == 0);
      CHECK(outputs_of(plan) == ran);
    }
  }
}

// Figures for the report, not a test: ob_unit_tests "[lookups-bench]".
TEST_CASE("what a remote's latency costs a build served from it", "[.][lookups-bench]") {
  test::TempDir tmp("ob-lookups-bench");
  const size_t n = 32;
  plan::Plan plan = object_plan(tmp / "project", n);
  SlowRemote slow;
  build(plan, tmp / "cache-cold", slow.config, slow.factory, 0);
  for (int ms : {5, 20, 50}) {
    slow.server.latency = std::chrono::milliseconds(ms);
    for (size_t lookups : {size_t{1}, size_t{4}, size_t{0}}) {
      Built warm;
      const double s = seconds([&] {
        const fs::path cache = tmp / fmt::format("cache-{}-{}", ms, lookups);
        warm = build(plan, cache, slow.config, slow.factory, lookups);
      });
      CHECK(warm.summary.jobs_served == n);
      std::cout << fmt::format("{} jobs, remote latency {:>2} ms, lookups {:>2}: {:6.0f} ms\n", n, ms,
                               lookups ? lookups : std::max<size_t>(2, exec::kDefaultLookups), s * 1000);
    }
  }
}
