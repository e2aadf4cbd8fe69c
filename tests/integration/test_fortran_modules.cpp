// Fortran as real codes write it (docs/FORTRAN.md): tests/fixtures/fortran-modules
// (a module with a target region, its user, an INCLUDE file) in a manifest,
// through the launcher and through CMake with Ninja: built in module order,
// the .mod file under the build directory and restored from the cache, a
// module's users recompiled when its .mod changes (and only then), INCLUDE
// files keyed, objects byte-identical to flang-22's own.
#include <catch2/catch.hpp>

#include "support/cache_stats.hpp"

#include <nlohmann/json.hpp>

#include "launcher_support.hpp"
#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/servers.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const std::string kFlang = "/usr/bin/flang-22";
const fs::path kFixture = fs::path(OB_TEST_FIXTURES) / "fortran-modules";

#define SKIP_WITHOUT_FLANG() \
  if (!fs::exists(kFlang)) OB_SKIP("flang-22 is not installed (scripts/setup.sh installs it)")

struct Project {
  TempDir tmp{"ob-fmod"};
  fs::path dir = tmp / "p";
  Env env{{"OFFLOAD_BUILD_CACHE_DIR", (tmp / "cache").string()}, {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
          {"OFFLOAD_BUILD_EXPLAIN", std::nullopt}, {"OFFLOAD_BUILD_DISABLE", std::nullopt},
          {"OFFLOAD_BUILD_NO_CACHE", std::nullopt}, {"MAKEFLAGS", std::nullopt}};
  Project() {
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(kFixture)) fs::copy_file(e.path(), dir / e.path().filename());
  }
  // A build with --explain; the link fails on this toolchain (no device runtime for flang's kernels).
  process::Captured build(const std::string& jobs = "-j1") const {
    auto r = run_ob({"build", jobs, "--explain"}, dir, env);
    INFO(r.out << r.err);
    CHECK_THAT(r.err + r.out, Catch::Contains("__kmpc_target_init"));
    CHECK_THAT(r.err, Catch::Contains("linking Fortran offload programs fails on this toolchain"));
    CHECK_THAT(r.err, !Catch::Contains("Semantic errors"));
    return r;
  }
  nlohmann::json stats() const { return cache_stats({}, env, dir); }
};

// The --explain lines of compile jobs (not the link) that say `what`.
int explained(const std::string& err, const std::string& what) {
  int n = 0;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);)
    if (line.find("offload-build: explain: ") == 0 && line.find(".f90") != std::string::npos &&
        line.find(": " + what) != std::string::npos)
      ++n;
  return n;
}

// Whether a compile job of `source` ran (missed).
bool ran(const std::string& err, const std::string& source) {
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);)
    if (line.find("offload-build: explain: ") == 0 && line.find(" " + source + ": miss") != std::string::npos)
      return true;
  return false;
}

void replace_in(const fs::path& file, const std::string& from, const std::string& to) {
  std::string text = read_file(file);
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  write_file(file, text.replace(at, from.size(), to));
}

}  // namespace

TEST_CASE("a manifest with a Fortran module builds in module order, with -j1 and -j2", "[build][flang][fortran-modules][integration]") {
  SKIP_WITHOUT_FLANG();
  for (const std::string jobs : {"-j1", "-j2"}) {
    Project p;
    auto r = p.build(jobs);
    INFO(jobs << "\n" << r.err);
    // Both compiled (the user after the module), then the link failed.
    CHECK(fs::exists(p.dir / "build/obj/main.f90.host.o"));
    CHECK(fs::exists(p.dir / "build/obj/zmod.f90.host.o"));
    // The module file is written under the build directory, not beside the sources.
    CHECK(fs::exists(p.dir / "build/mod/m.mod"));
    CHECK_FALSE(fs::exists(p.dir / "m.mod"));
    CHECK(explained(r.err, "miss") == 8);  // per source: host parse, device, package, host codegen
  }
}

