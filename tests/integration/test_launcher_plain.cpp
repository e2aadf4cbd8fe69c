// Launcher mode caches every compile as ccache does (issue #52, item 5): a
// plain C/C++ compile, host-only OpenMP, GCC, each one whole job served the
// second time, its object and depfile restored, its warnings replayed; a
// failing compile stored never; what stays uncacheable says why.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "integration/launcher_support.hpp"
#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

int counter(const nlohmann::json& stats, const char* name) { return stats.value(name, 0); }
int unchanged(const nlohmann::json& stats, const char* reason) {
  return stats["unchanged_by_reason"].value(reason, 0);
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  ob::test::write_file(p, text);
}

// A TU reading a header found through -I.
void plain_sources(const Launcher& l) {
  write(l.tmp / "inc/q.hpp", "inline int twice(int x) { return 2 * x; }\n");
  write(l.tmp / "q.cpp", "#include \"q.hpp\"\nint run(int x) { return twice(x) + 1; }\n");
}

}  // namespace

TEST_CASE("a plain C++ compile is cached whole: the second is a hit, byte-identical to clang's",
          "[launcher][plain][integration]") {
  Launcher l;
  plain_sources(l);
  const Argv compile{kClangxx, "-O2", "-Iinc", "-c", "q.cpp", "-o", "q.o"};
  auto ref = l.cc({kClangxx, "-O2", "-Iinc", "-c", "q.cpp", "-o", "ref.o"});
  REQUIRE(ref.exit_code == 0);
  auto first = l.ob(compile);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  auto s1 = l.stats();
  CHECK(counter(s1, "misses") == 1);
  CHECK(counter(s1, "hits") == 0);
  CHECK(unchanged(s1, "not an offload compile") == 0);
  CHECK(read_file(l.tmp / "q.o") == read_file(l.tmp / "ref.o"));
  fs::remove(l.tmp / "q.o");
  auto second = l.ob(compile);
  REQUIRE(second.exit_code == 0);
  CHECK(second.err.empty());
  auto s2 = l.stats();
  CHECK(counter(s2, "hits") == 1);
  CHECK(counter(s2, "misses") == 1);
  CHECK(read_file(l.tmp / "q.o") == read_file(l.tmp / "ref.o"));
  CHECK_FALSE(fs::exists(l.tmp / "q.o.offload-build"));  // the work directory is gone
  CHECK(temp_outputs(l.tmp.path()).empty());

  SECTION("a header edit misses and rebuilds right") {
    write(l.tmp / "inc/q.hpp", "inline int twice(int x) { return 3 * x; }\n");
    auto edited = l.ob(compile);
    REQUIRE(edited.exit_code == 0);
    CHECK(counter(l.stats(), "misses") == 2);
    auto ref2 = l.cc({kClangxx, "-O2", "-Iinc", "-c", "q.cpp", "-o", "ref2.o"});
    CHECK(read_file(l.tmp / "q.o") == read_file(l.tmp / "ref2.o"));
    CHECK(read_file(l.tmp / "q.o") != read_file(l.tmp / "ref.o"));
  }
  SECTION("a header that appears earlier in the search path misses") {
    write(l.tmp / "first/q.hpp", "inline int twice(int x) { return 4 * x; }\n");
    const Argv two{kClangxx, "-O2", "-Ifirst", "-Iinc", "-c", "q.cpp", "-o", "q.o"};
    fs::remove(l.tmp / "first/q.hpp");
    REQUIRE(l.ob(two).exit_code == 0);  // misses: another argv
    REQUIRE(l.ob(two).exit_code == 0);  // a hit
    CHECK(counter(l.stats(), "hits") == 2);
    write(l.tmp / "first/q.hpp", "inline int twice(int x) { return 4 * x; }\n");
    REQUIRE(l.ob(two).exit_code == 0);
    CHECK(counter(l.stats(), "hits") == 2);  // the lookup record saw first/q.hpp missing
    auto ref3 = l.cc({kClangxx, "-O2", "-Ifirst", "-Iinc", "-c", "q.cpp", "-o", "ref3.o"});
    CHECK(read_file(l.tmp / "q.o") == read_file(l.tmp / "ref3.o"));
  }
  SECTION("the caller's depfile is written and restored on a hit") {
    const Argv dep{kClangxx, "-O2", "-Iinc", "-MD", "-MF", "q.d", "-c", "q.cpp", "-o", "q.o"};
    auto refd = l.cc({kClangxx, "-O2", "-Iinc", "-MD", "-MF", "ref.d", "-c", "q.cpp", "-o", "q.o"});
    REQUIRE(l.ob(dep).exit_code == 0);
    const std::string text = read_file(l.tmp / "q.d");
    CHECK(text == read_file(l.tmp / "ref.d"));
    fs::remove(l.tmp / "q.d");
    REQUIRE(l.ob(dep).exit_code == 0);
    CHECK(counter(l.stats(), "hits") == 2);
    CHECK(read_file(l.tmp / "q.d") == text);
  }
}

