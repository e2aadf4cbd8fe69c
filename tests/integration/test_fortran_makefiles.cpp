// Fortran as hand-written Makefiles build it (issue 54): a module file that
// another make job writes while a compile runs (a Makefile without the
// `user.o: module.o` edge) is never stored, and its absence is keyed; a
// compile with no module file at all fails as flang does.
#include <catch2/catch.hpp>

#include "launcher_support.hpp"
#include "support/ob_process.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kFlang = "/usr/bin/flang-22";

#define SKIP_WITHOUT_FLANG() \
  if (!fs::exists(kFlang)) OB_SKIP("flang-22 is not installed (scripts/setup.sh installs it)")

const char* const kMain = R"(program p
  use kinds
  real(rk) :: a(2)
  a = 1.0_rk / 3.0_rk
  print '(A,I0,A,G0)', 'rk = ', rk, ', a(1) = ', a(1)
end program
)";

// kinds.mod put in place after planning, deterministically: <tmp>/llvm/bin/flang-22
// is flang-22, whose listings (-###) name it for their -fc1 commands, but for
// the host parse (the -fc1 writing bitcode), before which it copies the
// module file <tmp>/place names into the working directory, once, as a make
// job compiling kind.f90 meanwhile would.
struct RacingFlang {
  Launcher& l;
  fs::path flang = l.tmp / "llvm/bin/flang-22";
  explicit RacingFlang(Launcher& launcher) : l(launcher) {
    fs::create_directories(flang.parent_path());
    write_file(flang, "#!/bin/sh\ncase \" $* \" in *\" -### \"*)\n  " + kFlang + " \"$@\" 2>&1 | sed 's|^ \"[^\"]*\" \"-fc1\"| \"" +
                          flang.string() + "\" \"-fc1\"|' >&2; exit 0;;\n*\" -emit-llvm-bc \"*)\n"
                      "  if [ -f '" + (l.tmp / "place").string() + "' ]; then cp \"$(cat '" +
                          (l.tmp / "place").string() + "')\" kinds.mod; rm '" + (l.tmp / "place").string() +
                          "'; fi;;\nesac\nexec " + kFlang + " \"$@\"\n");
    fs::permissions(flang, fs::perms::owner_all);
    for (const char* tool : {"clang", "clang++", "llvm-offload-binary", "clang-linker-wrapper"})
      fs::create_symlink(std::string(kLlvmBin) + "/" + tool, flang.parent_path() / tool);
    fs::create_symlink(fs::path(kLlvmBin).parent_path() / "lib", l.tmp / "llvm/lib");
  }
  // kinds.mod (and kind.o) of `rk`, built by flang-22 alone in <tmp>/rkN.
  fs::path module(int rk) const {
    const fs::path dir = l.tmp / ("rk" + std::to_string(rk));
    fs::create_directories(dir);
    write_file(dir / "kind.f90", "module kinds\n  integer, parameter :: rk = " + std::to_string(rk) + "\nend module\n");
    auto r = l.cc({kFlang, "-fopenmp", kHostTargets, "-J", dir.string(), "-c", (dir / "kind.f90").string(), "-o",
                   (dir / "kind.o").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return dir;
  }
  Argv compile() const { return {flang.string(), "-fopenmp", kHostTargets, "-c", "main.f90", "-o", "main.o"}; }
};

}  // namespace

TEST_CASE("launcher: a module file that appears while a compile runs is never stored, its absence keyed", "[launcher][flang][fortran-modules][integration]") {
  SKIP_WITHOUT_FLANG();
  Launcher l;
  RacingFlang racing(l);
  write_file(l.tmp / "main.f90", kMain);
  const fs::path rk8 = racing.module(8), rk4 = racing.module(4);

  // Planned with no kinds.mod; the rk = 8 one appears before flang reads it.
  write_file(l.tmp / "place", (rk8 / "kinds.mod").string());
  auto first = l.ob(racing.compile());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK_FALSE(fs::exists(l.tmp / "place"));  // the race happened

  // Planned again with no kinds.mod; the rk = 4 one appears: what flang reads
  // now decides the object, not the earlier compile's module.
  fs::remove(l.tmp / "kinds.mod");
  write_file(l.tmp / "place", (rk4 / "kinds.mod").string());
  auto second = l.ob(racing.compile());
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK_FALSE(fs::exists(l.tmp / "place"));  // the host parse ran
  REQUIRE(l.cc({kFlang, "-fopenmp", kHostTargets, "main.o", (rk4 / "kind.o").string(), "-o", "p"}).exit_code == 0);
  auto program = l.cc({(l.tmp / "p").string()});
  CHECK(program.out == "rk = 4, a(1) = .33333334\n");  // flang-22's own build's output

  // No module file at all: it fails as flang does (nothing stale served).
  fs::remove(l.tmp / "kinds.mod");
  auto alone = l.cc({kFlang, "-fopenmp", kHostTargets, "-c", "main.f90", "-o", "ref.o"});
  REQUIRE(alone.exit_code != 0);
  auto none = l.ob(racing.compile());
  INFO(alone.err);
  INFO(none.err);
  CHECK(none.exit_code == alone.exit_code);
  CHECK_THAT(none.err, Catch::Contains("Cannot parse module file"));
  CHECK_THAT(alone.err, Catch::Contains("Cannot parse module file"));

  // In place before planning: stored, and the next compile is served.
  fs::copy_file(rk4 / "kinds.mod", l.tmp / "kinds.mod");
  const auto before = l.stats();
  REQUIRE(l.ob(racing.compile()).exit_code == 0);
  const auto stored = l.stats();
  REQUIRE(l.ob(racing.compile()).exit_code == 0);
  const auto served = l.stats();
  CHECK(served.value("hits", 0) - stored.value("hits", 0) == 4);  // host parse, device, package, host codegen
  CHECK(stored.value("stores", 0) > before.value("stores", 0));
}

// In both source forms (statements from column 7).
const char* const kKinds = "      module kinds\n      implicit none\n      real, parameter :: third = 1.0 / 3.0\n"
                           "      end module\n";
const char* const kUser = "      program p\n      use kinds\n      implicit none\n"
                          "      print '(A,I0,A,G0)', 'kind = ', kind(third), ', third = ', third\n      end program\n";

TEST_CASE("a manifest's Fortran flags are read by flang's frontend: its passes cached, one it does not model said once", "[build][flang][fortran-modules][integration]") {
  SKIP_WITHOUT_FLANG();
  for (const std::string form : {"-ffixed-form", "-ffree-form"}) {
    INFO(form);
    TempDir tmp("ob-fflags");
    const fs::path dir = tmp / "p";
    fs::create_directories(dir);
    write_file(dir / "kinds.f90", kKinds);
    write_file(dir / "main.f90", kUser);
    auto manifest = [&](const std::string& flags) {
      write_file(dir / "offload.json", R"({"name": "k", "output": "k", "sources": ["kinds.f90", "main.f90"],
                  "targets": ["host"], "flags": [)" + flags + "]}");
    };
    manifest("\"-O2\", \"" + form + "\", \"-fdefault-real-8\", \"-fimplicit-none\"");
    const Env env{{"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()}, {"OFFLOAD_BUILD_EXPLAIN", std::nullopt}};
    auto first = run_ob({"build"}, dir, env);
    INFO(first.err);
    REQUIRE(first.exit_code == 0);  // no target region: the program links
    CHECK_THAT(first.err, !Catch::Contains("not cached"));
    CHECK(run_tool({(dir / "build/k").string()}, dir, {}).out == "kind = 8, third = .3333333333333333\n");
    fs::remove_all(dir / "build");
    auto again = run_ob({"build"}, dir, env);
    REQUIRE(again.exit_code == 0);
    const auto stats = cache_stats({}, env, dir);
    CHECK(stats.value("hits", 0) == 9);  // 2 sources x (host parse, device, package, host codegen), the link
    CHECK(stats["misses_by_reason"].value("uncacheable", 0) == 0);

    // A flag flang's frontend does not model: its 6 passes that read options uncached, said once.
    manifest("\"-O2\", \"" + form + "\", \"-fversion-loops-for-stride\"");
    auto unknown = run_ob({"build"}, dir, env);
    INFO(unknown.err);
    REQUIRE(unknown.exit_code == 0);
    CHECK(count_occurrences(unknown.err, "not cached") == 1);
    CHECK_THAT(unknown.err, Catch::Contains("offload-build: note: 6 compile jobs not cached: offload.json flags: "
                                            "option -fversion-loops-for-stride is not one offload-build splits for flang"));
  }
}

TEST_CASE("launcher: a second build directory's compiles of a module's user hit, byte-identical", "[launcher][flang][fortran-modules][integration]") {
  SKIP_WITHOUT_FLANG();
  Launcher l;
  const fs::path src = l.tmp / "src";
  fs::create_directories(src);
  write_file(src / "kinds.f90", kKinds);
  write_file(src / "main.f90", kUser);
  // As CMake's Makefiles call it: sources by absolute path, module files in the build directory.
  auto build = [&](const std::string& dir) {
    fs::create_directories(l.tmp / dir / "mods");
    for (const char* f : {"kinds.f90", "main.f90"}) {
      auto r = run_ob({kFlang, "-fopenmp", kHostTargets, "-J", "mods", "-c", (src / f).string(), "-o",
                       std::string(f) + ".o"},
                      l.tmp / dir, l.env());
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
    }
  };
  build("b1");
  const auto first = l.stats();
  CHECK(first.value("misses", 0) == 8);
  build("b2");
  const auto second = l.stats();
  CHECK(second.value("hits", 0) - first.value("hits", 0) == 8);  // every job of both sources
  CHECK(second.value("misses", 0) == 8);
  for (const char* o : {"kinds.f90.o", "main.f90.o", "mods/kinds.mod"})
    CHECK(read_file(l.tmp / "b1" / o) == read_file(l.tmp / "b2" / o));
}

namespace {

// A module with a target region and a program USEing it: their objects hold
// flang's source names (the location strings of the region, the I/O
// runtime's) and stable kernel names.
const char* const kRegionModule = R"(module region
  implicit none
contains
  subroutine twice(a)
    real :: a(64)
    integer :: i
    !$omp target teams distribute parallel do map(tofrom: a)
    do i = 1, 64
      a(i) = 2.0 * a(i)
    end do
  end subroutine
end module
)";
const char* const kRegionUser = R"(program p
  use region
  real :: a(64)
  a = 1.5
  call twice(a)
  print '(A,F6.2)', 'a(64) = ', a(64)
end program
)";

}  // namespace

