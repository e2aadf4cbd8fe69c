// What a slow or hostile engine may cost a build (docs/DISTRIBUTED.md): one
// time budget for its calls, Execute's included, and a cap on the bytes of
// what it sends held at once; past either the build's remaining jobs run
// here with one warning, and the build passes. Against the project's fake
// engine (tests/support/fake-reapi/) on 127.0.0.1 and a free port, stopped by
// its PID. Sleeps only bound the engine's answers from below: the tests
// assert what the compiles said and which calls they made, never a time.
#ifdef OB_FAKE_REAPI
#include <catch2/catch.hpp>

#include <chrono>

#include "support/fake_engine.hpp"
#include "support/measured_run.hpp"
#include "support/ob_process.hpp"
#include "support/servers.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// a.c, b.c and c.c compiled through the launcher as one make run against
// the fake engine in `mode` (`attributes` after its URL): what they printed
// on stderr checked for the engine's one warning, as too slow, and its log
// for at most `at_most` calls `counted`: the seconds they took in all.
double slow_make_run(const fs::path& dir, const std::string& mode, int delay_ms, const std::string& attributes,
                     const std::string& counted, size_t at_most) {
  LyingEngine engine(dir / "engine", mode, delay_ms);
  const MakeRun make(dir, engine.url() + attributes, 1);
  write_file(dir / "c.c", "int c(void) {\n  int v = 0;\n#pragma omp target map(from: v)\n  v = 3;\n  return v;\n}\n");
  const auto start = std::chrono::steady_clock::now();
  std::string err;
  for (const char* name : {"a", "b", "c"}) err += make.compile(name);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(err);
  INFO(engine.calls());
  CHECK(count_occurrences(err, "warning: remote_execution") == 1);
  CHECK_THAT(err, Catch::Contains("too slow: its calls took"));
  CHECK(count_occurrences(engine.calls(), counted) <= at_most);
  return seconds;
}

}  // namespace

// Each GetActionResult answered (a miss) after 4.5 s, inside connect-timeout
// (5 s, the default): before, no call spent any budget, and the 3 compiles'
// 9 jobs and compiler check waited 4.5 s each (over 40 s), with no warning.
// Now each call is allowed 250 ms: budget 6 s + 1 s - 0.25 s = 6.75 s for the
// run; the second call runs it out.
TEST_CASE("engine budget: an engine answering each call in 4.5 s, inside connect-timeout, costs a make run one budget",
          "[integration][remote-execution][engine-budget][launcher]") {
  TempDir tmp("ob-engine-slow-calls");
  // At most 3 calls answered: before, every job's (over 40 s of sleeps).
  (void)slow_make_run(tmp.path(), "slow-failing", 4500, "|call-timeout=6s|jobs=1", "GetActionResult", 3);
}

// Each Execute answered after 4 s, the compile failing there (no engine
// fault: the job reruns here), with no execution metadata: an engine that
// gives no times is allowed call-timeout (2 s) for the command's run, the
// rest counts. Budget 2.75 s; each Execute costs 1.75 s of it. Before: all
// 9 Executes (36 s), no warning.
TEST_CASE("engine budget: Executes answered slowly draw on the budget past the command's run",
          "[integration][remote-execution][engine-budget][launcher]") {
  TempDir tmp("ob-engine-slow-execute");
  (void)slow_make_run(tmp.path(), "slow-execute", 4000, "|call-timeout=2s|jobs=1", "Execute failed slowly", 3);
}

