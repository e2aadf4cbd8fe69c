// Remote execution (docs/DISTRIBUTED.md) against a real engine: Bazel's REAPI
// reference worker, built from Debian packages by
// tests/support/reapi-worker/build.sh, started on 127.0.0.1 with a free port
// and private work and CAS directories, in a mount namespace where the
// project's directory is an empty tmpfs (a job that reads a file it did not
// declare fails instead of reading it through the shared disk), stopped by
// its PID. A manifest build of examples/vector-cxx runs every device pass,
// host parse and host codegen on the worker (the worker keeps one directory
// per execution: its count and ours), the program runs offloaded, the
// objects equal a local build's; a fresh build with an empty local cache is
// served by the engine's action cache; a worker killed mid-build and a server
// that never answers cost one warning each and the build passes.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <cstdio>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/llvm_prefix.hpp"
#include "support/ob_process.hpp"
#include "support/reapi_build.hpp"
#include "support/servers.hpp"
#include "support/skip.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// wait_until with a bound in seconds (a JVM starts in seconds on a busy machine):
// readiness, not a timing assertion.
template <class F>
bool wait_for(F ready, const ServerProcess& process, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (ready()) return true;
    if (!process.running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The worker's jar, built once per test process.
const fs::path& worker_jar_dir() {
  static const TempDir dir("ob-reapi-worker");
  static bool built = false;
  if (!built) {
    auto r = run_tool({"/bin/bash", (fs::path(OB_SOURCE_DIR) / "tests/support/reapi-worker/build.sh").string(),
                       dir.path().string()},
                      {}, {{"NO_SANDBOX", "1"}});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    built = true;
  }
  return dir.path();
}

// Bazel's worker on 127.0.0.1 and a free port, `hidden` an empty tmpfs in its
// mount namespace, --debug keeping each execution's directory (counted).
struct Worker {
  int port = free_port();
  fs::path work, cas, log;
  ServerProcess process;
  Worker(const fs::path& dir, const fs::path& hidden) : work(dir / "work"), cas(dir / "cas"), log(dir / "worker.log") {
    fs::create_directories(work);
    fs::create_directories(cas);
    const fs::path jars = worker_jar_dir();
    const std::string java = "exec java -Xmx512m -cp '" + (jars / "remote-worker.jar").string() +
                             ":/usr/share/bazel/A-server.jar' com.google.devtools.build.remote.worker.RemoteWorker"
                             " --listen_port=" + std::to_string(port) + " --work_path='" + work.string() +
                             "' --cas_path='" + cas.string() + "' --jobs=2 --debug";
    // unshare and sh exec: the process is the JVM itself, so stop(SIGKILL) kills the worker.
    process = ServerProcess({"/usr/bin/unshare", "-m", "/bin/sh", "-c",
                             "mount -t tmpfs tmpfs '" + hidden.string() + "' && " + java},
                            log);
    if (!wait_for([&] { return can_connect_tcp(port); }, process, 120))
      throw std::runtime_error("the REAPI worker did not start; see " + log.string());
  }
  std::string url(const std::string& attributes = "") const {
    return "grpc://127.0.0.1:" + std::to_string(port) + attributes;
  }
  // Actions it executed (each leaves a build-* directory under --debug).
  size_t executions() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(work)) n += e.path().filename().string().starts_with("build-");
    return n;
  }
  // Of those, the compiles: an input root (a compiler check has none, only
  // the worker's stdout-* file).
  size_t compiles() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(work)) {
      if (!e.path().filename().string().starts_with("build-")) continue;
      bool inputs = false;
      for (const auto& f : fs::directory_iterator(e.path()))
        inputs |= !f.path().filename().string().starts_with("stdout-") &&
                  !f.path().filename().string().starts_with("stderr-");
      n += inputs;
    }
    return n;
  }
};

// examples/vector-cxx's manifest as a CMake project, compiled through the
// launcher (CMAKE_CXX_COMPILER_LAUNCHER) by make -j2.
void write_cmake_lists(const fs::path& project) {
  write_file(project / "CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.20)\n"
             "project(vector_cxx CXX)\n"
             "add_executable(vector src/axpy.cpp src/main.cpp src/reduce.cpp)\n"
             "target_include_directories(vector PRIVATE include)\n"
             "target_compile_definitions(vector PRIVATE VEC_N=100000)\n"
             "target_compile_options(vector PRIVATE -O2 -std=c++17 -fopenmp "
             "-fopenmp-targets=x86_64-unknown-linux-gnu)\n"
             "target_link_options(vector PRIVATE -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu)\n");
}

// `more`: the environment of the build step only (not CMake's configure).
process::Captured cmake_build(const fs::path& project, const fs::path& cache, const std::string& remote,
                           const Env& more = {}) {
  const fs::path build = project / "build";
  Env env{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()},
          {"OFFLOAD_BUILD_REMOTE_EXECUTION", remote.empty() ? std::nullopt : std::optional(remote)},
          {"OFFLOAD_BUILD_CONFIG", std::nullopt}, {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt},
          {"OFFLOAD_BUILD_VERBOSE", std::nullopt}, {"OFFLOAD_BUILD_EXPLAIN", std::nullopt},
          // Kernel names relative to the project (the CMake package passes
          // its directories; a bare CMAKE_CXX_COMPILER_LAUNCHER sets base_dir).
          {"OFFLOAD_BUILD_BASE_DIR", project.string()}, {"MAKEFLAGS", std::nullopt}};
  auto conf = run_tool({"cmake", "-S", project.string(), "-B", build.string(), "-G", "Unix Makefiles",
                        "-DCMAKE_CXX_COMPILER=/usr/bin/clang++-22", "-DCMAKE_CXX_COMPILER_LAUNCHER=" + std::string(OB_BINARY)},
                       project, env);
  if (conf.exit_code != 0) return conf;
  env.insert(env.end(), more.begin(), more.end());
  return run_tool({"cmake", "--build", build.string(), "-j2"}, project, env);
}