TEST_CASE("launcher: a Fortran checkout at another path is served with base_dir, byte-identical to flang's with the same map", "[launcher][flang][fortran-modules][relocation][integration]") {
  SKIP_WITHOUT_FLANG();
  Launcher l;
  // Two checkouts at different depths under one base directory, built as
  // CMake's Makefiles call flang: from the build directory, sources by
  // absolute path, module files in the build directory.
  const fs::path roots[2] = {l.tmp / "x/a/proj", l.tmp / "x/b/c/proj"};
  const Env base{{"OFFLOAD_BUILD_BASE_DIR", (l.tmp / "x").string()}};
  auto compile = [&](const fs::path& root, const char* f, const std::string& out) {
    return Argv{kFlang, "-fopenmp", kHostTargets, "-O1", "-J", "mods", "-c", (root / "src" / f).string(), "-o", out};
  };
  auto build = [&](const fs::path& root) {
    fs::create_directories(root / "src");
    fs::create_directories(root / "build/mods");
    write_file(root / "src/region.f90", kRegionModule);
    write_file(root / "src/main.f90", kRegionUser);
    for (const char* f : {"region.f90", "main.f90"}) {
      auto r = run_ob(compile(root, f, std::string(f) + ".o"), root / "build", l.env(base));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
    }
  };
  build(roots[0]);
  const auto first = l.stats();
  CHECK(first.value("misses", 0) == 8);
  build(roots[1]);
  const auto second = l.stats();
  CHECK(second.value("hits", 0) - first.value("hits", 0) == 8);  // every job of both sources
  CHECK(second.value("misses", 0) == 8);
  for (const char* o : {"region.f90.o", "main.f90.o", "mods/region.mod"})
    CHECK(read_file(roots[0] / "build" / o) == read_file(roots[1] / "build" / o));
  // The name flang writes is the working directory's map joined to the
  // source relative to it, not either checkout's path.
  const std::string object = read_file(roots[1] / "build/main.f90.o");
  CHECK(object.find("/proc/self/cwd/../src/main.f90") != std::string::npos);
  CHECK(object.find((l.tmp / "x").string()) == std::string::npos);

  // Plain flang at that path with the same map (the environment and the
  // relative paths the launcher's passes run with, as --dry-run prints them)
  // writes the same bytes.
  const fs::path b = roots[1] / "build";
  auto dry = run_ob(concat({"--dry-run", "wrap", "--"}, compile(roots[1], "main.f90", "got.o")), b, l.env(base));
  INFO(dry.out);
  const Env names = stable_names_env(dry.out);
  CHECK(std::count(names.begin(), names.end(), std::pair<std::string, std::optional<std::string>>{"PWD", "/proc/self/cwd"}) == 1);
  CHECK_THAT(dry.out, Catch::Contains(" ../src/main.f90"));
  for (const char* f : {"region.f90", "main.f90"}) {
    auto r = run_tool({kFlang, "-fopenmp", kHostTargets, "-O1", "-J", "mods", "-c", std::string("../src/") + f, "-o",
                       std::string("ref.") + f + ".o"},
                      b, names);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(read_file(b / (std::string("ref.") + f + ".o")) == read_file(b / (std::string(f) + ".o")));
  }
}