TEST_CASE("a manifest's Fortran modules and INCLUDE files are keyed: cached, and users rebuilt when a .mod changes", "[build][flang][fortran-modules][integration]") {
  SKIP_WITHOUT_FLANG();
  Project p;
  p.build();
  // Unchanged: no compile job runs.
  auto same = p.build();
  CHECK(explained(same.err, "miss") == 0);
  CHECK(explained(same.err, "up to date") == 8);
  // A clean build from the cache: every compile job is a hit, the .mod restored.
  fs::remove_all(p.dir / "build");
  auto clean = p.build("-j2");
  CHECK(explained(clean.err, "miss") == 0);
  CHECK(explained(clean.err, "hit") == 8);
  CHECK(fs::exists(p.dir / "build/mod/m.mod"));
  // A comment in the module: its .mod is the same, so its user is not recompiled.
  replace_in(p.dir / "zmod.f90", "module m\n", "module m\n  ! a comment\n");
  auto comment = p.build();
  CHECK(ran(comment.err, "zmod.f90"));
  CHECK_FALSE(ran(comment.err, "main.f90"));
  // The module's interface changes: its user is recompiled.
  replace_in(p.dir / "zmod.f90", "n = 8", "n = 9");
  auto edit = p.build();
  CHECK(ran(edit.err, "zmod.f90"));
  CHECK(ran(edit.err, "main.f90"));
  // The INCLUDE file is keyed: an edit recompiles its includer only.
  replace_in(p.dir / "params.inc", "k = 3", "k = 4");
  auto inc = p.build();
  CHECK(ran(inc.err, "main.f90"));
  CHECK_FALSE(ran(inc.err, "zmod.f90"));
  CHECK(p.stats().value("misses_by_reason", nlohmann::json::object()).value("uncacheable", 0) == 0);
}

TEST_CASE("a Fortran source whose INCLUDE file is found nowhere is built uncached, and --explain and cache stats say why", "[build][flang][fortran-modules][integration]") {
  SKIP_WITHOUT_FLANG();
  Project p;
  // Branches for another compiler (__PGI: a name flang could predefine, so
  // the scan reads them): an #include found nowhere, and a module that is
  // declared, which flang does not write.
  replace_in(p.dir / "zmod.f90", "contains\n", "contains\n#ifdef __PGI\n#include \"absent.h\"\n#endif\n");
  replace_in(p.dir / "zmod.f90", "module m\n", "#ifdef __PGI\nmodule never_compiled\nend module\n#endif\nmodule m\n");
  write_file(p.dir / "offload.json",
             R"({"name": "fmods", "output": "fmods", "sources": ["main.f90", "zmod.f90"], "targets": ["host"], "flags": ["-O2"]})");
  auto r = p.build();
  CHECK_THAT(r.err, Catch::Contains("not cached: flang lists no files read, and "));
  CHECK_THAT(r.err, Catch::Contains("the included file 'absent.h' is found in none of the include directories"));
  CHECK(p.stats().value("misses_by_reason", nlohmann::json::object()).value("uncacheable", 0) == 2);  // host parse, device
  CHECK_THAT(r.err, !Catch::Contains("did not write"));
  CHECK(fs::exists(p.dir / "build/obj/zmod.f90.host.o"));
  CHECK(fs::exists(p.dir / "build/mod/m.mod"));
  CHECK_FALSE(fs::exists(p.dir / "build/mod/never_compiled.mod"));
}

TEST_CASE("launcher: Fortran compiles with a module and an INCLUDE file are cached, the .mod restored, byte-identical to flang's", "[launcher][flang][fortran-modules][integration]") {
  SKIP_WITHOUT_FLANG();
  Launcher l;
  for (const char* f : {"zmod.f90", "main.f90", "params.inc"}) fs::copy_file(kFixture / f, l.tmp / f);
  fs::create_directories(l.tmp / "mods");
  fs::create_directories(l.tmp / "ref");
  const Argv flags{kFlang, "-fopenmp", kHostTargets, "-O2"};
  auto compile = [&](const std::string& src, const std::string& obj, const std::string& mods) {
    return concat(flags, {"-J", mods, "-c", src, "-o", obj});
  };
  const Env names = stable_names_env(l.ob(concat({"--dry-run", "wrap", "--"}, compile("zmod.f90", "z.o", "mods"))).out);
  REQUIRE(names.size() >= 2);  // flang's compiles get stable kernel names too
  for (const char* src : {"zmod.f90", "main.f90"})
    REQUIRE(l.cc(compile(src, std::string("ref/") + src + ".o", "ref"), names).exit_code == 0);
  auto both = [&] {
    for (const char* src : {"zmod.f90", "main.f90"}) {
      auto r = l.ob(compile(src, std::string(src) + ".o", "mods"));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(read_file(l.tmp / (std::string(src) + ".o")) == read_file(l.tmp / "ref" / (std::string(src) + ".o")));
    }
  };
  both();
  const auto first = l.stats();
  CHECK(first.value("misses", 0) == 8);
  CHECK(first.value("hits", 0) == 0);
  // Again from scratch: every job a hit, the module file restored.
  fs::remove_all(l.tmp / "mods");
  fs::create_directories(l.tmp / "mods");
  both();
  const auto second = l.stats();
  CHECK(second.value("hits", 0) == 8);
  CHECK(second.value("misses", 0) == 8);
  CHECK(read_file(l.tmp / "mods/m.mod") == read_file(l.tmp / "ref/m.mod"));
  // The INCLUDE file is in the key.
  write_file(l.tmp / "params.inc", "integer, parameter :: k = 5\n");
  auto r = l.ob(compile("main.f90", "main.f90.o", "mods"));
  REQUIRE(r.exit_code == 0);
  CHECK(l.stats().value("misses", 0) == 8 + 3);  // the host parse, the device pass and the host codegen
}