std::map<std::string, std::string> cmake_objects(const fs::path& build) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(build / "CMakeFiles/vector.dir"))
    if (e.path().extension() == ".o") out[fs::relative(e.path(), build).string()] = read_file(e.path());
  return out;
}

bool can_hide() {
  return ::geteuid() == 0 && run_tool({"/usr/bin/unshare", "-m", "/bin/true"}).exit_code == 0;
}

}  // namespace

TEST_CASE("remote execution: vector-cxx's compiles run on Bazel's worker, byte-identical, then from its cache",
          "[integration][remote-execution]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  REQUIRE(fs::exists(fs::path(OB_BINARY).parent_path() / "libob-remote-execution.so"));
  TempDir tmp("ob-reapi");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  // The reference: the same checkout built here.
  const auto expected = local_reference(project, tmp / "cache-local");
  REQUIRE(expected.size() == 12);  // 3 TUs: host IR, device object, package, host object

  Worker worker(tmp / "worker", project);
  auto r = build(project, tmp / "cache-1", {"--remote-execution", worker.url()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // 3 device passes, 3 host parses, 3 host codegens; packages and the link stay here.
  CHECK_THAT(r.err, Catch::Contains("remote execution: 9 executed, 0 from the engine's cache, 0 run locally "
                                    "after all, 4 local"));
  CHECK(worker.executions() == 10);  // and one compiler check (clang and clang++ are one binary here)
  // The device passes' and host parses' scans by clang-scan-deps, in batches.
  CHECK_THAT(r.err, Catch::Contains("; 6 dependency scans in"));
  CHECK(r.err.find("warning") == std::string::npos);
  CHECK(objects(project / "build") == expected);
  auto run = run_tool({(project / "build/vector").string()}, project, kMandatory);
  CHECK(run.exit_code == 0);
  CHECK(run.out == kExpected);

  // A fresh build with an empty local cache: the engine holds every entry
  // of the local cache (engine_storage), the packages' and the link's too:
  // nothing runs anywhere, not even a compiler check.
  fs::remove_all(project / "build");
  auto again = build(project, tmp / "cache-2", {"--remote-execution", worker.url()});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK_THAT(again.err, Catch::Contains("13 jobs: 13 from cache, 0 run"));
  CHECK(worker.executions() == 10);
  CHECK(engine_layer_hits(tmp / "cache-2") >= 13);
  CHECK(objects(project / "build") == expected);
  CHECK(run_tool({(project / "build/vector").string()}, project, kMandatory).out == kExpected);

  // Without it, the engine's action cache serves every compile (only the
  // compiler check executes); the packages and the link run here.
  fs::remove_all(project / "build");
  auto own = build_project(project, tmp / "cache-3", {"--remote-execution", worker.url()},
                           {{"OFFLOAD_BUILD_ENGINE_STORAGE", "false"}});
  INFO(own.err);
  REQUIRE(own.exit_code == 0);
  CHECK_THAT(own.err, Catch::Contains("remote execution: 0 executed, 9 from the engine's cache"));
  CHECK(worker.executions() == 11);
  CHECK(objects(project / "build") == expected);
}

TEST_CASE("remote execution: a CMake launcher build of vector-cxx runs its compiles on Bazel's worker",
          "[integration][remote-execution][launcher]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  write_cmake_lists(project);
  // The reference: the same launcher build, every compile here.
  auto local = cmake_build(project, tmp / "cache-local", "");
  INFO(local.out << local.err);
  REQUIRE(local.exit_code == 0);
  const auto expected = cmake_objects(project / "build");
  REQUIRE(expected.size() == 3);
  CHECK(stat_of(tmp / "cache-local", "remote_executions") == 0);
  fs::remove_all(project / "build");

  Worker worker(tmp / "worker", project);
  const fs::path trace = tmp / "trace.json";
  auto r = cmake_build(project, tmp / "cache-1", worker.url(),
                       {{"OFFLOAD_BUILD_EXPLAIN", "1"}, {"OFFLOAD_BUILD_TRACE", trace.string()}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  // --explain and the trace say where each job ran: each compile's device
  // pass, host parse and host codegen on the engine, its package here.
  CHECK(count_occurrences(r.err, ": executed remotely (") == 9);
  CHECK(count_occurrences(r.err, ": ran locally: a package job: remote execution sends compiles") == 3);
  size_t remote_events = 0, local_events = 0;
  const auto events = nlohmann::json::parse(read_file(trace))["traceEvents"];
  for (const auto& e : events) {
    const std::string where = e.value("args", nlohmann::json::object()).value("where", "");
    remote_events += where.starts_with("remote (");
    local_events += where == "local";
  }
  CHECK(remote_events == 9);
  CHECK(local_events == 3);
  // Each compile process sent its 3 device passes, host parses and host
  // codegens: the worker's count and ours.
  CHECK(worker.compiles() == 9);
  CHECK(stat_of(tmp / "cache-1", "remote_executions") == 9);
  CHECK(stat_of(tmp / "cache-1", "remote_fallbacks") == 0);
  CHECK(cmake_objects(project / "build") == expected);
  auto run = run_tool({(project / "build/vector").string()}, project, kMandatory);
  CHECK(run.exit_code == 0);
  CHECK(run.out == kExpected);
}

TEST_CASE("remote execution: a CMake launcher build of a fresh checkout runs no dependency scan",
          "[integration][remote-execution][launcher]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi");
  const fs::path a = copy_example("vector-cxx", tmp.path() / "checkouts/a");
  write_cmake_lists(a);
  const fs::path b = tmp.path() / "checkouts/b";
  fs::copy(a, b, fs::copy_options::recursive);
  auto local = cmake_build(b, tmp / "cache-local", "");
  INFO(local.out << local.err);
  REQUIRE(local.exit_code == 0);
  const auto expected = cmake_objects(b / "build");
  fs::remove_all(b / "build");

  Worker worker(tmp / "worker", tmp.path() / "checkouts");
  const Env explain{{"OFFLOAD_BUILD_EXPLAIN", "1"}};
  auto first = cmake_build(a, tmp / "cache-a", worker.url(), explain);
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(count_occurrences(first.err, ": executed remotely (") == 9);
  CHECK(count_occurrences(first.err, "(no scan here)") == 0);

  // engine_storage off (with it the entries the engine holds serve a whole
  // compile, below, and no manifest is stored): the same checkout again,
  // served by the engine's action cache, leaves the compiles' manifests.
  Env own = explain;
  own.emplace_back("OFFLOAD_BUILD_ENGINE_STORAGE", "false");
  own.emplace_back("OFFLOAD_BUILD_SIGNING_KEY", "team-key");  // a manifest is used only when signed
  fs::remove_all(a / "build");
  auto seeded = cmake_build(a, tmp / "cache-a2", worker.url(), own);
  INFO(seeded.out << seeded.err);
  REQUIRE(seeded.exit_code == 0);
  CHECK(count_occurrences(seeded.err, ": served by the engine's action cache") == 9);
  CHECK(count_occurrences(seeded.err, "(no scan here)") == 0);

  // Each compile process of the other checkout finds its manifests: its
  // device pass and host parse are served with no scan (the host codegen
  // reads only the host IR), by the engine's action cache.
  auto fresh = cmake_build(b, tmp / "cache-b", worker.url(), own);
  INFO(fresh.out << fresh.err);
  REQUIRE(fresh.exit_code == 0);
  CHECK(count_occurrences(fresh.err, ": served by the engine's action cache") == 9);
  CHECK(count_occurrences(fresh.err, "its inputs from its dependency manifest in the engine (no scan here)") == 6);
  CHECK(worker.compiles() == 9);
  CHECK(cmake_objects(b / "build") == expected);
  CHECK(run_tool({(b / "build/vector").string()}, b, kMandatory).out == kExpected);

  // With engine_storage (the default), each compile is one entry the engine
  // holds: served whole, nothing sent, scanned or run.
  fs::remove_all(b / "build");
  const size_t executions = worker.executions();
  auto layered = cmake_build(b, tmp / "cache-c", worker.url(), explain);
  INFO(layered.out << layered.err);
  REQUIRE(layered.exit_code == 0);
  CHECK(count_occurrences(layered.err, ": served by the engine's action cache") == 0);
  CHECK(count_occurrences(layered.err, ": executed remotely (") == 0);
  CHECK(worker.executions() == executions);
  CHECK(engine_layer_hits(tmp / "cache-c") >= 3);
  CHECK(cmake_objects(b / "build") == expected);
  CHECK(run_tool({(b / "build/vector").string()}, b, kMandatory).out == kExpected);
}

// examples/vector-cxx built by make through the launcher as users write it
// (docs/DISTRIBUTED.md): the compiler by its bare name, through an MPI
// wrapper whose OMPI_CXX is that bare name, or with each compile run in src/
// and its object and depfile written to ../obj/ (a directory beside the
// compile's, as recursive makes and CMake layouts have it). Every compile's
// device pass, host parse and host codegen goes to the engine all the same.
namespace {

struct MakeLayout {
  std::string name;
  std::string compiler;  // the make variable CXX after the launcher
  Env env;               // the build's (the MPI wrapper's compiler)
  std::string dir;       // where each compile runs, from the project
};

void write_makefile(const fs::path& project) {
  write_file(project / "Makefile",
             "OBJS = obj/axpy.o obj/main.o obj/reduce.o\n"
             "FLAGS = -O2 -std=c++17 -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -DVEC_N=100000\n"
             "DIR = .\n"
             "UP = $(if $(filter .,$(DIR)),,../)\n"
             "vector: $(OBJS)\n"
             "\t/usr/bin/clang++-22 $(FLAGS) $(OBJS) -o vector\n"
             "obj/%.o: src/%.cpp\n"
             "\t@mkdir -p obj\n"
             "\tcd $(DIR) && $(CXX) $(FLAGS) -I$(UP)include -MMD -c $(UP)src/$*.cpp -o $(UP)obj/$*.o\n");
}

process::Captured make_build(const fs::path& project, const fs::path& cache, const std::string& remote,
                             const MakeLayout& layout, const Env& more = {}) {
  Env env{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()},
          {"OFFLOAD_BUILD_REMOTE_EXECUTION", remote.empty() ? std::nullopt : std::optional(remote)},
          {"OFFLOAD_BUILD_CONFIG", std::nullopt}, {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt},
          {"OFFLOAD_BUILD_VERBOSE", std::nullopt}, {"OFFLOAD_BUILD_EXPLAIN", std::nullopt},
          {"OFFLOAD_BUILD_BASE_DIR", project.string()}, {"MAKEFLAGS", std::nullopt}};
  env.insert(env.end(), layout.env.begin(), layout.env.end());
  env.insert(env.end(), more.begin(), more.end());
  return run_tool({"make", "-j2", "CXX=" + std::string(OB_BINARY) + " " + layout.compiler, "DIR=" + layout.dir},
                  project, env);
}

// The objects and depfiles of a make build, by path.
std::map<std::string, std::string> make_outputs(const fs::path& project) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(project / "obj")) out[e.path().filename().string()] = read_file(e.path());
  return out;
}

}  // namespace