TEST_CASE("launcher: Fortran sources named ../x.f90 hit from a second build directory with base_dir, and without it --explain names the place", "[launcher][flang][relocation][integration]") {
  SKIP_WITHOUT_FLANG();
  Launcher l;
  fs::create_directories(l.tmp / "src");
  write_file(l.tmp / "src/region.f90", kRegionModule);
  auto build = [&](const std::string& dir, const Env& more) {
    fs::create_directories(l.tmp / "src" / dir);
    auto r = run_ob({kFlang, "-fopenmp", kHostTargets, "-c", "../region.f90", "-o", "region.o"}, l.tmp / "src" / dir,
                    l.env(more));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.err;
  };
  const Env base{{"OFFLOAD_BUILD_BASE_DIR", l.tmp.path().string()}};
  build("b1", base);
  build("b2", base);
  CHECK(l.stats().value("hits", 0) == 4);
  CHECK(read_file(l.tmp / "src/b1/region.o") == read_file(l.tmp / "src/b2/region.o"));
  // Without base_dir the name is each build directory's: a miss, and said why.
  build("b3", {});
  const std::string explained = build("b4", {{"OFFLOAD_BUILD_EXPLAIN", "1"}});
  INFO(explained);
  CHECK_THAT(explained, Catch::Contains("host-ir ") && Catch::Contains(": miss: only its place differs"));
  CHECK_THAT(explained, !Catch::Contains("no earlier build of this job recorded"));
}