TEST_CASE("launcher: a CMake Fortran project (Ninja, Makefiles) is split and cached, a fresh build directory misses nothing", "[launcher][flang][fortran-modules][cmake][integration]") {
  SKIP_WITHOUT_FLANG();
  for (const std::string generator : {"Ninja", "Unix Makefiles"}) {
    INFO(generator);
    Launcher l;
    const fs::path src = l.tmp / "src";
    fs::create_directories(src);
    for (const char* f : {"zmod.f90", "main.f90", "params.inc"}) fs::copy_file(kFixture / f, src / f);
    // An object library: the program would not link on this toolchain.
    write_file(src / "CMakeLists.txt", "cmake_minimum_required(VERSION 3.20)\nproject(fmods Fortran)\n"
                                       "add_library(fobj OBJECT main.f90 zmod.f90)\n");
    // The base directory holds the sources and the build trees (as the
    // offload-build CMake package sets it): kernel names and keys of the
    // preprocessed sources are relative to the build directory, alike in each.
    const Env no_cache{{"OFFLOAD_BUILD_NO_CACHE", "1"}};
    auto build = [&](const std::string& dir, Env more, bool configure) {
      more.emplace_back("OFFLOAD_BUILD_BASE_DIR", l.tmp.path().string());
      if (configure) {
        auto r = l.cc({"cmake", "-S", src.string(), "-B", (l.tmp / dir).string(), "-G", generator,
                       "-DCMAKE_Fortran_COMPILER=" + kFlang, "-DCMAKE_Fortran_FLAGS=-fopenmp " + kHostTargets + " -O2",
                       "-DCMAKE_Fortran_COMPILER_LAUNCHER=" + std::string(OB_BINARY)},
                      more);
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
      }
      auto b = l.cc({"cmake", "--build", (l.tmp / dir).string()}, more);
      INFO(b.out << b.err);
      REQUIRE(b.exit_code == 0);
    };
    auto same_objects = [&](const std::string& a, const std::string& b) {
      for (const char* o : {"main.f90.o", "zmod.f90.o"}) {
        const fs::path rel = fs::path("CMakeFiles/fobj.dir") / o;
        CHECK(read_file(l.tmp / a / rel) == read_file(l.tmp / b / rel));
      }
    };
    build("b1", {}, true);
    const auto first = l.stats();
    CHECK(first.value("misses", 0) == 8);  // split: 2 sources x (host parse, device, package, host codegen)
    CHECK(first.value("hits", 0) == 0);
    CHECK(first["unchanged_by_reason"].empty());
    build("b2", {}, true);
    const auto second = l.stats();
    CHECK(second.value("misses", 0) == 8);  // a fresh build directory: every job a hit
    CHECK(second.value("hits", 0) == 8);
    // The objects are those of a build without the cache; after a module edit too.
    build("b3", no_cache, true);
    same_objects("b2", "b3");
    replace_in(src / "zmod.f90", "n = 8", "n = 9");
    build("b2", {}, false);
    build("b3", no_cache, false);
    same_objects("b2", "b3");
    // The module's 4 jobs and its user's host parse, device pass and host codegen
    // (its device image, with no target region of its own, is the same: the package hits).
    CHECK(l.stats().value("misses", 0) == 8 + 7);
  }
}