TEST_CASE("a host-only -fopenmp compile, gcc and g++ are cached whole", "[launcher][plain][integration]") {
  Launcher l;
  plain_sources(l);
  write(l.tmp / "c.c", "int add(int a, int b) { return a + b; }\n");
  SECTION("host-only OpenMP") {
    write(l.tmp / "omp.cpp", "int sum(const int* a, int n) {\n  int s = 0;\n#pragma omp parallel for reduction(+:s)\n"
                             "  for (int i = 0; i < n; ++i) s += a[i];\n  return s;\n}\n");
    const Argv compile{kClangxx, "-fopenmp", "-O2", "-c", "omp.cpp", "-o", "omp.o"};
    REQUIRE(l.ob(compile).exit_code == 0);
    auto second = l.ob(compile);
    INFO(second.err);
    REQUIRE(second.exit_code == 0);
    auto s = l.stats();
    CHECK(counter(s, "hits") == 1);
    CHECK(counter(s, "misses") == 1);
    CHECK(unchanged(s, "not an offload compile") == 0);
  }
  SECTION("gcc -c and g++ -c") {
    const Argv gcc{"gcc", "-O2", "-c", "c.c", "-o", "c.o"};
    const Argv gxx{"g++", "-O2", "-Iinc", "-c", "q.cpp", "-o", "q.o"};
    auto refc = l.cc({"gcc", "-O2", "-c", "c.c", "-o", "refc.o"});
    auto refq = l.cc({"g++", "-O2", "-Iinc", "-c", "q.cpp", "-o", "refq.o"});
    for (int round = 0; round < 2; ++round) {
      auto a = l.ob(gcc);
      auto b = l.ob(gxx);
      INFO(a.err << b.err);
      REQUIRE(a.exit_code == 0);
      REQUIRE(b.exit_code == 0);
    }
    auto s = l.stats();
    CHECK(counter(s, "hits") == 2);
    CHECK(counter(s, "misses") == 2);
    CHECK(unchanged(s, "not clang") == 0);
    CHECK(read_file(l.tmp / "c.o") == read_file(l.tmp / "refc.o"));
    CHECK(read_file(l.tmp / "q.o") == read_file(l.tmp / "refq.o"));
  }
}

TEST_CASE("a cached compile replays its warnings, and a failing one is not stored and fails as the compiler",
          "[launcher][plain][integration]") {
  Launcher l;
  write(l.tmp / "w.c", "int f(int x) { int unused; return x; }\n");
  write(l.tmp / "bad.c", "int f(void) { return undeclared; }\n");
  SECTION("warnings") {
    for (const std::string cc : {kClang, std::string("gcc")}) {
      const Argv compile{cc, "-Wall", "-c", "w.c", "-o", "w.o"};
      auto ref = l.cc(compile);
      auto first = l.ob(compile);
      auto second = l.ob(compile);
      REQUIRE(ref.exit_code == 0);
      REQUIRE(second.exit_code == 0);
      CHECK_THAT(ref.err, Catch::Contains("unused"));
      CHECK(first.err == ref.err);
      CHECK(second.err == ref.err);
    }
    CHECK(counter(l.stats(), "hits") == 2);
  }
  SECTION("errors") {
    for (const std::string cc : {kClang, std::string("gcc")}) {
      const Argv compile{cc, "-c", "bad.c", "-o", "bad.o"};
      auto ref = l.cc(compile);
      REQUIRE(ref.exit_code != 0);
      for (int round = 0; round < 2; ++round) {
        auto got = l.ob(compile);
        CHECK(got.exit_code == ref.exit_code);
        CHECK(got.err == ref.err);
        CHECK_FALSE(fs::exists(l.tmp / "bad.o"));
      }
    }
    auto s = l.stats();
    CHECK(counter(s, "hits") == 0);
    CHECK(counter(s, "stores") == 0);
    CHECK(temp_outputs(l.tmp.path()).empty());
  }
}