TEST_CASE("remote execution: a make build through the launcher sends every compile, whatever the compiler is "
          "called and wherever -o writes",
          "[integration][remote-execution][launcher]") {
  const MakeLayout layout = GENERATE(MakeLayout{"bare name", "clang++-22", {}, "."},
                                     MakeLayout{"MPI wrapper", "mpicxx.openmpi", {{"OMPI_CXX", "clang++-22"}}, "."},
                                     MakeLayout{"-o in another directory", "/usr/bin/clang++-22", {}, "src"});
  INFO(layout.name);
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  if (layout.compiler == "mpicxx.openmpi" && !fs::exists("/usr/bin/mpicxx.openmpi"))
    OB_SKIP("no Open MPI (/usr/bin/mpicxx.openmpi): scripts/setup.sh installs it");
  TempDir tmp("ob-reapi-make");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  write_makefile(project);
  // The reference: the same make build, every compile here.
  auto local = make_build(project, tmp / "cache-local", "", layout);
  INFO(local.out << local.err);
  REQUIRE(local.exit_code == 0);
  const auto expected = make_outputs(project);
  REQUIRE(expected.size() == 6);  // 3 objects, 3 depfiles
  fs::remove_all(project / "obj");
  fs::remove(project / "vector");

  Worker worker(tmp / "worker", project);
  auto r = make_build(project, tmp / "cache-1", worker.url(), layout, {{"OFFLOAD_BUILD_EXPLAIN", "1"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  // Each compile's device pass, host parse and host codegen on the engine;
  // only its package here, and --explain says why.
  CHECK(count_occurrences(r.err, ": executed remotely (") == 9);
  CHECK(count_occurrences(r.err, ": ran locally") == 3);
  CHECK(count_occurrences(r.err, ": ran locally: a package job: remote execution sends compiles") == 3);
  CHECK(worker.compiles() == 9);
  CHECK(stat_of(tmp / "cache-1", "remote_executions") == 9);
  CHECK(stat_of(tmp / "cache-1", "remote_fallbacks") == 0);
  CHECK(make_outputs(project) == expected);
  auto run = run_tool({(project / "vector").string()}, project, kMandatory);
  CHECK(run.exit_code == 0);
  CHECK(run.out == kExpected);
}

TEST_CASE("remote execution: a remote result is a local cache hit next time, and a header created where it looked misses",
          "[integration][remote-execution]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  // An include directory searched before include/, empty for now.
  auto manifest = nlohmann::json::parse(read_file(project / "offload.json"));
  manifest["include_dirs"] = {"first", "include"};
  write_file(project / "offload.json", manifest.dump());
  fs::create_directories(project / "first");
  Worker worker(tmp / "worker", project);
  auto r = build(project, tmp / "cache", {"--remote-execution", worker.url()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("remote execution: 9 executed"));
  REQUIRE(worker.compiles() == 9);

  // The same checkout again: every job from the local cache, none sent.
  fs::remove_all(project / "build");
  auto again = build(project, tmp / "cache", {"--remote-execution", worker.url()});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK_THAT(again.err, Catch::Contains("13 jobs: 13 from cache, 0 run"));
  CHECK(worker.compiles() == 9);

  // A header where the remote compiles looked first: they run again (the
  // engine executes the changed preprocessing), never the old objects.
  write_file(project / "first/vec.hpp", read_file(project / "include/vec.hpp") + "#define FIRST_VEC 1\n");
  auto third = build(project, tmp / "cache", {"--remote-execution", worker.url(), "--explain"});
  INFO(third.err);
  REQUIRE(third.exit_code == 0);
  CHECK_THAT(third.err, Catch::Contains("first/vec.hpp"));
  CHECK(worker.compiles() >= 9 + 6);  // each unit's device pass and host parse
  CHECK(run_tool({(project / "build/vector").string()}, project, kMandatory).out == kExpected);
}

// Two checkouts of vector-cxx under tmp/checkouts (a and b), elsewhere on
// disk from each other, with an include directory "first" searched before
// include/, empty for now; b's objects built here (the reference); a built
// through the worker with an empty local cache: its 9 compiles executed.
struct TwoCheckouts {
  TempDir tmp{"ob-reapi"};
  fs::path a = tmp.path() / "checkouts/a";
  fs::path b = tmp.path() / "checkouts/b";
  std::map<std::string, std::string> expected = make();  // before the worker hides the checkouts
  Worker worker{tmp / "worker", tmp.path() / "checkouts"};
  process::Captured first = build(a, tmp / "cache-a", {"--remote-execution", worker.url()});

  std::map<std::string, std::string> make() {
    a = copy_example("vector-cxx", a);
    auto manifest = nlohmann::json::parse(read_file(a / "offload.json"));
    manifest["include_dirs"] = {"first", "include"};
    write_file(a / "offload.json", manifest.dump());
    fs::create_directories(a / "first");
    fs::copy(a, b, fs::copy_options::recursive);
    return local_reference(b, tmp / "cache-local");
  }
};

TEST_CASE("remote execution: a fresh checkout is served by the engine without a dependency scan, and a header "
          "that would shadow one it read makes it scan again",
          "[integration][remote-execution]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  // The first checkout: each compile that writes a depfile (3 device passes
  // and 3 host parses) is scanned here, runs there, and leaves its manifest.
  TwoCheckouts c;
  auto& [tmp, a, b, expected, worker, first] = c;
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.err, Catch::Contains("remote execution: 9 executed"));
  CHECK(first.err.find("without a dependency scan") == std::string::npos);
  // engine_storage off (with it the entries the engine holds serve a fresh
  // checkout whole, next test case, and no manifest is stored): the same
  // checkout from an empty local cache, its compiles scanned and served by
  // the engine's action cache, leaves their manifests.
  // With the team's key: a manifest is stored signed, and used only when it verifies.
  const Env own{{"OFFLOAD_BUILD_ENGINE_STORAGE", "false"}, {"OFFLOAD_BUILD_SIGNING_KEY", "team-key"}};
  fs::remove_all(a / "build");
  auto seeded = build_project(a, tmp / "cache-a2", {"--remote-execution", worker.url()}, own);
  INFO(seeded.err);
  REQUIRE(seeded.exit_code == 0);
  CHECK_THAT(seeded.err, Catch::Contains("remote execution: 0 executed, 9 from the engine's cache"));
  CHECK(seeded.err.find("without a dependency scan") == std::string::npos);

  // The other checkout, an empty local cache: every compile from the engine,
  // none scanned; the objects are a local build's.
  auto fresh = build_project(b, tmp / "cache-b", {"--remote-execution", worker.url()}, own);
  INFO(fresh.err);
  REQUIRE(fresh.exit_code == 0);
  CHECK_THAT(fresh.err, Catch::Contains("remote execution: 0 executed, 9 from the engine's cache"));
  CHECK_THAT(fresh.err, Catch::Contains("; 6 without a dependency scan"));
  CHECK(objects(b / "build") == expected);
  CHECK(run_tool({(b / "build/vector").string()}, b, kMandatory).out == kExpected);

  // A header where those compiles looked first: no manifest holds, each is
  // scanned and executed with it (never the old objects).
  write_file(b / "first/vec.hpp", read_file(b / "include/vec.hpp") + "#define FIRST_VEC 1\n");
  const size_t before = worker.compiles();
  fs::remove_all(b / "build");
  auto shadowed = build_project(b, tmp / "cache-c", {"--remote-execution", worker.url()}, own);
  INFO(shadowed.err);
  REQUIRE(shadowed.exit_code == 0);
  CHECK(shadowed.err.find("without a dependency scan") == std::string::npos);
  CHECK(worker.compiles() >= before + 6);
  const auto reference = local_reference(b, tmp / "cache-local-2");
  auto again = build(b, tmp / "cache-c", {"--remote-execution", worker.url()});
  REQUIRE(again.exit_code == 0);
  CHECK(objects(b / "build") == reference);
  CHECK(run_tool({(b / "build/vector").string()}, b, kMandatory).out == kExpected);
}

TEST_CASE("remote execution: a fresh checkout is served whole by the entries the engine holds, and a header that "
          "would shadow one it read misses",
          "[integration][remote-execution][engine-storage]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  // The first checkout: its compiles run on the worker; every entry of its
  // local cache (packages and the link too) goes to the engine as well.
  TwoCheckouts c;
  auto& [tmp, a, b, expected, worker, first] = c;
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.err, Catch::Contains("remote execution: 9 executed"));
  const size_t executions = worker.executions();

  // The other checkout, an empty local cache: all 13 jobs from the engine,
  // nothing sent, scanned or run anywhere; the objects are a local build's.
  // Every entry comes from the project's working set the first build left
  // (one value), none by a call of its own.
  auto fresh = build(b, tmp / "cache-b", {"--remote-execution", worker.url(), "--explain", "-v"});
  INFO(fresh.err);
  REQUIRE(fresh.exit_code == 0);
  CHECK_THAT(fresh.err, Catch::Contains("13 jobs: 13 from cache, 0 run"));
  const size_t said = fresh.err.find("working set of this project: ");
  REQUIRE(said != std::string::npos);
  size_t served = 0, held = 0, used = 0;
  REQUIRE(std::sscanf(fresh.err.c_str() + said, "working set of this project: %zu of %zu entries served, %zu used",
                      &served, &held, &used) == 3);
  CHECK(served >= 13);
  CHECK(served == held);
  CHECK(served == used);
  CHECK_THAT(fresh.err, Catch::Contains("remote execution: 0 executed, 0 from the engine's cache, 0 run locally "
                                        "after all, 0 local"));
  CHECK(worker.executions() == executions);
  CHECK(engine_layer_hits(tmp / "cache-b") >= 13);
  CHECK(objects(b / "build") == expected);
  CHECK(run_tool({(b / "build/vector").string()}, b, kMandatory).out == kExpected);

  // A header where those compiles looked first: the entries do not hold, the
  // compiles execute again with it (never the old objects).
  write_file(b / "first/vec.hpp", read_file(b / "include/vec.hpp") + "#define FIRST_VEC 1\n");
  fs::remove_all(b / "build");
  auto shadowed = build(b, tmp / "cache-c", {"--remote-execution", worker.url(), "--explain"});
  INFO(shadowed.err);
  REQUIRE(shadowed.exit_code == 0);
  CHECK_THAT(shadowed.err, Catch::Contains("first/vec.hpp"));
  CHECK(worker.compiles() >= 9 + 6);
  const auto reference = local_reference(b, tmp / "cache-local-2");
  auto again = build(b, tmp / "cache-c", {"--remote-execution", worker.url()});
  REQUIRE(again.exit_code == 0);
  CHECK(objects(b / "build") == reference);
  CHECK(run_tool({(b / "build/vector").string()}, b, kMandatory).out == kExpected);
}

TEST_CASE("remote execution: bare-gpu's sm_90 and gfx90a device passes run on Bazel's worker, byte-identical",
          "[integration][remote-execution]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi");
  const fs::path project = copy_example("bare-gpu", tmp.path() / "p");
  std::string program;
  const auto expected = local_reference(project, tmp / "cache-local", "bare", &program);

  Worker worker(tmp / "worker", project);
  auto r = build(project, tmp / "cache-1", {"--remote-execution", worker.url()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // 3 device passes (host, sm_90, gfx90a), the host parse and the host codegen.
  CHECK_THAT(r.err, Catch::Contains("remote execution: 5 executed, 0 from the engine's cache, 0 run locally after all"));
  CHECK(worker.compiles() == 5);
  CHECK(r.err.find("warning") == std::string::npos);
  CHECK(objects(project / "build") == expected);
  CHECK(read_file(project / "build/bare") == program);
  auto listing = run_tool({"/usr/lib/llvm-22/bin/llvm-objdump", "--offloading", (project / "build/bare").string()});
  REQUIRE(listing.exit_code == 0);
  CHECK(count_occurrences(listing.out, "OFFLOADING IMAGE") == 3);
  CHECK_THAT(listing.out, Catch::Contains("arch            sm_90\ntriple          nvptx64-nvidia-cuda"));
  CHECK_THAT(listing.out, Catch::Contains("arch            gfx90a\ntriple          amdgcn-amd-amdhsa"));
  auto run = run_tool({(project / "build/bare").string()}, project, kMandatory);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("sum=1048576.0 expected=1048576.0 mismatches=0 OK"));
}

TEST_CASE("remote execution: a file the dependency scan cannot see fails remotely and the job reruns here",
          "[integration][remote-execution]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi");
  const fs::path project = tmp / "p";
  fs::create_directories(project);
  // The assembler's .incbin reads data.bin at codegen: no -M scan lists it,
  // so the input root lacks it and the worker's compile fails.
  write_file(project / "data.bin", "offload-build incbin payload\n");
  write_file(project / "blob.c",
             "#include <stdio.h>\n"
             "__asm__(\".section .rodata\\n.globl blob\\nblob:\\n.incbin \\\"" + (project / "data.bin").string() +
                 "\\\"\\n.byte 0\\n.previous\");\n"
             "extern const char blob[];\n"
             "int main(void) {\n"
             "  int on = 0;\n"
             "#pragma omp target map(from: on)\n"
             "  on = 1;\n"
             "  printf(\"%s%d\\n\", blob, on);\n"
             "  return 0;\n"
             "}\n");
  write_file(project / "offload.json",
             R"({"name": "blob", "output": "blob", "sources": ["blob.c"], "targets": ["host"], "flags": ["-O2"]})");
  const auto expected = local_reference(project, tmp / "cache-local");

  Worker worker(tmp / "worker", project);
  auto r = build(project, tmp / "cache-1", {"--remote-execution", worker.url(), "--explain"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("ran locally after all: the remote compile exited with"));
  CHECK(r.err.find("warning: remote_execution") == std::string::npos);  // not an engine failure
  CHECK(objects(project / "build") == expected);
  auto run = run_tool({(project / "build/blob").string()}, project, kMandatory);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "offload-build incbin payload\n1\n");
}

namespace {

// A one-source C project in `dir` (host target): k.c as given, the manifest
// with `flags`.
void write_k(const fs::path& dir, const std::string& source, const std::vector<std::string>& flags = {}) {
  fs::create_directories(dir);
  write_file(dir / "k.c", source);
  nlohmann::json m{{"name", "k"}, {"sources", {"k.c"}}, {"targets", {"host"}}, {"flags", flags}};
  write_file(dir / "offload.json", m.dump());
}

process::Captured build_k(const fs::path& project, const fs::path& cache, const Worker& worker, Env env = {}) {
  env.insert(env.end(), {{"OFFLOAD_BUILD_CONFIG", std::nullopt}, {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt}});
  fs::remove_all(project / "build");
  return run_ob({"-C", project.string(), "--cache-dir", cache.string(), "--remote-execution", worker.url(),
                 "--explain", "build"},
                {}, env);
}

std::string run_k(const fs::path& project) {
  auto r = run_tool({(project / "build/k").string()}, project, kMandatory);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

const char* kValueSource = R"(#include <stdio.h>
#include HEADER
int main(void) {
  int d = 0;
#pragma omp target map(from: d)
  d = VALUE;
  printf("device %d host %d\n", d, VALUE);
  return 0;
}
)";

}  // namespace

// Each build below uses a fresh local cache, so only the engine's action
// cache could serve an old object: it must not, where the local cache would
// not (cache::action_key).
TEST_CASE("remote execution: the engine's cache never answers what the local cache would not",
          "[integration][remote-execution][action-key]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi-key");
  const fs::path project = tmp / "p";
  fs::create_directories(project);
  Worker worker(tmp / "worker", project);

  SECTION("a header under a system directory, edited") {
    const fs::path sys = tmp / "sys";
    write_file(sys / "sysv.h", "#define VALUE 1\n");
    write_k(project, std::string("#define HEADER <sysv.h>\n") + kValueSource, {"-isystem", sys.string()});
    const Env env{{"OFFLOAD_BUILD_SYSTEM_DIRS", "/usr:/lib:/lib64:" + sys.string()}};
    auto r = build_k(project, tmp / "cache-1", worker, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("executed remotely"));
    CHECK(run_k(project) == "device 1 host 1\n");
    write_file(sys / "sysv.h", "#define VALUE 2\n");
    auto again = build_k(project, tmp / "cache-2", worker, env);
    INFO(again.err);
    REQUIRE(again.exit_code == 0);
    CHECK(run_k(project) == "device 2 host 2\n");
    CHECK(again.err.find("served by the engine's action cache") == std::string::npos);
  }

  SECTION("CPATH reaches the worker and the action") {
    write_file(project / "cp/cpv.h", "#define VALUE 7\n");
    write_k(project, std::string("#if __has_include(\"cpv.h\")\n#define HEADER \"cpv.h\"\n#else\n"
                                 "#define HEADER <stddef.h>\n#define VALUE 1\n#endif\n") + kValueSource);
    auto r = build_k(project, tmp / "cache-1", worker, {{"CPATH", (project / "cp").string()}});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("executed remotely"));
    CHECK(run_k(project) == "device 7 host 7\n");
    // Without CPATH: another action, not the engine's answer for the first.
    auto plain = build_k(project, tmp / "cache-2", worker, {{"CPATH", std::nullopt}});
    INFO(plain.err);
    REQUIRE(plain.exit_code == 0);
    CHECK(run_k(project) == "device 1 host 1\n");
  }

  SECTION("a compile reading __DATE__ gets SOURCE_DATE_EPOCH and is never served by the engine's cache") {
    write_k(project, "#include <stdio.h>\nint main(void) {\n  int d = 0;\n#pragma omp target map(from: d)\n"
                     "  d = 1;\n  printf(\"%d %s\\n\", d, __DATE__ + 7);\n  return 0;\n}\n");
    const Env epoch{{"SOURCE_DATE_EPOCH", "0"}};
    auto r = build_k(project, tmp / "cache-1", worker, epoch);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("executed remotely"));
    CHECK(run_k(project) == "1 1970\n");
    auto again = build_k(project, tmp / "cache-2", worker, epoch);
    INFO(again.err);
    REQUIRE(again.exit_code == 0);
    CHECK(run_k(project) == "1 1970\n");
    // The passes that read the source execute again; the host codegen (its
    // input the IR, as the local cache keys it) may be served.
    CHECK_THAT(again.err, Catch::Contains("host-ir k.c: executed remotely"));
    CHECK_THAT(again.err, Catch::Contains("device host k.c: executed remotely"));
  }

  SECTION("-march=native stays here") {
    write_k(project, std::string("#define HEADER <stddef.h>\n#define VALUE 3\n") + kValueSource,
            {"-O2", "-march=native"});
    auto r = build_k(project, tmp / "cache-1", worker);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // The host passes say -march=native; the x86_64 device pass does not.
    CHECK_THAT(r.err, Catch::Contains("host-ir k.c: ran locally: -march=native means this machine's CPU"));
    CHECK_THAT(r.err, Catch::Contains("host k.c: ran locally: -march=native means this machine's CPU"));
    CHECK(worker.compiles() == 1);
    CHECK(run_k(project) == "device 3 host 3\n");
  }

  SECTION("a #pragma once header reached by two paths through a symlink stays here") {
    write_file(project / "inc/once.h",
               "#pragma once\n#ifdef SEEN\n#undef SEEN\n#define SEEN 2\n#else\n#define SEEN 1\n#endif\n");
    fs::create_directory_symlink("inc", project / "alias");
    write_k(project, std::string("#include \"inc/once.h\"\n#include \"alias/once.h\"\n#define HEADER <stddef.h>\n"
                                 "#define VALUE SEEN\n") + kValueSource);
    auto r = build_k(project, tmp / "cache-1", worker);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(run_k(project) == "device 1 host 1\n");
    // Kept here for it (a scan alone lists both names), or, where a batch's
    // clang-scan-deps listed one name only, sent without the other: the
    // worker's compile fails and it runs here.
    CHECK_THAT(r.err, Catch::Contains("is reached through the symlink") ||
                          Catch::Contains("host-ir k.c: ran locally after all: the remote compile exited with 1"));
  }
}