namespace {

// A host-target project of 9 sources (27 compile jobs and the link).
fs::path nine_sources(const fs::path& dir) {
  std::string sources, calls;
  for (int i = 0; i < 9; ++i) {
    const std::string name = "s" + std::to_string(i);
    write_file(dir / (name + ".c"), "int " + name + "(void) {\n  int v = 0;\n#pragma omp target map(from: v)\n  v = " +
                                        std::to_string(i) + ";\n  return v;\n}\n");
    sources += (i ? ", \"" : "\"") + name + ".c\"";
    calls += " + " + name + "()";
  }
  write_file(dir / "main.c", "int s0(void), s1(void), s2(void), s3(void), s4(void), s5(void), s6(void), s7(void), "
                             "s8(void);\nint main(void) { return 0" + calls + " == 36 ? 0 : 1; }\n");
  write_file(dir / "offload.json",
             R"({"name": "nine", "sources": [)" + sources + R"(, "main.c"], "targets": ["host"]})");
  return dir;
}

Measured build_measured(const fs::path& project, const fs::path& cache, const std::string& url) {
  fs::remove_all(project / "build");
  Env env{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()},
          {"OFFLOAD_BUILD_REMOTE_EXECUTION", url.empty() ? std::nullopt : std::optional<std::string>(url)},
          {"OFFLOAD_BUILD_CONFIG", std::nullopt}};
  return run_measured({OB_BINARY, "-C", project.string(), "build", "-j2"}, project, env);
}

}  // namespace

// Every value the engine is asked for is 60 MiB (under the layer's 64 MiB a
// value, so each is read), every result's text 60 MiB. Before: 16 lookups at
// once each held one, and more (a build of 29 jobs peaked at ~800 MB against
// ~90 MB local). Now a build holds at most 256 MiB of what the engine sends
// at once, and a value over its own cap (a dependency manifest's 4 MiB) is
// refused unread with the engine's one warning.
TEST_CASE("engine budget: a hostile engine's 60 MiB values add less than 400 MB to a build's peak",
          "[integration][remote-execution][engine-budget][memory]") {
  TempDir tmp("ob-engine-bloated");
  const fs::path project = nine_sources(tmp / "p");
  const Measured local = build_measured(project, tmp / "cache-local", "");
  INFO(local.err);
  REQUIRE(local.exit_code == 0);
  LyingEngine engine(tmp / "engine", "bloated");
  const Measured hostile = build_measured(project, tmp / "cache-hostile", engine.url());
  INFO(hostile.err);
  INFO("peak RSS: local " << local.peak_rss_mb << " MB, against the bloated engine " << hostile.peak_rss_mb
                          << " MB; " << local.seconds << " s and " << hostile.seconds << " s");
  REQUIRE(hostile.exit_code == 0);
  CHECK(count_occurrences(hostile.err, "warning: remote_execution") <= 1);
  CHECK(hostile.peak_rss_mb < local.peak_rss_mb + 400);
  CHECK(run_tool({(project / "build/nine").string()}, project).exit_code == 0);
}

// One launcher compile against the same engine: before, 232-292 MB (its
// lookups each held a 60 MiB value at once). The same cap holds.
TEST_CASE("engine budget: one launcher compile against an engine of 60 MiB values adds less than 400 MB",
          "[integration][remote-execution][engine-budget][memory][launcher]") {
  TempDir tmp("ob-engine-bloated-launch");
  LyingEngine engine(tmp / "engine", "bloated");
  const MakeRun make(tmp.path(), engine.url(), 1);
  auto argv = [&](const char* out) {  // run_measured runs it in this directory: paths made absolute
    return std::vector<std::string>{OB_BINARY, "/usr/bin/clang-22", "-fopenmp",
                                    "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", (tmp / "a.c").string(),
                                    "-o", (tmp / out).string()};
  };
  Env plain = make.env;
  plain.emplace_back("OFFLOAD_BUILD_DISABLE", "1");
  const Measured base = run_measured(argv("plain.o"), tmp.path(), plain);
  INFO(base.err);
  REQUIRE(base.exit_code == 0);
  const Measured r = run_measured(argv("a.o"), tmp.path(), make.env);
  INFO(r.err);
  INFO("peak RSS: the compiler alone " << base.peak_rss_mb << " MB, against the bloated engine " << r.peak_rss_mb
                                       << " MB");
  REQUIRE(r.exit_code == 0);
  CHECK(count_occurrences(r.err, "warning: remote_execution") <= 1);
  CHECK(r.peak_rss_mb < base.peak_rss_mb + 400);
  CHECK(fs::exists(tmp / "a.o"));
}

#endif