TEST_CASE("launcher: a CMake Fortran project (Ninja) through the package is served at another path, its preprocessing relative", "[launcher][flang][fortran-modules][cmake][relocation][integration]") {
  SKIP_WITHOUT_FLANG();
  Launcher l;
  // Two checkouts, each with its build directory inside, at different depths;
  // the package's project directories (source and build tree) are the bases.
  const fs::path roots[2] = {l.tmp / "a/proj", l.tmp / "b/c/proj"};
  const fs::path package = fs::path(OB_EXAMPLES).parent_path() / "cmake/OffloadBuild.cmake";
  auto build = [&](const fs::path& root, Env more) {
    fs::create_directories(root / "src");
    for (const char* f : {"zmod.f90", "main.f90", "params.inc"}) fs::copy_file(kFixture / f, root / "src" / f, fs::copy_options::overwrite_existing);
    write_file(root / "src/CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.20)\nproject(fmods Fortran)\n"
               "set(OffloadBuild_EXECUTABLE \"" + std::string(OB_BINARY) + "\")\n"
               "include(\"" + package.string() + "\")\n"
               "offload_build_enable_launcher(LANGUAGES Fortran)\n"
               "add_library(fobj OBJECT main.f90 zmod.f90)\n");
    auto r = l.cc({"cmake", "-S", (root / "src").string(), "-B", (root / "build").string(), "-G", "Ninja",
                   "-DCMAKE_Fortran_COMPILER=" + kFlang, "-DCMAKE_Fortran_FLAGS=-fopenmp " + kHostTargets + " -O2"},
                  more);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto b = l.cc({"cmake", "--build", (root / "build").string()}, more);
    INFO(b.out << b.err);
    REQUIRE(b.exit_code == 0);
  };
  const fs::path dir = "build/CMakeFiles/fobj.dir";
  build(roots[0], {});
  const auto first = l.stats();
  CHECK(first.value("misses", 0) == 8);  // 2 sources x (host parse, device, package, host codegen)
  build(roots[1], {});
  const auto second = l.stats();
  CHECK(second.value("misses", 0) == 8);  // the checkout at another path: every job a hit
  CHECK(second.value("hits", 0) - first.value("hits", 0) == 8);
  for (const char* f : {"zmod.f90-pp.f90", "main.f90-pp.f90", "zmod.f90.o", "main.f90.o"})
    CHECK(read_file(roots[0] / dir / f) == read_file(roots[1] / dir / f));
  // The preprocessed source names the source as flang -E does given its path
  // relative to the build directory; the object, that joined to the map.
  const fs::path b = roots[1] / "build";
  auto plain = run_tool({kFlang, "-cpp", "-fopenmp", kHostTargets, "-O2", "-E", "../src/zmod.f90"}, b, l.env());
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == read_file(roots[1] / dir / "zmod.f90-pp.f90"));
  const std::string object = read_file(roots[1] / dir / "zmod.f90.o");
  CHECK(object.find("/proc/self/cwd/../src/zmod.f90") != std::string::npos);
  CHECK(object.find(l.tmp.path().string()) == std::string::npos);
  // Without the cache, the same objects.
  fs::remove_all(b);
  build(roots[1], {{"OFFLOAD_BUILD_NO_CACHE", "1"}});
  for (const char* f : {"zmod.f90.o", "main.f90.o"}) CHECK(read_file(roots[0] / dir / f) == read_file(roots[1] / dir / f));
}

#ifdef OB_FAKE_REAPI
TEST_CASE("remote execution: Fortran compiles stay here, --explain says why, the build warns once", "[build][flang][fortran-modules][remote-execution][integration]") {
  SKIP_WITHOUT_FLANG();
  Project p;
  // An engine that answers every compile wrongly ("missing": no output): a
  // Fortran compile sent there would fail over to here with a warning.
  const fs::path log = p.tmp / "fake-reapi.log";
  const int port = free_port();
  ServerProcess engine({OB_FAKE_REAPI, "--port", std::to_string(port), "--mode", "missing"}, log);
  REQUIRE(wait_until([&] { return can_connect_tcp(port); }, engine));
  auto r = run_ob({"build", "--explain", "--remote-execution", "grpc://127.0.0.1:" + std::to_string(port)}, p.dir, p.env);
  INFO(r.err);
  INFO(read_file(log));
  CHECK_THAT(r.err, Catch::Contains("note: if the undefined references are __kmpc_target_init"));  // compiled, then the link
  CHECK_THAT(read_file(log), !Catch::Contains("Execute lied"));  // no compile was sent
  const std::string why = "a Fortran compile: the module files one writes are the next one's inputs";
  CHECK(count_occurrences(r.err, "warning: remote_execution") == 1);
  CHECK(count_occurrences(r.err, "ran locally: " + why) == 6);  // per source: host parse, device pass, host codegen
}
#endif