// The compiler replaced in place (a module upgraded; the same --version):
// a launcher compile through a compiler at a path of ours.
TEST_CASE("remote execution: a compiler replaced at the same path is a new action",
          "[integration][remote-execution][action-key]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi-compiler");
  const fs::path project = tmp / "p";
  write_k(project, std::string("#define HEADER <stddef.h>\n") + kValueSource);
  const fs::path compiler = tmp / "bin/clang-22";
  auto install = [&](int value) {  // the same size and --version, another behaviour
    write_file(compiler, "#!/bin/sh\nexec /usr/lib/llvm-22/bin/clang \"$@\" -DVALUE=" + std::to_string(value) + "\n");
    fs::permissions(compiler, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  };
  // The rest of the LLVM installation beside it, as a module's bin/ has it.
  fs::create_directories(tmp / "bin");
  for (const auto& e : fs::directory_iterator("/usr/lib/llvm-22/bin"))
    if (e.path().filename() != "clang-22") fs::create_symlink(e.path(), tmp / "bin" / e.path().filename());
  Worker worker(tmp / "worker", project);
  auto compile_and_run = [&](const std::string& cache) {
    const Env env{{"OFFLOAD_BUILD_CACHE_DIR", (tmp / cache).string()},
                  {"OFFLOAD_BUILD_REMOTE_EXECUTION", worker.url()},
                  {"OFFLOAD_BUILD_BASE_DIR", project.string()},
                  {"OFFLOAD_BUILD_EXPLAIN", "1"},
                  {"OFFLOAD_BUILD_CONFIG", std::nullopt},
                  {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt},
                  {"MAKEFLAGS", std::nullopt}};
    auto c = run_ob({compiler.string(), "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", "k.c", "-o",
                     "k.o"},
                    project, env);
    INFO(c.err);
    REQUIRE(c.exit_code == 0);
    CHECK_THAT(c.err, Catch::Contains("executed remotely"));
    auto l = run_tool({"/usr/bin/clang-22", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "k.o", "-o", "k"},
                      project);
    REQUIRE(l.exit_code == 0);
    auto r = run_tool({(project / "k").string()}, project, kMandatory);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  install(1);
  CHECK(compile_and_run("cache-1") == "device 1 host 1\n");
  install(2);
  CHECK(compile_and_run("cache-2") == "device 2 host 2\n");
}

// Any client of an engine may write its action cache (Bazel's worker takes
// UpdateActionResult from anyone): by default its results never reach remote
// storage, signed or not; only an engine declared trusted's do.
TEST_CASE("remote execution: results of the engine's action cache are signed into remote storage only when trusted",
          "[integration][remote-execution][engine-cache]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi-trust");
  const fs::path project = tmp / "p";
  write_k(project, std::string("#define HEADER <stddef.h>\n#define VALUE 1\n") + kValueSource);
  Worker worker(tmp / "worker", project);
  const Env key{{"OFFLOAD_BUILD_SIGNING_KEY", "team-key-0123456789abcdef"}};
  // The engine's action cache filled (every compile executed).
  auto first = build_k(project, tmp / "cache-1", worker, key);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE_THAT(first.err, Catch::Contains("remote execution: 3 executed"));
  // Fresh clients, each with its own empty Redis: the engine's cache serves the compiles.
  // (engine_storage off: with it the entries the engine holds serve them.)
  auto stored_in_redis = [&](const std::string& name, const std::string& engine_cache, bool layer = false) {
    RedisServer redis(tmp / ("redis-" + name), {false, ""});
    Env env = key;
    env.emplace_back("OFFLOAD_BUILD_ENGINE_CACHE", engine_cache);
    env.emplace_back("OFFLOAD_BUILD_ENGINE_STORAGE", layer ? "true" : "false");
    env.emplace_back("OFFLOAD_BUILD_REMOTE_STORAGE", "redis://127.0.0.1:" + std::to_string(redis.port()));
    fs::remove_all(project / "build");
    auto r = run_ob({"-C", project.string(), "--cache-dir", (tmp / ("cache-" + name)).string(), "--remote-execution",
                     worker.url(), "build"},
                    {}, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE_THAT(r.err, Catch::Contains(layer ? "5 jobs: 5 from cache" : "3 from the engine's cache"));
    CHECK(run_k(project) == "device 1 host 1\n");
    return std::stoi("0" + run_tool({"/usr/bin/redis-cli", "-p", std::to_string(redis.port()), "DBSIZE"}).out);
  };
  const int used = stored_in_redis("use", "use");
  const int trusted = stored_in_redis("trusted", "trusted");
  INFO("entries in Redis: use " << used << ", trusted " << trusted);
  // Under use, nothing the engine's cache served goes further, nor what is
  // built here from it (the package and the link read the served objects).
  CHECK(used == 0);
  CHECK(trusted > 0);  // trusted and signed: the compiles, the package and the link
  // The entries the engine holds serve a fresh client whole, and go only to
  // its local cache, never to remote storage.
  CHECK(stored_in_redis("layer", "use", true) == 0);

  // execute: the engine's cache is never asked; off: nor written.
  for (const char* how : {"execute", "off"}) {
    INFO(how);
    Env env = key;
    env.emplace_back("OFFLOAD_BUILD_ENGINE_CACHE", how);
    auto r = build_k(project, tmp / (std::string("cache-") + how), worker, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("remote execution: 3 executed, 0 from the engine's cache"));
  }
}

// What a remote compile printed is capped and cleaned before it is printed
// or stored: here a compile that prints over 2 MB of colored warnings.
TEST_CASE("remote execution: a remote compile's output is capped and printed without terminal escapes",
          "[integration][remote-execution]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi-noisy");
  const fs::path project = tmp / "p";
  std::string noisy = "#define HEADER <stddef.h>\n#define VALUE 1\n";
  for (int i = 0; i < 30000; ++i) noisy += "#warning offload-build: note: this warning is the compiler's\n";
  write_k(project, noisy + kValueSource, {"-fdiagnostics-color=always"});
  Worker worker(tmp / "worker", project);
  auto r = build_k(project, tmp / "cache", worker);
  REQUIRE(r.exit_code == 0);
  INFO(r.err.substr(0, 2000));
  CHECK_THAT(r.err, Catch::Contains("executed remotely"));
  CHECK_THAT(r.err, Catch::Contains("more bytes of this remote compile's output were dropped"));
  CHECK(r.err.size() < 2 * (1u << 20) + 100000);  // two remote passes, 1 MiB each at most, and our lines
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(run_k(project) == "device 1 host 1\n");
}

