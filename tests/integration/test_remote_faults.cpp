// Remote execution against an engine that lies (docs/DISTRIBUTED.md): a fake
// REAPI server (tests/support/fake-reapi/, gRPC C++ on the client's own
// generated code) on 127.0.0.1 and a free port, stopped by its PID. It runs
// the compiler check for real, then answers every compile with a wrong
// result: an output whose bytes have another digest, no output at all, or an
// output of 1 TiB. Each is refused: the build passes with one warning, every
// job runs here, and the objects are byte-identical to a local build's.
// Built only with the remote execution module (OB_FAKE_REAPI).
#ifdef OB_FAKE_REAPI
#include <catch2/catch.hpp>

#include "support/fake_engine.hpp"
#include "support/ob_process.hpp"
#include "support/reapi_build.hpp"
#include "support/servers.hpp"

using namespace ob;
using namespace ob::test;

TEST_CASE("remote execution: a lying engine's result is refused, the job runs here with one warning",
          "[integration][remote-execution]") {
  const auto [mode, refusal] = GENERATE(table<std::string, std::string>({
      {"bad-digest", "a blob's content does not match its digest"},
      {"missing", "the result lacks the output"},
      {"oversized", "is over the cap (max-output-size)"},
  }));
  DYNAMIC_SECTION(mode) {
    TempDir tmp("ob-reapi-fault");
    const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
    const auto expected = local_reference(project, tmp / "cache-local");
    REQUIRE(expected.size() == 12);

    LyingEngine engine(tmp / "engine", mode);
    auto r = build(project, tmp / "cache", {"--remote-execution", engine.url(), "--explain"});
    INFO(r.err);
    INFO(engine.calls());
    REQUIRE(r.exit_code == 0);
    // The engine was asked: the compiler checks passed, a compile executed and lied.
    CHECK_THAT(engine.calls(), Catch::Contains("Execute compiler check"));
    CHECK_THAT(engine.calls(), Catch::Contains("Execute lied"));
    // A compile's object and depfile are read in one batch, checked against their digests.
    if (mode == "bad-digest") CHECK_THAT(engine.calls(), Catch::Contains("BatchReadBlobs 2"));
    // Refused with one warning naming why; every job ran here.
    CHECK(count_occurrences(r.err, "warning: remote_execution") == 1);
    CHECK_THAT(r.err, Catch::Contains(refusal));
    CHECK_THAT(r.err, Catch::Contains("this build's remaining jobs run locally"));
    CHECK_THAT(r.err, Catch::Contains("ran locally after all: the engine failed"));
    CHECK_THAT(r.err, Catch::Contains("remote execution: 0 executed, 0 from the engine's cache"));
    CHECK(stat_of(tmp / "cache", "remote_executions") == 0);
    CHECK(stat_of(tmp / "cache", "remote_fallbacks") >= 1);
    CHECK(objects(project / "build") == expected);
    auto run = run_tool({(project / "build/vector").string()}, project, kMandatory);
    CHECK(run.exit_code == 0);
    CHECK(run.out == kExpected);
  }
}
TEST_CASE("remote execution: a worker whose compiler answers another --version costs one warning, not the build",
          "[integration][remote-execution]") {
  TempDir tmp("ob-reapi-other");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  const auto expected = local_reference(project, tmp / "cache-local");
  LyingEngine engine(tmp / "engine", "other-compiler");
  auto r = build(project, tmp / "cache", {"--remote-execution", engine.url()});
  INFO(r.err);
  INFO(engine.calls());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(engine.calls(), Catch::Contains("Execute compiler check"));
  CHECK_THAT(engine.calls(), !Catch::Contains("Execute lied"));
  CHECK(count_occurrences(r.err, "warning: remote_execution") == 1);
  CHECK_THAT(r.err, Catch::Contains("is not ours") && Catch::Contains("the build runs locally"));
  CHECK(objects(project / "build") == expected);
}

