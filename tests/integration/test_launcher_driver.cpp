// Launcher mode against clang 22's own output, where the compile's driver
// speaks: remarks under -foffload-lto (the device bitcode's DIFile names the
// compilation directory), driver warnings said once (not once per driver
// command of the split, cold or from the cache), and -rpath in a compile.
#include <catch2/catch.hpp>

#include "integration/launcher_support.hpp"

using namespace ob;
using namespace ob::test;

namespace {

// `compile` + -c `src` by the compiler alone and through offload-build with
// OFFLOAD_BUILD_STABLE_NAMES=0 (kernel names from inodes, as plain clang):
// the same object and diagnostics, split (missed the cache, nothing unchanged).
void expect_equivalent_plain_names(const Launcher& l, const Argv& compile, const std::string& src) {
  INFO(util::shell_join(compile) << " " << src);
  auto ref = l.cc(concat(compile, {"-c", src, "-o", "ref.o"}));
  auto before = l.stats();
  auto got = l.ob(concat(compile, {"-c", src, "-o", "got.o"}), {{"OFFLOAD_BUILD_STABLE_NAMES", "0"}});
  INFO(got.err);
  REQUIRE(ref.exit_code == 0);
  REQUIRE(got.exit_code == 0);
  auto after = l.stats();
  CHECK(after["misses"].get<int>() > before["misses"].get<int>());
  CHECK(after["unchanged_by_reason"] == before["unchanged_by_reason"]);
  CHECK(got.err == ref.err);
  CHECK(read_file(l.tmp / "got.o") == read_file(l.tmp / "ref.o"));
}

}  // namespace

TEST_CASE("launcher: -foffload-lto with remarks: the object is clang's, its device bitcode names the compilation directory",
          "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  const Argv flags{kClang, "-fopenmp", "-nogpulib", kHostTargets, "-O2", "-foffload-lto", "-Rpass=openmp-opt"};
  const std::string absolute = (l.tmp / "saxpy.c").string();
  SECTION("stable names, relative source") { expect_equivalent(l, flags, "saxpy.c"); }
  SECTION("stable names, absolute source") { expect_equivalent(l, flags, absolute); }
  SECTION("OFFLOAD_BUILD_STABLE_NAMES=0, relative source") {
    expect_equivalent_plain_names(l, flags, "saxpy.c");
  }
  SECTION("OFFLOAD_BUILD_STABLE_NAMES=0, absolute source, missed remarks too") {
    expect_equivalent_plain_names(l, concat(flags, {"-Rpass-missed=openmp-opt"}), absolute);
  }
}

TEST_CASE("driver warnings are printed once, as clang prints them, cold and from the cache",
          "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  const std::string lib = l.tmp.path().string();
  const Argv flags{kClang, "-fopenmp", kHostTargets, "-O2", "-L", lib, "-Wl,-rpath," + lib};
  const Argv compile = concat(flags, {"-c", "saxpy.c", "-o", "w.o"});
  auto ref = l.cc(compile);
  REQUIRE(ref.exit_code == 0);
  REQUIRE(count_occurrences(ref.err, "[-Wunused-command-line-argument]") == 2);
  auto check = [&](const process::Captured& got) {
    INFO(got.err);
    REQUIRE(got.exit_code == 0);
    CHECK(got.err == ref.err);  // the same two warnings, each once
    CHECK(count_occurrences(got.err, "argument unused during compilation: '-L" + lib + "'") == 1);
    CHECK(count_occurrences(got.err, "-Wl,-rpath," + lib + ": 'linker' input unused") == 1);
  };
  SECTION("single parse, cold then warm") {
    check(l.ob(compile));
    auto before = l.stats();
    fs::remove(l.tmp / "w.o");
    check(l.ob(compile));
    CHECK(l.stats()["misses"] == before["misses"]);  // every pass served
    CHECK(l.stats()["unchanged_by_reason"].empty());
  }
  SECTION("two parses") { check(l.ob(compile, {{"OFFLOAD_BUILD_TWO_PARSE", "1"}})); }
  SECTION("the same object as clang's") { expect_equivalent(l, flags, "saxpy.c"); }
}

TEST_CASE("launcher: -rpath DIR in a compile is split and cached, with clang's warning once",
          "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  const std::string lib = l.tmp.path().string();
  const Argv flags{kClang, "-fopenmp", kHostTargets, "-O2", "-rpath", lib};
  const std::string ref_err = expect_equivalent(l, flags, "saxpy.c");  // split, same object and warning
  CHECK(count_occurrences(ref_err, "-rpath " + lib + ": 'linker' input unused") == 1);
  const Argv compile = concat(flags, {"-c", "saxpy.c", "-o", "r.o"});
  auto cold = l.ob(compile, {{"OFFLOAD_BUILD_VERBOSE", "1"}});
  REQUIRE(cold.exit_code == 0);
  CHECK_THAT(cold.err, Catch::Contains("offload-build: splitting into one host parse"));
  const std::string object = read_file(l.tmp / "r.o");
  fs::remove(l.tmp / "r.o");
  auto before = l.stats();
  auto warm = l.ob(compile);
  REQUIRE(warm.exit_code == 0);
  CHECK(warm.err == ref_err);
  CHECK(l.stats()["misses"] == before["misses"]);  // served
  CHECK(l.stats()["hits"].get<int>() > before["hits"].get<int>());
  CHECK(read_file(l.tmp / "r.o") == object);
  CHECK(l.stats()["unchanged_by_reason"].empty());
}
