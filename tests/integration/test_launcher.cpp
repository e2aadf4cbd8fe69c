// Launcher mode with the real clang 22: the split compile gives the object
// (and depfile, and diagnostics) the compiler alone gives, is served from the
// cache the second time, and everything it does not split runs unchanged.
#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;
using Argv = std::vector<std::string>;

namespace {

const std::string kClang = "/usr/bin/clang-22";
const std::string kClangxx = "/usr/bin/clang++-22";
const std::string kHostTargets = "-fopenmp-targets=x86_64-unknown-linux-gnu";

// A per-test cache; OFFLOAD_BUILD_VERBOSE and friends unset.
struct Launcher {
  TempDir tmp{"ob-launch"};
  fs::path cache = tmp / "cache";
  Env env(Env more = {}) const {
    Env e{{"OFFLOAD_BUILD_CACHE_DIR", cache.string()}, {"OFFLOAD_BUILD_VERBOSE", std::nullopt},
          {"OFFLOAD_BUILD_EXPLAIN", std::nullopt}, {"OFFLOAD_BUILD_DISABLE", std::nullopt},
          {"MAKEFLAGS", std::nullopt}};
    e.insert(e.end(), more.begin(), more.end());
    return e;
  }
  exec::Captured ob(Argv args, Env more = {}) const { return run_ob(std::move(args), tmp.path(), env(more)); }
  exec::Captured cc(Argv args, Env more = {}) const {
    return run_tool(std::move(args), tmp.path(), env(more));
  }
  nlohmann::json stats() const {
    auto r = ob({"--cache-dir", cache.string(), "cache", "stats", "--json"});
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  }
};

Argv concat(Argv a, const Argv& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Compile with the compiler alone and through offload-build; both must give
// the same bytes, depfile, output and exit code.
void expect_equivalent(const Launcher& l, const Argv& compile, const std::string& src) {
  INFO(util::shell_join(compile));
  const Argv got_args = concat(compile, {"-MD", "-MF", "got.d", "-MT", "obj.o", "-c", src, "-o", "got.o"});
  // Stable kernel names (docs/CACHE.md): the compiler alone, given the same
  // preloaded library and salt, names kernels as the split passes do.
  const Env names = stable_names_env(l.ob(concat({"--dry-run", "wrap", "--"}, got_args)).out);
  REQUIRE(names.size() == 3);
  auto ref = l.cc(concat(compile, {"-MD", "-MF", "ref.d", "-MT", "obj.o", "-c", src, "-o", "ref.o"}), names);
  auto got = l.ob(got_args);
  INFO(got.err);
  REQUIRE(ref.exit_code == 0);
  REQUIRE(got.exit_code == 0);
  CHECK(got.out == ref.out);
  CHECK(got.err == ref.err);
  CHECK(read_file(l.tmp / "got.o") == read_file(l.tmp / "ref.o"));
  CHECK(read_file(l.tmp / "got.d") == read_file(l.tmp / "ref.d"));
  CHECK_FALSE(fs::exists(l.tmp / "got.o.offload-build"));  // the work directory is gone
  CHECK(temp_outputs(l.tmp.path()).empty());
}

}  // namespace

TEST_CASE("launcher objects are byte-identical to the compiler's own", "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  fs::copy(fs::path(OB_EXAMPLES) / "bare-gpu/bare.c", l.tmp / "bare.c");
  fs::copy(fs::path(OB_EXAMPLES) / "vector-cxx", l.tmp / "vcxx", fs::copy_options::recursive);
  SECTION("host device, C, -O2") { expect_equivalent(l, {kClang, "-fopenmp", kHostTargets, "-O2"}, "saxpy.c"); }
  SECTION("host device, debug info") {
    expect_equivalent(l, {kClang, "-fopenmp", kHostTargets, "-O1", "-g"}, "saxpy.c");
  }
  SECTION("C++ with includes, defines and warnings") {
    expect_equivalent(l, {kClangxx, "-fopenmp", kHostTargets, "-std=c++17", "-Ivcxx/include",
                          "-DVEC_N=4096", "-Wall", "-Wextra", "-O2"},
                      "vcxx/src/axpy.cpp");
  }
  SECTION("three devices by triple, arch by -Xopenmp-target") {
    expect_equivalent(l, {kClang, "-fopenmp",
                          "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda,amdgcn-amd-amdhsa",
                          "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90",
                          "-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a", "-nogpulib", "-O2"},
                      "bare.c");
  }
  SECTION("GPU archs by --offload-arch, with -Xarch_ options") {
    expect_equivalent(l, {kClang, "-fopenmp", "--offload-arch=sm_90,gfx90a", "--offload-arch=gfx942",
                          "-nogpulib", "-Xarch_gfx90a", "-O3", "-Xarch_host", "-DHOST_ONLY", "-O2"},
                      "bare.c");
  }
}

TEST_CASE("launcher objects link and run, and the second compile is served from the cache",
          "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  const Argv compile{kClang, "-fopenmp", kHostTargets, "-O2", "-MD", "-MT", "saxpy.o", "-MF",
                     "saxpy.o.d", "-c", "saxpy.c", "-o", "saxpy.o"};
  auto first = l.ob(compile, {{"OFFLOAD_BUILD_EXPLAIN", "1"}});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(count_occurrences(first.err, ": miss: ") == 4);  // host-ir, device, package, host
  const std::string object = read_file(l.tmp / "saxpy.o");
  const std::string depfile = read_file(l.tmp / "saxpy.o.d");
  fs::remove(l.tmp / "saxpy.o");
  fs::remove(l.tmp / "saxpy.o.d");

