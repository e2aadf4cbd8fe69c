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

#include "support/ob_process.hpp"
#include "support/reapi_build.hpp"
#include "support/servers.hpp"

using namespace ob;
using namespace ob::test;

namespace {

struct LyingEngine {
  int port = free_port();
  fs::path log;
  ServerProcess process;
  LyingEngine(const fs::path& dir, const std::string& mode) : log(dir / ("fake-reapi-" + mode + ".log")) {
    fs::create_directories(dir);
    process = ServerProcess({OB_FAKE_REAPI, "--port", std::to_string(port), "--mode", mode}, log);
    if (!wait_until([&] { return can_connect_tcp(port); }, process))
      throw std::runtime_error("the fake REAPI engine did not start; see " + log.string());
  }
  std::string url() const { return "grpc://127.0.0.1:" + std::to_string(port); }
  std::string calls() const { return read_file(log); }
};

}  // namespace

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
    if (mode == "bad-digest") CHECK_THAT(engine.calls(), Catch::Contains("ByteStream Read"));
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
  for (const char* name : {"a", "b"})
    write_file(tmp / (std::string(name) + ".c"), std::string("int ") + name +
                                                     "(void) {\n  int v = 0;\n#pragma omp target map(from: v)\n"
                                                     "  v = 1;\n  return v;\n}\n");
  LyingEngine engine(tmp / "engine", "bad-digest");
  // Both compiles are children of this test process: one build, as under make.
  const Env env{{"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()},
                {"OFFLOAD_BUILD_REMOTE_EXECUTION", engine.url()},
                {"OFFLOAD_BUILD_EXPLAIN", "1"},
                {"OFFLOAD_BUILD_BASE_DIR", tmp.path().string()},
                {"OFFLOAD_BUILD_CONFIG", std::nullopt},
                {"OFFLOAD_BUILD_REMOTE_STORAGE", std::nullopt},
                {"MAKEFLAGS", std::nullopt}};
  auto compile = [&](const std::string& name) {
    auto r = run_ob({"/usr/bin/clang-22", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", name + ".c",
                     "-o", name + ".o"},
                    tmp.path(), env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(fs::exists(tmp / (name + ".o")));
    return r.err;
  };
  const std::string first = compile("a");
  INFO(first);
  CHECK(count_occurrences(first, "warning: remote_execution") == 1);
  REQUIRE(count_occurrences(engine.calls(), "GetCapabilities") == 1);
  const std::string second = compile("b");
  INFO(second);
  INFO(engine.calls());
  CHECK(second.find("warning") == std::string::npos);  // said once per build
  CHECK_THAT(second, Catch::Contains("the engine failed earlier in this build"));
  CHECK(count_occurrences(engine.calls(), "GetCapabilities") == 1);  // never asked again
}
#endif
