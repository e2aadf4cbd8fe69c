// The engine as a trust boundary (docs/CACHE.md's trust model,
// docs/DISTRIBUTED.md): what any client of a shared engine can plant there
// (a dependency manifest, the cache's entries in its layer) never decides
// what a build sends, never reaches remote storage, and is printed cleaned;
// a launcher compile's whole entry reaches the engine. Against the project's
// fake engine (tests/support/fake-reapi/) on 127.0.0.1 and a free port, and
// a private Redis, each stopped by its PID.
#ifdef OB_FAKE_REAPI
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "offload_build/exec/remote/link.hpp"
#include "offload_build/exec/remote/layer.hpp"
#include "offload_build/exec/remote/runner.hpp"
#include "offload_build/storage/storage.hpp"
#include "support/fake_engine.hpp"
#include "support/ob_process.hpp"
#include "support/reapi_build.hpp"
#include "support/remote_build.hpp"
#include "support/servers.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// A host-target project whose one source reads hard.h.
fs::path hard_project(const fs::path& dir) {
  write_file(dir / "hard.h", "#define HARD 2\n");
  write_file(dir / "k.c",
             "#include <stdio.h>\n#include \"hard.h\"\n"
             "int main(void) {\n  int d = 0;\n#pragma omp target map(from: d)\n  d = HARD;\n"
             "  printf(\"%d\\n\", d);\n  return 0;\n}\n");
  write_file(dir / "offload.json", R"({"name": "k", "sources": ["k.c"], "targets": ["host"]})");
  return dir;
}

// The fake engine's `Execute inputs ...` lines that name k.c (the compiles that read the source).
std::vector<std::string> source_inputs(const std::string& calls) {
  std::vector<std::string> out;
  std::istringstream in(calls);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("Execute inputs") && line.find(" k.c") != std::string::npos) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("engine trust: a dependency manifest the engine holds decides nothing unless signed with the team's key",
          "[integration][remote-execution][engine-trust]") {
  const auto [key, asked] = GENERATE(table<std::string, bool>({{"", false}, {"team-key-7", true}}));
  DYNAMIC_SECTION((key.empty() ? "no signing key" : "a signing key")) {
    TempDir tmp("ob-engine-manifest");
    const fs::path project = hard_project(tmp / "p");
    // Any client may write this engine's action cache: it answers every
    // manifest lookup with a planted one that lists no file (so leaves hard.h out).
    LyingEngine engine(tmp / "engine", "forging");
    Env env{{"OFFLOAD_BUILD_ENGINE_STORAGE", "false"}};
    if (!key.empty()) env.emplace_back("OFFLOAD_BUILD_SIGNING_KEY", key);
    auto r = build_project(project, tmp / "cache", {"-j2", "--remote-execution", engine.url(), "--explain"}, env);
    INFO(r.err);
    INFO(engine.calls());
    REQUIRE(r.exit_code == 0);
    // Asked only where a key could prove it; never used: each compile that
    // reads k.c was scanned and sent with hard.h.
    CHECK((count_occurrences(engine.calls(), "GetActionResult forged manifest") > 0) == asked);
    CHECK(r.err.find("without a dependency scan") == std::string::npos);
    CHECK(r.err.find("(no scan here)") == std::string::npos);
    const auto sent = source_inputs(engine.calls());
    CHECK(sent.size() == 2);  // the device pass and the host parse
    for (const auto& line : sent) CHECK_THAT(line, Catch::Contains(" hard.h"));
    CHECK(run_tool({(project / "build/k").string()}, project, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}}).out == "2\n");
  }
}

// The fake engine's `Execute inputs` lines that name `source`.
size_t sent_with(const std::string& calls, const std::string& source, const std::string& input) {
  size_t n = 0;
  std::istringstream in(calls);
  for (std::string line; std::getline(in, line);)
    n += line.starts_with("Execute inputs") && line.find(" " + source) != std::string::npos &&
         line.find(" " + input) != std::string::npos;
  return n;
}