  auto before = l.stats();
  auto second = l.ob(compile, {{"OFFLOAD_BUILD_EXPLAIN", "1"}, {"OFFLOAD_BUILD_VERBOSE", "1"}});
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(count_occurrences(second.err, ": hit") == 4);
  CHECK(second.err.find("-fembed-offload-object") == std::string::npos);  // no compiler ran
  CHECK(l.stats()["hits"].get<int>() - before["hits"].get<int>() == 4);
  CHECK(read_file(l.tmp / "saxpy.o") == object);
  CHECK(read_file(l.tmp / "saxpy.o.d") == depfile);  // the depfile comes back with the object

  // The link has offload flags and no -c: one cached job (device link,
  // wrapper, host link), served the second time.
  const Argv link_cmd{kClang, "-fopenmp", kHostTargets, "saxpy.o", "-o", "saxpy"};
  auto link = l.ob(link_cmd, {{"OFFLOAD_BUILD_EXPLAIN", "1"}});
  INFO(link.err);
  REQUIRE(link.exit_code == 0);
  CHECK_THAT(link.err, Catch::Contains("link saxpy: miss"));
  const std::string program = read_file(l.tmp / "saxpy");
  fs::remove(l.tmp / "saxpy");
  auto relink = l.ob(link_cmd, {{"OFFLOAD_BUILD_EXPLAIN", "1"}});
  REQUIRE(relink.exit_code == 0);
  CHECK_THAT(relink.err, Catch::Contains("link saxpy: hit"));
  CHECK(read_file(l.tmp / "saxpy") == program);
  CHECK((fs::status(l.tmp / "saxpy").permissions() & fs::perms::owner_exec) != fs::perms::none);
  auto run = run_tool({(l.tmp / "saxpy").string()}, l.tmp.path(),
                      {{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"}});
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.err, Catch::Contains("Launching kernel __omp_offloading_"));
  CHECK_THAT(run.out, Catch::Contains("OK"));
}

TEST_CASE("commands the launcher does not split run unchanged", "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  write_file(l.tmp / "broken.c", "int main(void) { return undeclared_name; }\n");
  auto same = [&](const Argv& cmd, bool ok) {
    INFO(util::shell_join(cmd));
    auto ref = l.cc(cmd);
    auto got = l.ob(cmd);
    CHECK(got.exit_code == ref.exit_code);
    CHECK((ref.exit_code == 0) == ok);
    CHECK(got.out == ref.out);
    CHECK(got.err == ref.err);
  };
  SECTION("no offload flags") {
    same({kClang, "-O2", "-c", "saxpy.c", "-o", "plain.o"}, true);
    auto ref = read_file(l.tmp / "plain.o");
    CHECK(l.ob({kClang, "-O2", "-c", "saxpy.c", "-o", "plain2.o"}).exit_code == 0);
    CHECK(read_file(l.tmp / "plain2.o") == ref);
  }
  SECTION("preprocessing to stdout") { same({kClang, "-fopenmp", kHostTargets, "-E", "saxpy.c"}, true); }
  SECTION("version") { same({kClang, "--version"}, true); }
  SECTION("an unknown option") { same({kClang, "-fopenmp", kHostTargets, "--frobnicate", "-c", "saxpy.c"}, false); }
  SECTION("a compile error in a plain compile") { same({kClang, "-c", "broken.c", "-o", "b.o"}, false); }
  SECTION("a compile error in an offload compile: the compiler's own diagnostics") {
    same({kClang, "-fopenmp", kHostTargets, "-c", "broken.c", "-o", "b.o"}, false);
    CHECK_FALSE(fs::exists(l.tmp / "b.o.offload-build"));
  }
  SECTION("a missing compiler") {
    auto r = l.ob({"wrap", "--", "/nonexistent/clang", "-c", "x.c"});
    CHECK(r.exit_code == 127);
    CHECK_THAT(r.err, Catch::Contains("/nonexistent/clang"));
  }
  SECTION("OFFLOAD_BUILD_DISABLE") {
    auto r = l.ob({kClang, "-fopenmp", kHostTargets, "-c", "saxpy.c", "-o", "d.o"},
                  {{"OFFLOAD_BUILD_DISABLE", "1"}, {"OFFLOAD_BUILD_VERBOSE", "1"}});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("running the compiler unchanged: OFFLOAD_BUILD_DISABLE is set"));
  }
}

TEST_CASE("wrap --, global options and response files", "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  write_file(l.tmp / "flags.rsp", "-fopenmp " + kHostTargets + " -O2\n");
  auto ref = l.cc({kClang, "-fopenmp", kHostTargets, "-O2", "-c", "saxpy.c", "-o", "ref.o"});
  REQUIRE(ref.exit_code == 0);
  const fs::path other_cache = l.tmp / "other-cache";
  auto r = l.ob({"--cache-dir", other_cache.string(), "-v", "wrap", "--", kClang, "@flags.rsp",
                 "-c", "saxpy.c", "-o", "w.o"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("splitting into one host parse, 1 device passes, package, host codegen"));
  // -v shows every command: the driver asked for its device pass, the host
  // parse, the device cc1 reading its IR, the host codegen.
  CHECK_THAT(r.err, Catch::Contains("--offload-device-only -MD -MF w.o.offload-build/dev.host.d -o "
                                    "w.o.offload-build/dev.host.o '-###'"));
  CHECK_THAT(r.err, Catch::Contains("--offload-host-only -emit-llvm -Xclang -disable-llvm-passes"));
  CHECK_THAT(r.err, Catch::Contains("-fopenmp-host-ir-file-path w.o.offload-build/host.bc"));
  CHECK_THAT(r.err, Catch::Contains("-x ir w.o.offload-build/host.bc"));
  // OFFLOAD_BUILD_TWO_PARSE=1: the driver's own device passes, the same object.
  auto two = l.ob({"--cache-dir", other_cache.string(), "-v", "wrap", "--", kClang, "@flags.rsp",
                   "-c", "saxpy.c", "-o", "w2.o"}, {{"OFFLOAD_BUILD_TWO_PARSE", "1"}});
  REQUIRE(two.exit_code == 0);
  CHECK_THAT(two.err, Catch::Contains("splitting into 1 device passes, package, host pass"));
  CHECK(two.err.find("-###") == std::string::npos);
  CHECK(read_file(l.tmp / "w2.o") == read_file(l.tmp / "ref.o"));
  CHECK(read_file(l.tmp / "w.o") == read_file(l.tmp / "ref.o"));
  CHECK(fs::exists(other_cache / "stats.json"));
  // --dry-run prints the passes and runs nothing.
  auto dry = l.ob({"--dry-run", "wrap", "--", kClang, "@flags.rsp", "-c", "saxpy.c", "-o", "dry.o"});
  CHECK(dry.exit_code == 0);
  CHECK_THAT(dry.out, Catch::Contains("llvm-offload-binary"));
  CHECK_FALSE(fs::exists(l.tmp / "dry.o"));
}

TEST_CASE("build --compdb writes an entry per host and device pass", "[launcher][integration]") {
  TempDir tmp;
  fs::path dir = copy_example("bare-gpu", tmp.path());
  auto r = run_ob({"-C", dir.string(), "--dry-run", "build", "--compdb"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto db = nlohmann::json::parse(read_file(dir / "build/compile_commands.json"));
  REQUIRE(db.size() == 4);  // host + host device, sm_90, gfx90a
  std::set<std::string> outputs;
  for (const auto& e : db) {
    CHECK(e["directory"] == dir.string());
    CHECK(e["file"] == (dir / "bare.c").string());
    outputs.insert(e["output"].get<std::string>());
  }
  CHECK(outputs.size() == 4);  // distinct outputs
  CHECK(db[0]["output"] == (dir / "build/obj/bare.c.host.o").string());
  CHECK_THAT(db[1]["arguments"].dump(), Catch::Contains("--offload-device-only"));
}

TEST_CASE("a cache hit prints the warnings the compile printed", "[launcher][integration]") {
  Launcher l;
  write_file(l.tmp / "w.c", "int f(void) {\n  int unused_here;\n  int r = 0;\n#pragma omp target map(tofrom: r)\n  r = 1;\n  return r;\n}\n");
  const Argv compile{kClang, "-fopenmp", kHostTargets, "-Wall", "-c", "w.c", "-o", "w.o"};
  auto first = l.ob(compile);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.err, Catch::Contains("w.c:2:7: warning: unused variable 'unused_here'"));
  fs::remove(l.tmp / "w.o");
  auto before = l.stats();
  auto hit = l.ob(compile);
  REQUIRE(hit.exit_code == 0);
  CHECK(l.stats()["misses"].get<int>() == before["misses"].get<int>());  // every pass served
  CHECK(hit.err == first.err);  // the same diagnostics, in the same order
}