TEST_CASE("remote execution: in one make run, the compile that finds the engine failing spares the rest",
          "[integration][remote-execution][launcher]") {
  TempDir tmp("ob-reapi-down");
  LyingEngine engine(tmp / "engine", "bad-digest");
  const MakeRun make(tmp.path(), engine.url(), 1, {{"OFFLOAD_BUILD_EXPLAIN", "1"}});
  const std::string first = make.compile("a");
  INFO(first);
  CHECK(count_occurrences(first, "warning: remote_execution") == 1);
  REQUIRE(count_occurrences(engine.calls(), "GetCapabilities") == 1);
  const std::string second = make.compile("b");
  INFO(second);
  INFO(engine.calls());
  CHECK(second.find("warning") == std::string::npos);  // said once per build
  CHECK_THAT(second, Catch::Contains("the engine failed earlier in this build"));
  CHECK(count_occurrences(engine.calls(), "GetCapabilities") == 1);  // never asked again
}
// Sleeps only bound the engine's answers from below: the test asserts what
// the compiles said, never how long they took.
TEST_CASE("remote execution: the compiles of one make run share one time budget for a slow engine",
          "[integration][remote-execution][launcher]") {
  TempDir tmp("ob-reapi-budget");
  // Each GetActionResult is answered (a miss) after at least 2 s, 1.9 s of it
  // past connect-timeout; each Execute at once, the compile failing there (no
  // engine fault: the job reruns here). Budget: 10 s + 1 s - 0.1 s = 10.9 s
  // for the make run. A compile sends its 3 jobs one at a time (jobs=1): the
  // first compile spends about 5.7 s of it, so the second runs out on its third job.
  LyingEngine engine(tmp / "engine", "slow-failing", 2000);
  const MakeRun make(tmp.path(), engine.url() + "|connect-timeout=100ms|call-timeout=10s|jobs=1", 2);
  const std::string first = make.compile("a");
  INFO(first);
  INFO(engine.calls());
  REQUIRE(count_occurrences(engine.calls(), "Execute failed") == 3);
  CHECK(first.find("warning") == std::string::npos);  // within the budget
  const std::string second = make.compile("b");
  INFO(second);
  INFO(engine.calls());
  CHECK(count_occurrences(second, "warning: remote_execution") == 1);
  CHECK_THAT(second, Catch::Contains("too slow: its calls took"));
  CHECK(count_occurrences(engine.calls(), "Execute failed") < 6);  // the run's budget, not a second one
}
namespace {

// A one-source C project printing what it sees of two variables.
fs::path env_project(const fs::path& dir) {
  write_file(dir / "k.c",
             "#include <stdio.h>\n#include <stdlib.h>\n"
             "static const char* or_none(const char* v) { return v ? v : \"(unset)\"; }\n"
             "int main(void) {\n  int d = 0;\n#pragma omp target map(from: d)\n  d = 1;\n"
             "  printf(\"%d %s %s\\n\", d, or_none(getenv(\"OFFLOAD_BUILD_REMOTE_EXECUTION\")),"
             " or_none(getenv(\"OB_TEST_ENGINE_TOKEN\")));\n  return 0;\n}\n");
  write_file(dir / "offload.json", R"({"name": "k", "sources": ["k.c"], "targets": ["host"]})");
  return dir;
}

Env engine_env(const fs::path& cache, const std::string& url, Env more = {}) {
  Env e{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}, {"OFFLOAD_BUILD_REMOTE_EXECUTION", url},
        {"OFFLOAD_BUILD_CONFIG", std::nullopt}, {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt}};
  e.insert(e.end(), more.begin(), more.end());
  return e;
}

}  // namespace

