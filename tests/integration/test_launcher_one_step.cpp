// Launcher mode's one-step build (`clang -fopenmp <targets> a.c b.c -o prog`)
// against clang 22: split into each source's jobs and the offload link, the
// same program byte for byte, no object left behind, every job served from
// the cache the second time; the forms not split run unchanged, counted.
#include <catch2/catch.hpp>

#include <set>

#include "integration/launcher_support.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// Two translation units with kernels, a header and a define, libm.
void write_sources(const fs::path& dir) {
  write_file(dir / "inc/k.h", "#define SCALE 3\nint twice(int x);\n");
  write_file(dir / "main.c",
             "#include <math.h>\n#include <stdio.h>\n#include \"k.h\"\n"
             "int main(void) {\n  int r = 0;\n#pragma omp target map(tofrom: r)\n  r = SCALE * OFFSET;\n"
             "  printf(\"%d %d %.1f\\n\", r, twice(r), sqrt((double)r));\n  return 0;\n}\n");
  write_file(dir / "two.c",
             "#include \"k.h\"\nint twice(int x) {\n  int r = 0;\n#pragma omp target map(tofrom: r)\n"
             "  r = 2 * x;\n  return r;\n}\n");
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("a one-step compile and link is split into cached jobs and gives clang's program",
          "[launcher][integration]") {
  Launcher l;
  write_sources(l.tmp.path());
  const Env plain_names{{"OFFLOAD_BUILD_STABLE_NAMES", "0"}};
  auto build = [&](const Argv& flags, const std::string& prog) {
    return concat(flags, {"main.c", "two.c", "-lm", "-o", prog});
  };
  // `stable`: offload-build's stable kernel names, given to clang too;
  // else OFFLOAD_BUILD_STABLE_NAMES=0 (names from inodes, as plain clang).
  auto same_program = [&](const Argv& flags, bool stable = false) {
    INFO(util::shell_join(flags));
    const Env ob_env = stable ? Env{} : plain_names;
    const Env names = stable ? stable_names_env(l.ob(concat({"--dry-run", "wrap", "--"}, build(flags, "got"))).out)
                             : Env{};
    if (stable) REQUIRE(names.size() == 2);
    auto ref = l.cc(build(flags, "ref"), names);
    REQUIRE(ref.exit_code == 0);
    auto before = l.stats();
    auto before_files = names_in(l.tmp.path());
    before_files.erase("cache");  // the test's cache
    auto got = l.ob(build(flags, "got"), ob_env);
    INFO(got.err);
    REQUIRE(got.exit_code == 0);
    CHECK(got.err == ref.err);
    auto after = l.stats();
    CHECK(after["unchanged_by_reason"] == before["unchanged_by_reason"]);  // split
    const int jobs = after["misses"].get<int>() - before["misses"].get<int>();
    CHECK(jobs == 9);  // per source host-IR, device, package, host codegen; the link
    CHECK(read_file(l.tmp / "got") == read_file(l.tmp / "ref"));
    // Only the program is new: no object, no work directory.
    auto now = names_in(l.tmp.path());
    now.erase("got");
    now.erase("cache");  // the test's cache
    CHECK(now == before_files);
    // The second build: every job served, the same program, which runs.
    fs::remove(l.tmp / "got");
    before = l.stats();
    auto warm = l.ob(build(flags, "got"), ob_env);
    REQUIRE(warm.exit_code == 0);
    CHECK(warm.err == ref.err);
    after = l.stats();
    CHECK(after["misses"] == before["misses"]);
    CHECK(after["hits"].get<int>() - before["hits"].get<int>() == jobs);
    CHECK(read_file(l.tmp / "got") == read_file(l.tmp / "ref"));
    auto run = run_tool({(l.tmp / "got").string()}, l.tmp.path(), {{"OMP_TARGET_OFFLOAD", "MANDATORY"}});
    CHECK(run.exit_code == 0);
    CHECK(run.out == "12 24 3.5\n");
  };
  SECTION("-O2 -I -D -l") {
    same_program({kClang, "-fopenmp", kHostTargets, "-O2", "-Iinc", "-DOFFSET=4"});
  }
  SECTION("no -O, link-only options") {
    same_program({kClang, "-fopenmp", kHostTargets, "-Iinc", "-DOFFSET=4", "-L", l.tmp.path().string(),
                  "-Wl,-rpath," + l.tmp.path().string()});
  }
  SECTION("stable kernel names (clang given the same names)") {
    same_program({kClang, "-fopenmp", kHostTargets, "-O2", "-Iinc", "-DOFFSET=4"}, true);
  }
  SECTION("with an object among the sources") {
    REQUIRE(l.cc({kClang, "-c", "-x", "c", "/dev/null", "-o", "empty.o"}).exit_code == 0);
    auto ref = l.cc({kClang, "-fopenmp", kHostTargets, "-Iinc", "-DOFFSET=4", "main.c", "empty.o", "two.c",
                     "-lm", "-o", "ref"});
    auto got = l.ob({kClang, "-fopenmp", kHostTargets, "-Iinc", "-DOFFSET=4", "main.c", "empty.o", "two.c",
                     "-lm", "-o", "got"}, plain_names);
    REQUIRE(got.exit_code == 0);
    CHECK(l.stats()["unchanged_by_reason"].empty());
    CHECK(read_file(l.tmp / "got") == read_file(l.tmp / "ref"));
  }
}

TEST_CASE("one-step builds not split run unchanged, counted by reason", "[launcher][integration]") {
  Launcher l;
  write_sources(l.tmp.path());
  write_file(l.tmp / "three.cpp", "int three() { return 3; }\n");
  auto same = [&](const Argv& cmd, const std::string& reason) {
    INFO(util::shell_join(cmd));
    auto ref = l.cc(concat(cmd, {"-o", "ref"}));
    auto before = l.stats()["unchanged_by_reason"];
    auto got = l.ob(concat(cmd, {"-o", "got"}), {{"OFFLOAD_BUILD_VERBOSE", "1"}});
    CHECK(got.exit_code == ref.exit_code);
    CHECK_THAT(got.err, Catch::Contains("running the compiler unchanged: " + reason));
    auto after = l.stats()["unchanged_by_reason"];
    CHECK(after["one-step build not split"].get<int>() ==
          before.value("one-step build not split", 0) + 1);
  };
  const Argv flags{kClang, "-fopenmp", kHostTargets, "-Iinc", "-DOFFSET=4"};
  SECTION("sources of two languages") {
    same(concat(flags, {"main.c", "two.c", "three.cpp", "-lm"}), "a one-step build with sources of two languages");
  }
  SECTION("-x") { same(concat(flags, {"-x", "c", "main.c", "two.c", "-lm"}), "a one-step build with option -x"); }
  SECTION("a dependency file") {
    same(concat(flags, {"-MD", "main.c", "two.c", "-lm"}), "a one-step build with option -MD");
  }
}