TEST_CASE("launcher: Fortran compiles alike but for their names ask flang's driver for its listings once, parse and codegen without it", "[launcher][flang][integration]") {
  SKIP_WITHOUT_FLANG();
  Launcher l;
  // <tmp>/llvm/bin/flang-22: flang-22, logging each driver command it is given.
  const fs::path flang = l.tmp / "llvm/bin/flang-22";
  const fs::path log = l.tmp / "driver.log";
  fs::create_directories(flang.parent_path());
  write_file(flang, "#!/bin/sh\necho \"$*\" >> '" + log.string() + "'\nexec " + kFlang + " \"$@\"\n");
  fs::permissions(flang, fs::perms::owner_all);
  for (const char* tool : {"clang", "clang++", "llvm-offload-binary", "clang-linker-wrapper"})
    fs::create_symlink(std::string(kLlvmBin) + "/" + tool, flang.parent_path() / tool);
  fs::create_symlink(fs::path(kLlvmBin).parent_path() / "lib", l.tmp / "llvm/lib");
  for (const char* name : {"r1", "r2", "r3"}) {
    std::string src = kRegionModule;
    src.replace(src.find("module region"), 13, std::string("module ") + name);
    write_file(l.tmp / (std::string(name) + ".f90"), src);
    auto r = l.ob({flang.string(), "-fopenmp", kHostTargets, "-O2", "-c", std::string(name) + ".f90", "-o",
                   std::string(name) + ".o"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
  CHECK(l.stats().value("misses", 0) == 12);
  const std::string driven = read_file(log);
  INFO(driven);
  // r2 and r3 served r1's listings: the device pass's and the host codegen's.
  CHECK(count_occurrences(driven, "-###") == 2);
  CHECK(count_occurrences(driven, "-emit-llvm -c") == 0);  // the host parse is the listing's -fc1
  CHECK(count_occurrences(driven, " -x ir ") == 1);   // so is the host codegen: only its listing ran the driver
}
