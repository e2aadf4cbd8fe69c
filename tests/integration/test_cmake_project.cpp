// examples/cmake-project end to end: `cmake --install` offload-build (program,
// CMake package, toolchain file), configure the example with them, build with
// Ninja, run it with OMP_TARGET_OFFLOAD=MANDATORY, then configure and build
// again in fresh build directories (Ninja, then Makefiles under make -j4):
// every offload compile is served from the cache.
#include <catch2/catch.hpp>

#include "support/cache_stats.hpp"

#include <nlohmann/json.hpp>

#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/servers.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// 4 offload TUs x (host parse, host device pass, package, host codegen), and
// the program's offload link (LINKER_LAUNCHER).
constexpr int kOffloadJobs = 4 * 4 + 1;

struct CmakeProject {
  TempDir tmp{"ob-cmake"};
  fs::path prefix = tmp / "prefix";
  fs::path cache = tmp / "cache";
  fs::path src;
  // The base directory holds the sources and the build trees.
  Env env{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}, {"OFFLOAD_BUILD_BASE_DIR", tmp.path().string()},
          {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
          {"OFFLOAD_BUILD_EXPLAIN", std::nullopt},     {"OFFLOAD_BUILD_DISABLE", std::nullopt},
          {"OFFLOAD_BUILD_NO_CACHE", std::nullopt},    {"MAKEFLAGS", std::nullopt},
          {"CMAKE_GENERATOR", std::nullopt}};