TEST_CASE("remote execution: a worker killed mid-build costs one warning, the build passes locally",
          "[integration][remote-execution]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  TempDir tmp("ob-reapi");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  auto worker = std::make_unique<Worker>(tmp / "worker", project);
  // One job at a time, so that most are still to come when the worker goes.
  process::Command cmd{{OB_BINARY, "-C", project.string(), "--cache-dir", (tmp / "cache").string(), "-j1",
               "--remote-execution", worker->url("|jobs=1"), "build"},
              {},
              {{"OFFLOAD_BUILD_CONFIG", std::nullopt}, {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt}}};
  const fs::path err_file = tmp / "build.err";
  const int fd = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  auto spawned = process::spawn(cmd, process::Stdio{-1, fd, fd});
  ::close(fd);
  REQUIRE(spawned);
  const pid_t pid = *spawned;
  // The compiler checks and the first compile executed: kill the worker while
  // the build is stopped, so the rest of the build meets a dead engine
  // whatever the timing (SIGTERM would let the JVM finish the actions in flight).
  wait_for([&] { return worker->executions() >= 3; }, worker->process, 300);
  ::kill(pid, SIGSTOP);
  worker->process.stop(SIGKILL);
  ::kill(pid, SIGCONT);
  const int code = process::wait_exit_code(pid);
  const std::string err = read_file(err_file);
  INFO(err);
  CHECK(code == 0);
  CHECK(count_occurrences(err, "warning: remote_execution") == 1);
  CHECK_THAT(err, Catch::Contains("this build's remaining jobs run locally"));
  CHECK_THAT(err, Catch::Contains("run locally after all"));
  CHECK(run_tool({(project / "build/vector").string()}, project, kMandatory).out == kExpected);
}

