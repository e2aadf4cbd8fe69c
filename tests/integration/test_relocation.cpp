// A checkout at another path (issue #21): two checkouts with the same layout
// at different depths, /X/a/proj and /X/b/c/proj, built one after the other
// with one cache. With a common-parent base_dir (ccache users' setting), and
// with nothing set at all (the CMake package passes its source and build
// trees; a manifest build knows its project directory), the second checkout
// is served every job, its program is the first one byte for byte, and it
// runs on the host device. Where only the paths stop a hit, --explain says so.
#include <catch2/catch.hpp>

#include "support/cache_stats.hpp"

#include <nlohmann/json.hpp>

#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// examples/cmake-project: 4 offload TUs x (host parse, host device pass,
// package, host codegen), and the program's offload link (LINKER_LAUNCHER).
constexpr int kCmakeJobs = 4 * 4 + 1;
// examples/vector-cxx: 3 TUs x 4 jobs, and the link.
constexpr int kManifestJobs = 3 * 4 + 1;

const Env kMandatory{{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"}};

struct Checkouts {
  TempDir tmp{"ob-reloc"};
  fs::path x = tmp / "x";
  fs::path cache = tmp / "cache";
  fs::path prefix = tmp / "prefix";
  // The two checkouts' roots: the same layout below them, different depths.
  fs::path roots[2] = {x / "a", x / "b/c"};
  Env env;

  explicit Checkouts(std::optional<fs::path> base_dir) {
    env = {{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}, {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
           {"OFFLOAD_BUILD_EXPLAIN", std::nullopt},     {"OFFLOAD_BUILD_DISABLE", std::nullopt},
           {"MAKEFLAGS", std::nullopt},                 {"CMAKE_GENERATOR", std::nullopt},
           {"OFFLOAD_BUILD_BASE_DIR", base_dir ? std::optional(base_dir->string()) : std::nullopt}};
  }
  nlohmann::json stats() { return cache_stats(cache); }
  // Runs `command`; returns the change of the cache's hits and misses.
  std::pair<int, int> counted(const std::vector<std::string>& command, const fs::path& cwd = {}) {
    auto before = stats();
    auto r = run_tool(command, cwd, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto after = stats();
    return {after["hits"].get<int>() - before["hits"].get<int>(),
            after["misses"].get<int>() - before["misses"].get<int>()};
  }
  void install() {
    auto r = run_tool({"cmake", "--install", fs::path(OB_BINARY).parent_path().string(), "--prefix",
                       prefix.string()});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  }
  // Configure and build examples/cmake-project checked out at roots[i]/proj
  // into `build` (relative to roots[i]) with Ninja.
  std::pair<int, int> cmake_build(int i, const std::string& build) {
    const fs::path src = roots[i] / "cmake-project";
    if (!fs::exists(src)) copy_example("cmake-project", roots[i]);
    auto c = run_tool({"cmake", "-S", src.string(), "-B", (roots[i] / build).string(), "-G", "Ninja",
                       "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + prefix.string(),
                       "-DCMAKE_TOOLCHAIN_FILE=" +
                           (prefix / "share/offload-build/templates/clang22-offload-toolchain.cmake").string()},
                      {}, env);
    INFO(c.out << c.err);
    REQUIRE(c.exit_code == 0);
    return counted({"cmake", "--build", (roots[i] / build).string()});
  }
  std::pair<int, int> manifest_build(int i) {
    const fs::path dir = roots[i] / "vector-cxx";
    if (!fs::exists(dir)) copy_example("vector-cxx", roots[i]);
    return counted({OB_BINARY, "-C", dir.string(), "build"});
  }
  static void runs(const fs::path& program, const std::string& expected) {
    auto r = run_tool({program.string()}, program.parent_path(), kMandatory);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains(expected));
    CHECK(count_occurrences(r.err, "Launching kernel __omp_offloading_b5d") >= 1);
  }
};

// Builds both checkouts with the CMake package, the build tree at `build`
// (relative to each checkout's root): the second is served every job.
void cmake_second_checkout_hits(Checkouts& c, const std::string& build) {
  c.install();
  CHECK(c.cmake_build(0, build) == std::pair{0, kCmakeJobs});
  CHECK(c.cmake_build(1, build) == std::pair{kCmakeJobs, 0});
  const fs::path programs[2] = {c.roots[0] / build / "vecdemo", c.roots[1] / build / "vecdemo"};
  CHECK(read_file(programs[0]) == read_file(programs[1]));
  for (const auto& p : programs) Checkouts::runs(p, "bad=0 OK");
}

void manifest_second_checkout_hits(Checkouts& c) {
  CHECK(c.manifest_build(0) == std::pair{0, kManifestJobs});
  CHECK(c.manifest_build(1) == std::pair{kManifestJobs, 0});
  const fs::path programs[2] = {c.roots[0] / "vector-cxx/build/vector", c.roots[1] / "vector-cxx/build/vector"};
  CHECK(read_file(programs[0]) == read_file(programs[1]));
  for (const auto& p : programs) Checkouts::runs(p, "vector-cxx: all OK");
}

}  // namespace

TEST_CASE("a common-parent base_dir serves a checkout at another depth every job",
          "[integration][relocation][cmake]") {
  Checkouts c{std::nullopt};
  c.env.back() = {"OFFLOAD_BUILD_BASE_DIR", c.x.string()};  // the parent of both checkouts
  SECTION("CMake package, the build tree inside the checkout") { cmake_second_checkout_hits(c, "cmake-project/build"); }
  SECTION("CMake package, the build tree beside the checkout") { cmake_second_checkout_hits(c, "build-cmake"); }
  SECTION("manifest project") { manifest_second_checkout_hits(c); }
}

TEST_CASE("zero configuration: a fresh checkout elsewhere is served every job with no base_dir",
          "[integration][relocation][cmake]") {
  Checkouts c{std::nullopt};
  SECTION("CMake package, the build tree inside the checkout") { cmake_second_checkout_hits(c, "cmake-project/build"); }
  SECTION("CMake package, the build tree beside the checkout") { cmake_second_checkout_hits(c, "build-cmake"); }
  SECTION("manifest project") { manifest_second_checkout_hits(c); }
}

TEST_CASE("zero configuration: the CMake toolchain file alone serves a checkout elsewhere every job",
          "[integration][relocation][cmake]") {
  // No package: the offload flags in CMAKE_C_FLAGS, the launcher from the
  // toolchain file (which passes the source and build trees too).
  Checkouts c{std::nullopt};
  c.install();
  std::string programs[2];
  for (int i = 0; i < 2; ++i) {
    const fs::path src = c.roots[i] / "p", build = src / "build";
    fs::create_directories(src / "src");
    fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", src / "src/saxpy.c");
    write_file(src / "CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.21)\nproject(plain C)\n"
               "set(CMAKE_C_FLAGS \"-fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu\")\n"
               "set(CMAKE_EXE_LINKER_FLAGS \"-fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu\")\n"
               "add_executable(saxpy src/saxpy.c)\ntarget_link_libraries(saxpy m)\n");
    auto r = run_tool({"cmake", "-S", src.string(), "-B", build.string(), "-G", "Ninja",
                       "-DCMAKE_TOOLCHAIN_FILE=" +
                           (c.prefix / "share/offload-build/templates/clang22-offload-toolchain.cmake").string()},
                      {}, c.env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    // host parse, host device pass, package, host codegen; the link.
    CHECK(c.counted({"cmake", "--build", build.string()}) == (i == 0 ? std::pair{0, 5} : std::pair{5, 0}));
    Checkouts::runs(build / "saxpy", "max_err=0 OK");
    programs[i] = read_file(build / "saxpy");
  }
  CHECK(programs[0] == programs[1]);
}

TEST_CASE("explain: a miss caused only by the place of the checkout names the path and what to set",
          "[integration][relocation][launcher]") {
  // The launcher alone (no CMake package, no base_dir), given absolute paths
  // as CMake writes them: the second checkout's compile misses, and says why.
  Checkouts c{std::nullopt};
  c.env.push_back({"OFFLOAD_BUILD_EXPLAIN", "1"});
  std::string explained;
  for (int i = 0; i < 2; ++i) {
    const fs::path proj = c.roots[i] / "proj";
    fs::create_directories(proj / "build");
    fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", proj / "saxpy.c");
    auto r = run_ob({"/usr/bin/clang-22", "-O2", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c",
                     (proj / "saxpy.c").string(), "-o", "saxpy.o"},
                    proj / "build", c.env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    if (i == 0) CHECK_THAT(r.err, !Catch::Contains("only its place differs"));
    if (i == 1) explained = r.err;
  }
  INFO(explained);
  const std::string here = (c.roots[1] / "proj/saxpy.c").string(), there = (c.roots[0] / "proj/saxpy.c").string();
  // The first job of the compile (the host parse reads the source itself).
  CHECK_THAT(explained, Catch::Contains("host-ir ") &&
                            Catch::Contains(": miss: only its place differs: the same job was built in " +
                                            (c.roots[0] / "proj/build").string()) &&
                            Catch::Contains("(" + here + " here, " + there + " there)") &&
                            Catch::Contains("--base-dir " + c.x.string()));
  // The jobs that read its outputs (device pass, package, host pass) say where it comes from.
  CHECK(count_occurrences(explained, ": miss: only its place differs: its inputs come from host-ir ") == 3);
  CHECK_THAT(explained, !Catch::Contains("no earlier build of this job recorded"));

  // Doing what it says: every job of the compile is served.
  c.env.push_back({"OFFLOAD_BUILD_BASE_DIR", c.x.string()});
  for (int i = 0; i < 2; ++i) {
    const fs::path proj = c.roots[i] / "proj";
    auto r = run_ob({"/usr/bin/clang-22", "-O2", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c",
                     (proj / "saxpy.c").string(), "-o", "saxpy.o"},
                    proj / "build", c.env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    if (i == 1) CHECK(count_occurrences(r.err, ": hit") == 4);
  }
  CHECK(read_file(c.roots[0] / "proj/build/saxpy.o") == read_file(c.roots[1] / "proj/build/saxpy.o"));
}