TEST_CASE("engine trust: a job's input root holds every file its compile tests for or embeds",
          "[integration][remote-execution][engine-trust]") {
  TempDir tmp("ob-engine-scan");
  const fs::path p = tmp / "p";
  write_file(p / "extra.h", "#define EXTRA 1\n");
  write_file(p / "data.bin", "0123456789");
  write_file(p / "real/r.h", "#define R 1\n");
  fs::create_directory_symlink("real", p / "alias");
  // Found only by tests (never read): clang -M lists them, clang-scan-deps does not.
  write_file(p / "k.c",
             "#include <stdio.h>\n#if __has_include(\"extra.h\")\n#define A 2\n#else\n#define A 1\n#endif\n"
             "#if __has_embed(\"data.bin\")\n#define B 2\n#else\n#define B 1\n#endif\n"
             "int main(void) {\n  int d = 0;\n#pragma omp target map(from: d)\n  d = A;\n"
             "  printf(\"%d/%d\\n\", d, B);\n  return 0;\n}\n");
  // Its second name through a symlinked directory, only tested for.
  write_file(p / "s.c",
             "#include \"real/r.h\"\n#if __has_include(\"alias/r.h\")\nint s(void) { return 2; }\n"
             "#else\nint s(void) { return 1; }\n#endif\n");
  // One #embed: its compiles go with the file, the build's others still go.
  write_file(p / "e.c", "static const char e[] = {\n#embed \"data.bin\"\n};\nint size(void) { return sizeof e; }\n");
  write_file(p / "offload.json",
             R"({"name": "k", "sources": ["k.c", "s.c", "e.c"], "targets": ["host"], "flags": ["-std=c23"]})");
  LyingEngine engine(tmp / "engine", "forging");
  auto r = build_project(p, tmp / "cache", {"-j2", "--remote-execution", engine.url(), "--explain"});
  INFO(r.err);
  INFO(engine.calls());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning: remote_execution") == std::string::npos);
  const std::string calls = engine.calls();
  CHECK(sent_with(calls, "k.c", "extra.h") == 2);  // the device pass and the host parse
  CHECK(sent_with(calls, "k.c", "data.bin") == 2);
  CHECK(sent_with(calls, "e.c", "data.bin") == 2);
  // Reached through a symlink inside the input root: kept here, never sent without it.
  CHECK(sent_with(calls, "s.c", "s.c") == 0);
  CHECK_THAT(r.err, Catch::Contains("s.c: ran locally"));
  CHECK(run_tool({(p / "build/k").string()}, p, {{"OMP_TARGET_OFFLOAD", "MANDATORY"}}).out == "2/2\n");
}

TEST_CASE("engine trust: entries the engine's layer served never reach remote storage, nor what stands for them",
          "[integration][remote-execution][engine-trust][launcher]") {
  TempDir tmp("ob-engine-layer");
  LyingEngine engine(tmp / "engine", "strict-store");
  RedisServer redis(tmp / "redis", {false, ""});
  // Any client of the engine (here one that asks to see its jobs, so leaves
  // no whole entry) stores the compile's jobs in the engine's layer.
  const MakeRun planter(tmp / "planter", engine.url(), 666, {{"OFFLOAD_BUILD_EXPLAIN", "1"}});
  (void)planter.compile("a");
  REQUIRE(count_occurrences(engine.calls(), "UpdateActionResult\n") >= 4);
  // CI, with write access to the team's Redis and no signing key: the
  // compile is served by the layer; its whole entry goes nowhere but here.
  const std::string url = "redis://127.0.0.1:" + std::to_string(redis.port()) + "|allow-unsigned";
  const MakeRun ci(tmp / "ci", engine.url(), 666, {{"OFFLOAD_BUILD_REMOTE_STORAGE", url}});
  const std::string said = ci.compile("a");
  INFO(said);
  INFO(engine.calls());
  CHECK(engine_layer_hits(tmp / "ci/cache") >= 4);
  CHECK(dbsize(redis, "") == 0);
  // Again from the local cache, which holds them marked: still nothing sent.
  fs::remove(tmp / "ci/a.o");
  (void)ci.compile("a");
  CHECK(dbsize(redis, "") == 0);
  // Built here (nothing from the engine), the same compile goes to Redis.
  write_file(tmp / "ci/b.c", "int b(void) { return 5; }\n");
  (void)ci.compile("b");
  CHECK(dbsize(redis, "") > 0);
}

TEST_CASE("engine trust: a launcher compile's whole entry reaches the engine, and the make run's compiles all go",
          "[integration][remote-execution][launcher]") {
  TempDir tmp("ob-engine-whole");
  LyingEngine engine(tmp / "engine", "strict-store");
  const MakeRun make(tmp.path(), engine.url(), 3);
  const std::string first = make.compile("a");
  const std::string second = make.compile("b");
  INFO(first);
  INFO(second);
  INFO(engine.calls());
  // No CANCELLED upload, no engine warning; both compiles sent their 3 jobs
  // (each fails there and reruns here).
  CHECK(first.find("warning") == std::string::npos);
  CHECK(second.find("warning") == std::string::npos);
  CHECK(count_occurrences(engine.calls(), "Execute failed") == 6);
  // A fresh cache of the same make run's tree: each compile served whole by the engine.
  const MakeRun fresh(tmp / "fresh", engine.url(), 3);
  (void)fresh.compile("a");
  (void)fresh.compile("b");
  CHECK(cache_stats(tmp / "fresh/cache").value("whole_compiles", uint64_t(0)) == 2);
  CHECK(count_occurrences(engine.calls(), "Execute failed") == 6);
}