TEST_CASE("remote execution: a server that never answers costs a deadline and one warning",
          "[integration][remote-execution]") {
  TempDir tmp("ob-reapi");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  BlackHole hole;
  auto r = build(project, tmp / "cache",
                 {"--remote-execution",
                  "grpc://127.0.0.1:" + std::to_string(hole.port()) + "|connect-timeout=1s|call-timeout=1s"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(count_occurrences(r.err, "warning: remote_execution") == 1);
  CHECK(run_tool({(project / "build/vector").string()}, project, kMandatory).out == kExpected);
}

TEST_CASE("remote execution: a bad URL names the setting and what to write", "[integration][remote-execution]") {
  TempDir tmp("ob-reapi");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  auto r = build(project, tmp / "cache", {"--remote-execution", "grpc://host|header=authorization:Bearer s3cret|bogus=1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("remote_execution \"grpc://host|header=authorization:***|***\""));
  CHECK(r.err.find("s3cret") == std::string::npos);
}

TEST_CASE("remote execution: LLVM 19 from a private prefix sends its compiles, its own headers the worker's",
          "[integration][remote-execution][llvm19]") {
  if (!can_hide()) OB_SKIP("needs root to hide the project from the worker (unshare -m)");
  OB_LLVM19(root);
  TempDir tmp("ob-reapi-19");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  auto m = nlohmann::json::parse(read_file(project / "offload.json"));
  m["toolchain"] = root.string();
  m["targets"] = {"host"};
  write_file(project / "offload.json", m.dump());
  const auto expected = local_reference(project, tmp / "cache-local");
  REQUIRE(expected.size() == 12);

  // The prefix's headers (lib/clang/19/include) are read from the worker's
  // own copy, as /usr's are: the compiler check proved it is the same LLVM.
  Worker worker(tmp / "worker", project);
  auto r = build(project, tmp / "cache-1", {"--remote-execution", worker.url(), "--explain"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("remote execution: 9 executed, 0 from the engine's cache, 0 run locally "
                                    "after all, 4 local"));
  CHECK(r.err.find("outside base_dir") == std::string::npos);
  CHECK(objects(project / "build") == expected);
  auto run = run_tool({(project / "build/vector").string()}, project,
                      {{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LD_LIBRARY_PATH", (root / "lib").string()}});
  CHECK(run.exit_code == 0);
  CHECK(run.out == kExpected);
}