TEST_CASE("remote execution: the engine's URL and its header variables reach no child",
          "[integration][remote-execution]") {
  TempDir tmp("ob-reapi-secret");
  const fs::path project = env_project(tmp / "p");
  LyingEngine engine(tmp / "engine", "bad-digest");
  const std::string url = engine.url() + "|header=authorization:Bearer ${OB_TEST_ENGINE_TOKEN}";
  auto r = run_ob({"-C", project.string(), "run"}, {},
                  engine_env(tmp / "cache", url, {{"OB_TEST_ENGINE_TOKEN", "s3cret-tok"}, {"OMP_TARGET_OFFLOAD", "MANDATORY"}}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(engine.calls(), Catch::Contains("Execute compiler check"));  // the header was used
  CHECK(r.out == "1 (unset) (unset)\n");
  CHECK(r.err.find("s3cret-tok") == std::string::npos);
}

TEST_CASE("remote execution: config set keeps a header's value out of the config file",
          "[integration][remote-execution]") {
  TempDir tmp("ob-reapi-config");
  const Env home{{"HOME", tmp.path().string()}, {"XDG_CONFIG_HOME", std::nullopt}, {"OFFLOAD_BUILD_CONFIG", std::nullopt}};
  auto refused = run_ob({"config", "set", "remote_execution", "grpc://h:1|header=authorization:Bearer tok|S3cretTail"},
                        {}, home);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("S3cretTail") == std::string::npos);
  auto literal = run_ob({"config", "set", "remote_execution", "grpc://h:1|header=authorization:Bearer t0ken"}, {}, home);
  CHECK(literal.exit_code == 2);
  CHECK_THAT(literal.err, Catch::Contains("${VAR}"));
  CHECK(literal.err.find("t0ken") == std::string::npos);
  CHECK_FALSE(fs::exists(tmp / ".config/offload-build/config"));
  auto named = run_ob({"config", "set", "remote_execution", "grpc://h:1|header=authorization:Bearer ${TOK}"}, {}, home);
  INFO(named.err);
  CHECK(named.exit_code == 0);
}

TEST_CASE("remote execution: a compile under a preload library of the user's is never sent",
          "[integration][remote-execution]") {
  TempDir tmp("ob-reapi-preload");
  const fs::path project = env_project(tmp / "p");
  // A profiler's collector a module preloads: a library outside the project.
  write_file(tmp / "collector.c", "void ob_test_collector(void) {}\n");
  auto lib = run_tool({"/usr/bin/clang-22", "-shared", "-fPIC", "-o", (tmp / "libcollector.so").string(),
                       (tmp / "collector.c").string()});
  REQUIRE(lib.exit_code == 0);
  LyingEngine engine(tmp / "engine", "bad-digest");
  auto r = run_ob({"-C", project.string(), "--explain", "build"}, {},
                  engine_env(tmp / "cache", engine.url(), {{"LD_PRELOAD", (tmp / "libcollector.so").string()}}));
  INFO(r.err);
  INFO(engine.calls());
  REQUIRE(r.exit_code == 0);
  // The compiles that preload it (the passes that read the source) stay
  // here; the host codegen from the IR preloads nothing and may go.
  CHECK(count_occurrences(r.err, "its LD_PRELOAD names " + (tmp / "libcollector.so").string()) == 2);
  CHECK_THAT(r.err, Catch::Contains("host-ir k.c: ran locally: its LD_PRELOAD"));
  CHECK_THAT(r.err, Catch::Contains("device host k.c: ran locally: its"));
}
// Sleeps only bound the engine's answers from below: the test asserts what
// the build did (which calls it made, what it said), never how long it took.
TEST_CASE("remote execution: an engine answering every call just inside call-timeout costs one budget per build",
          "[integration][remote-execution]") {
  TempDir tmp("ob-reapi-slow");
  const fs::path project = env_project(tmp / "p");
  LyingEngine engine(tmp / "engine", "slow");
  // Budget: call-timeout + 1 s - connect-timeout = 5.9 s past connect-timeout;
  // each slow answer takes at least 3.1 s, 3 s of it past connect-timeout.
  auto r = run_ob({"-C", project.string(), "--explain", "build"}, {},
                  engine_env(tmp / "cache", engine.url() + "|connect-timeout=100ms|call-timeout=5s"));
  INFO(r.err);
  INFO(engine.calls());
  REQUIRE(r.exit_code == 0);
  CHECK(count_occurrences(r.err, "warning: remote_execution") == 1);
  CHECK_THAT(r.err, Catch::Contains("too slow: its calls took"));
  CHECK_THAT(engine.calls(), !Catch::Contains("Execute lied"));  // the budget ran out before any compile executed
}

// An engine that lets clients write its action cache but refuses inline
// contents in a result it stores (a strict server): the local cache's entries
// go there by digest alone, and a fresh build reads them back from its CAS.
TEST_CASE("remote execution: an engine that refuses inline contents still holds the cache's entries",
          "[integration][remote-execution][engine-storage]") {
  TempDir tmp("ob-reapi-strict");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  const auto expected = local_reference(project, tmp / "cache-local");
  LyingEngine engine(tmp / "engine", "strict-store");
  // Every compile fails on this engine and reruns here; every entry is stored there.
  auto first = build(project, tmp / "cache-1", {"--remote-execution", engine.url()});
  INFO(first.err);
  INFO(engine.calls());
  REQUIRE(first.exit_code == 0);
  CHECK(first.err.find("warning: remote_execution") == std::string::npos);
  CHECK_THAT(engine.calls(), Catch::Contains("UpdateActionResult refused inline contents"));
  CHECK(count_occurrences(engine.calls(), "UpdateActionResult\n") >= 13);
  CHECK(objects(project / "build") == expected);
  // A value is stored after a miss: its blob is sent without asking first.
  CHECK_THAT(engine.calls(), !Catch::Contains("FindMissingBlobs cache-entry"));
  CHECK_THAT(engine.calls(), !Catch::Contains("FindMissingBlobs dependency-manifest"));
  // With the engine layer on, its entries hold what a job's dependency
  // manifest would: none is asked for or stored; each action is executed
  // without asking the action cache first (nothing says it ran there).
  CHECK_THAT(engine.calls(), Catch::Contains("GetActionResult cache-entry"));
  CHECK_THAT(engine.calls(), !Catch::Contains("dependency-manifest"));
  CHECK_THAT(engine.calls(), Catch::Contains("Execute failed"));
  CHECK_THAT(engine.calls(), !Catch::Contains("GetActionResult device"));
  CHECK_THAT(engine.calls(), !Catch::Contains("GetActionResult host-ir"));
  // Small uploads go without asking first: fewer FindMissingBlobs than executions.
  CHECK(count_occurrences(engine.calls(), "FindMissingBlobs ") < count_occurrences(engine.calls(), "Execute failed"));

  // A fresh build, an empty local cache: all 13 jobs from the engine's CAS.
  fs::remove_all(project / "build");
  auto fresh = build(project, tmp / "cache-2", {"--remote-execution", engine.url()});
  INFO(fresh.err);
  REQUIRE(fresh.exit_code == 0);
  CHECK_THAT(fresh.err, Catch::Contains("13 jobs: 13 from cache, 0 run"));
  CHECK_THAT(engine.calls(), Catch::Contains("GetActionResult stored"));
  CHECK_THAT(engine.calls(), Catch::Contains("ByteStream Read"));
  CHECK(engine_layer_hits(tmp / "cache-2") >= 13);
  CHECK(objects(project / "build") == expected);
  CHECK(run_tool({(project / "build/vector").string()}, project, kMandatory).out == kExpected);
}

// An engine whose CAS evicted an input the client sent before (its record of
// what the CAS holds is then wrong): Execute answers FAILED_PRECONDITION, the
// client sends the action's blobs again and executes once more, with no warning.
TEST_CASE("remote execution: an input the engine evicted is sent again, and the job executes with no warning",
          "[integration][remote-execution]") {
  TempDir tmp("ob-reapi-evict");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  const auto expected = local_reference(project, tmp / "cache-local");
  LyingEngine engine(tmp / "engine", "evicting");
  auto r = build(project, tmp / "cache", {"--remote-execution", engine.url()});
  INFO(r.err);
  INFO(engine.calls());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning: remote_execution") == std::string::npos);
  const std::string calls = engine.calls();
  CHECK(count_occurrences(calls, "Execute evicted") >= 3);
  // Each evicted action executed once more: its dropped action and command
  // were sent again (else that Execute is refused, and the engine warned about).
  CHECK(count_occurrences(calls, "Execute failed") == count_occurrences(calls, "Execute evicted"));
  CHECK(objects(project / "build") == expected);
}
// A make -j4 run of 6 launcher compiles: the worker is asked --version once
// (#54: 3.7 times a run before; clang-22 and the cc1 that -### names are one
// binary, asked once; the concurrent compiles wait for the first's answer),
// and once again in the next make run.
TEST_CASE("remote execution: a make -j4 run asks the worker's compiler --version once",
          "[integration][remote-execution][launcher]") {
  TempDir tmp("ob-reapi-check-once");
  LyingEngine engine(tmp / "engine", "strict-store");  // honest; each Execute fails the compile (reruns here)
  std::string objects;
  for (int i = 0; i < 6; ++i) objects += " s" + std::to_string(i) + ".o";
  write_file(tmp / "Makefile", "CC = " + std::string(OB_BINARY) + " /usr/bin/clang-22\nall:" + objects +
                                   "\n%.o: %.c\n\t$(CC) -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -c $< -o $@\n");
  const Env env{{"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()},
                {"OFFLOAD_BUILD_REMOTE_EXECUTION", engine.url()},
                {"OFFLOAD_BUILD_BASE_DIR", tmp.path().string()},
                {"OFFLOAD_BUILD_CONFIG", std::nullopt},
                {"MAKEFLAGS", std::nullopt}};
  for (int run = 1; run <= 2; ++run) {  // each run's sources new to the engine: its jobs go
    for (int i = 0; i < 6; ++i)
      write_file(tmp / ("s" + std::to_string(i) + ".c"),
                 "int f" + std::to_string(i) + "(void) {\n  int v = 0;\n#pragma omp target map(from: v)\n  v = " +
                     std::to_string(run) + ";\n  return v;\n}\n");
    fs::remove_all(tmp / "cache");
    for (int i = 0; i < 6; ++i) fs::remove(tmp / ("s" + std::to_string(i) + ".o"));
    auto r = run_tool({"make", "-j4", "-s"}, tmp.path(), env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    INFO(engine.calls());
    CHECK(count_occurrences(engine.calls(), "Execute compiler check") == size_t(run));
    CHECK(count_occurrences(engine.calls(), "Execute failed") >= size_t(6 * run));  // the compiles went
    CHECK(r.err.find("warning") == std::string::npos);
  }
}

#endif