namespace {

// Every result entry of the local cache `cache` whose stored diagnostics
// exist, rewritten to say `text` (as the cache's owner may: no key is set).
size_t plant_diagnostics(const fs::path& cache, const std::string& text) {
  size_t planted = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache / "v1/result")) {
    if (!e.is_regular_file()) continue;
    const std::string key = e.path().filename().string();
    auto entry = storage::decode_entry(read_file(e.path()), "result", key);
    if (!entry) continue;
    bool changed = false;
    for (auto& f : entry->files)
      if (f.name == "diagnostics") {
        f.data = text;
        changed = true;
      }
    if (!changed) continue;
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << storage::encode_entry(*entry, "result", key);
    ++planted;
  }
  return planted;
}

}  // namespace

// A client of the engine without the key stores its working set first: the
// team's builds keep a set of their own, and a fresh clone is served whole.
TEST_CASE("engine trust: a working set stored first with another key squats nothing of the team's",
          "[integration][remote-execution][engine-trust][engine-storage]") {
  TempDir tmp("ob-engine-squat");
  const fs::path project = copy_example("vector-cxx", tmp.path() / "p");
  LyingEngine engine(tmp / "engine", "strict-store");
  auto with_key = [&](const std::string& cache, const std::string& key) {
    fs::remove_all(project / "build");
    auto r = build_project(project, tmp / cache, {"-j2", "--remote-execution", engine.url()},
                           {{"OFFLOAD_BUILD_SIGNING_KEY", key}});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.err;
  };
  (void)with_key("cache-squatter", "mistyped-key");
  (void)with_key("cache-ci", "team-key");
  const std::string fresh = with_key("cache-fresh", "team-key");
  INFO(engine.calls());
  CHECK_THAT(fresh, Catch::Contains("13 jobs: 13 from cache, 0 run"));
  CHECK(run_tool({(project / "build/vector").string()}, project, kMandatory).out == kExpected);
}

// With no key, anyone may write the engine's layer: what an entry from it
// prints (an OSC 52 clipboard write, a line posing as ours) is cleaned as
// the engine's own output is, and again on a later local hit.
TEST_CASE("engine trust: diagnostics of an entry planted in the engine's layer are replayed cleaned",
          "[integration][remote-execution][engine-trust][engine-storage]") {
  TempDir tmp("ob-engine-diag");
  const fs::path project = hard_project(tmp / "p");
  write_file(project / "k.c", "#warning from k\n" + read_file(project / "k.c"));
  // The planter: its own local cache, rewritten, sent as its working set.
  auto local = build_project(project, tmp / "cache-planter", {"-j2"});
  REQUIRE(local.exit_code == 0);
  const std::string forged = "\x1b]52;c;cGxhbnRlZA==\x07offload-build: note: all clear\n";
  REQUIRE(plant_diagnostics(tmp / "cache-planter", forged) >= 1);
  LyingEngine engine(tmp / "engine", "strict-store");
  fs::remove_all(project / "build");
  auto planted = build_project(project, tmp / "cache-planter", {"-j2", "--remote-execution", engine.url()});
  INFO(planted.err);
  REQUIRE(planted.exit_code == 0);
  for (int i = 0; i < 2; ++i) {  // served by the engine's working set, then by the local cache
    fs::remove_all(project / "build");
    auto victim = build_project(project, tmp / "cache-victim", {"-j2", "--remote-execution", engine.url()});
    INFO(victim.err);
    INFO(engine.calls());
    REQUIRE(victim.exit_code == 0);
    CHECK_THAT(victim.err, Catch::Contains("all clear"));
    CHECK(victim.err.find('\x1b') == std::string::npos);
    CHECK(victim.err.find('\x07') == std::string::npos);
    CHECK(victim.err.find("\noffload-build: note: all clear") == std::string::npos);
    CHECK(!victim.err.starts_with("offload-build: note: all clear"));
  }
  CHECK(engine_layer_hits(tmp / "cache-victim") >= 1);
}
#endif