  nlohmann::json stats() { return cache_stats(cache); }
  void configure(const fs::path& build, const std::string& generator) {
    auto r = run_tool({"cmake", "-S", src.string(), "-B", build.string(), "-G", generator,
                       "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + prefix.string(),
                       "-DCMAKE_TOOLCHAIN_FILE=" +
                           (prefix / "share/offload-build/templates/clang22-offload-toolchain.cmake")
                               .string()},
                      {}, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  }
  // Build; returns the change of the cache's hits and misses.
  std::pair<int, int> build(const std::vector<std::string>& command) {
    auto before = stats();
    auto r = run_tool(command, {}, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto after = stats();
    return {after["hits"].get<int>() - before["hits"].get<int>(),
            after["misses"].get<int>() - before["misses"].get<int>()};
  }
  void run_program(const fs::path& build) {
    auto r = run_tool({(build / "vecdemo").string()}, build,
                      {{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"}});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "vecdemo: y[7]=15.0 dot=131072.0 out[1]=1.0 device=1 bad=0 OK\n");
    CHECK(count_occurrences(r.err, "Launching kernel __omp_offloading_") == 4);  // one per region
    // The proof the README gives for a CMake-built program.
    auto verified = run_ob({"verify", "--", (build / "vecdemo").string()}, build);
    INFO(verified.err);
    CHECK(verified.exit_code == 0);
    CHECK(verified.out == r.out);
    CHECK_THAT(verified.err, Catch::Contains("offload-build: verify: offload: 4 kernel launches on device "));
  }
  void no_work_dirs_left(const fs::path& build) {
    for (const auto& e : fs::recursive_directory_iterator(build))
      CHECK_FALSE(util::ends_with(e.path().string(), ".offload-build"));
    CHECK(temp_outputs(build).empty());
  }
};

}  // namespace

TEST_CASE("CMake project: installed package, launcher, cache across build directories and machines",
          "[launcher][cmake][integration]") {
  CmakeProject p;
  const fs::path ob_build_dir = fs::path(OB_BINARY).parent_path();
  auto install = run_tool({"cmake", "--install", ob_build_dir.string(), "--prefix", p.prefix.string()});
  INFO(install.out << install.err);
  REQUIRE(install.exit_code == 0);
  for (const char* file : {"bin/offload-build", "lib/cmake/OffloadBuild/OffloadBuildConfig.cmake",
                           "lib/cmake/OffloadBuild/OffloadBuildConfigVersion.cmake",
                           "lib/cmake/OffloadBuild/OffloadBuild.cmake",
                           "share/offload-build/templates/clang22-offload-toolchain.cmake",
                           "lib/offload-build/libob-stable-names.so"})
    CHECK(fs::exists(p.prefix / file));
  p.src = copy_example("cmake-project", p.tmp.path());
  // Remote storage through the launcher: a private Redis that step 1 fills.
  RedisServer redis(p.tmp / "redis", {false, ""});
  const std::string remote = "redis://127.0.0.1:" + std::to_string(redis.port());
  p.env.push_back({"OFFLOAD_BUILD_REMOTE_STORAGE", remote});

  // 1. Cold cache: every offload job runs (and is stored, locally and in Redis).
  const fs::path b1 = p.tmp / "build-ninja";
  p.configure(b1, "Ninja");
  auto cold = p.build({"cmake", "--build", b1.string()});
  CHECK(cold == std::pair{0, kOffloadJobs});
  p.run_program(b1);
  p.no_work_dirs_left(b1);
  auto commands = run_tool({"ninja", "-C", b1.string(), "-t", "commands", "vecdemo"});
  // 4 compiles and the program's link.
  CHECK(count_occurrences(commands.out, (p.prefix / "bin/offload-build").string() + " ") == 5);

  // 2. A fresh build directory on another machine (an empty local cache):
  // every offload compile and the link are served from Redis, and kept
  // locally: no compiler and no linker runs.
  p.cache = p.tmp / "cache-2";
  p.env.front() = {"OFFLOAD_BUILD_CACHE_DIR", p.cache.string()};
  const fs::path b2 = p.tmp / "build-ninja-2";
  p.configure(b2, "Ninja");
  CHECK(p.build({"cmake", "--build", b2.string()}) == std::pair{kOffloadJobs, 0});
  // Each compile from its whole entry, the link from its own: their manifest and result.
  CHECK(p.stats()["remotes"][remote]["hits"].get<int>() == 2 * 5);
  CHECK(p.stats()["whole_compiles"].get<int>() == 4);
  p.run_program(b2);
  p.no_work_dirs_left(b2);
  const std::string obj = "CMakeFiles/vecops.dir/src/saxpy.cpp.o";
  CHECK(read_file(b2 / obj) == read_file(b1 / obj));
  // The depfile came back with the object: ninja recorded the header, and is done.
  auto deps = run_tool({"ninja", "-C", b2.string(), "-t", "deps", obj});
  CHECK_THAT(deps.out, Catch::Contains("include/vecops.hpp"));
  CHECK_THAT(run_tool({"ninja", "-C", b2.string(), "-n"}).out, Catch::Contains("no work to do"));

  // 3. Makefiles under make -j4 (the jobserver): the same argv, the same hits.
  const fs::path b3 = p.tmp / "build-make";
  p.configure(b3, "Unix Makefiles");
  CHECK(p.build({"make", "-C", b3.string(), "-j4"}) == std::pair{kOffloadJobs, 0});
  p.run_program(b3);
  p.no_work_dirs_left(b3);

  // 4. A third machine (an empty local cache) with a checkout at another
  // path, configured into its own build directory, with its own base
  // directory: every job is served from Redis, and the program is the first
  // one byte for byte.
  p.cache = p.tmp / "cache-3";
  p.env.front() = {"OFFLOAD_BUILD_CACHE_DIR", p.cache.string()};
  const fs::path other = p.tmp / "elsewhere/deeper";
  fs::create_directories(other);
  fs::copy(p.src, other / p.src.filename(), fs::copy_options::recursive);
  p.src = other / p.src.filename();
  p.env[1] = {"OFFLOAD_BUILD_BASE_DIR", other.string()};
  const fs::path b4 = other / "build-ninja";
  p.configure(b4, "Ninja");
  CHECK(p.build({"cmake", "--build", b4.string()}) == std::pair{kOffloadJobs, 0});
  p.run_program(b4);
  CHECK(read_file(b4 / "vecdemo") == read_file(b1 / "vecdemo"));
}