TEST_CASE("what stays uncacheable says why in cache stats and under --explain", "[launcher][plain][integration]") {
  Launcher l;
  plain_sources(l);
  auto e = l.ob({"--explain", "wrap", "--", kClangxx, "-Iinc", "-E", "q.cpp", "-o", "q.i"});
  REQUIRE(e.exit_code == 0);
  CHECK_THAT(e.err, Catch::Contains("explain: q.i: not cached") && Catch::Contains("not a compile to an object"));
  auto gcc_e = l.ob({"gcc", "-Iinc", "-x", "c++", "-E", "q.cpp", "-o", "q2.i"});
  REQUIRE(gcc_e.exit_code == 0);
  const Argv to_stdout{"g++", "-Iinc", "-c", "q.cpp", "-o", "-"};
  CHECK(l.ob(to_stdout).exit_code == l.cc(to_stdout).exit_code);  // as g++ alone
  auto traced = l.ob({"--explain", "wrap", "--", "g++", "-Iinc", "-ftime-report", "-c", "q.cpp", "-o", "t.o"});
  REQUIRE(traced.exit_code == 0);
  CHECK_THAT(traced.err, Catch::Contains("explain: t.o: not cached") && Catch::Contains("-ftime-report"));
  auto s = l.stats();
  CHECK(unchanged(s, "not a compile to an object") == 3);
  CHECK(unchanged(s, "unsupported option") == 1);
  CHECK(s["unsupported_options"].value("-ftime-report", 0) == 1);
  CHECK(counter(s, "hits") + counter(s, "misses") == 0);
  // --no-cache, --dry-run and OFFLOAD_BUILD_DISABLE keep their meaning.
  const Argv compile{kClangxx, "-Iinc", "-c", "q.cpp", "-o", "q.o"};
  auto dry = l.ob(concat({"--dry-run", "wrap", "--"}, compile));
  CHECK(dry.out == util::shell_join(compile) + "\n");
  REQUIRE(l.ob(concat({"--no-cache", "wrap", "--"}, compile)).exit_code == 0);
  REQUIRE(l.ob(compile, {{"OFFLOAD_BUILD_DISABLE", "1"}}).exit_code == 0);
  auto after = l.stats();
  CHECK(counter(after, "hits") + counter(after, "misses") == 0);
  CHECK(unchanged(after, "OFFLOAD_BUILD_DISABLE") == 1);
}

TEST_CASE("an offload compile by a clang whose LLVM has no llvm-offload-binary is cached whole",
          "[launcher][plain][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  // An older LLVM's layout: bin/clang, and no llvm-offload-binary beside it.
  const fs::path clang = l.tmp / "llvm-old/bin/clang";
  write(clang, "#!/bin/sh\nexec " + kClang + " \"$@\"\n");
  fs::permissions(clang, fs::perms::owner_all);
  const Argv compile{clang.string(), "-fopenmp", kHostTargets, "-O2", "-c", "saxpy.c", "-o", "s.o"};
  auto first = l.ob(compile, {{"OFFLOAD_BUILD_VERBOSE", "1"}});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.err, Catch::Contains("caching the compile as one job (no LLVM installation"));
  fs::remove(l.tmp / "s.o");
  REQUIRE(l.ob(compile).exit_code == 0);
  CHECK(fs::exists(l.tmp / "s.o"));
  auto s = l.stats();
  CHECK(counter(s, "hits") == 1);
  CHECK(counter(s, "misses") == 1);
  CHECK(unchanged(s, "not clang") == 0);
}

// clang 22 under the -MD offload-build adds exits 0 and embeds nothing when
// an #embed names a missing file (clang alone: a fatal error); it writes no
// depfile then. The compile fails as clang alone does, and nothing is cached.
TEST_CASE("an #embed of a missing file fails as clang alone does, and is never cached",
          "[launcher][plain][integration]") {
  Launcher l;
  write(l.tmp / "e.c", "const char d[] = {\n#embed \"missing.bin\"\n};\nint size(void) { return sizeof d; }\n");
  const bool offload = GENERATE(false, true);
  DYNAMIC_SECTION((offload ? "an offload compile" : "a plain compile")) {
    Argv compile{kClang, "-std=c23", "-c", "e.c", "-o", "e.o"};
    if (offload) compile.insert(compile.begin() + 1, {"-fopenmp", kHostTargets});
    auto alone = run_tool(compile, l.tmp.path());
    REQUIRE(alone.exit_code == 1);
    fs::remove(l.tmp / "e.o");
    for (int i = 0; i < 2; ++i) {
      auto r = l.ob(compile);
      INFO(r.err);
      CHECK(r.exit_code == 1);
      CHECK_THAT(r.err, Catch::Contains("'missing.bin' file not found"));
      CHECK_FALSE(fs::exists(l.tmp / "e.o"));
    }
    const auto stats = l.stats();
    CHECK(counter(stats, "stores") == 0);
    CHECK(counter(stats, "hits") == 0);
  }
}
