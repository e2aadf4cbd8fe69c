// Launcher mode with the real clang 22: the split compile gives the object
// (and depfile, and diagnostics) the compiler alone gives, is served from the
// cache the second time, and everything it does not split runs unchanged.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "integration/launcher_support.hpp"
#include "offload_build/util/strings.hpp"
#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

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
  // clang emits LTO bitcode from the host IR (the single-parse flow) too.
  SECTION("-flto") { expect_equivalent(l, {kClang, "-fopenmp", kHostTargets, "-O2", "-flto"}, "saxpy.c"); }
  SECTION("-flto=thin, C++, debug info") {
    expect_equivalent(l, {kClangxx, "-fopenmp", kHostTargets, "-std=c++17", "-Ivcxx/include",
                          "-DVEC_N=4096", "-O2", "-g", "-flto=thin"},
                      "vcxx/src/reduce.cpp");
  }
  SECTION("-foffload-lto for GPU archs, with -flto") {
    expect_equivalent(l, {kClang, "-fopenmp", "--offload-arch=sm_90,gfx90a", "-nogpulib", "-O2",
                          "-foffload-lto", "-flto"},
                      "bare.c");
  }
  SECTION("-march= for the host offload device") {
    expect_equivalent(l, {kClang, "-fopenmp", kHostTargets, "-Xopenmp-target=x86_64-unknown-linux-gnu",
                          "-march=x86-64-v3", "-O2"},
                      "saxpy.c");
  }
  SECTION("remarks") {
    expect_equivalent(l, {kClang, "-fopenmp", kHostTargets, "-O2", "-Rpass=openmp-opt",
                          "-Rpass-missed=inline", "-Rpass-analysis=openmp-opt"},
                      "saxpy.c");
  }
  SECTION("optimization records where clang writes them") {
    expect_equivalent(l, {kClang, "-fopenmp", kHostTargets, "-O2", "-fsave-optimization-record"},
                      "saxpy.c", {"opt.yaml"});
  }
  SECTION("--offload-arch=native next to the host triple") {
    expect_equivalent(l, {kClang, "-fopenmp", kHostTargets, "--offload-arch=native", "-O2"}, "saxpy.c");
  }
}

TEST_CASE("with -save-temps the compile runs as the driver's own commands: clang's object and temps, named and placed as clang does",
          "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "bare-gpu/bare.c", l.tmp / "bare.c");
  const Argv flags{kClang, "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                   "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90", "-nogpulib", "-O2",
                   "-MD", "-MT", "obj.o"};
  auto files_in = [](const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) out[e.path().filename().string()] = read_file(e.path());
    return out;
  };
  SECTION("-save-temps=obj: next to the object") {
    fs::create_directories(l.tmp / "ref");
    fs::create_directories(l.tmp / "got");
    auto ref = l.cc(concat(flags, {"-save-temps=obj", "-MF", "ref/k.d", "-c", "bare.c", "-o", "ref/k.o"}));
    auto got = l.ob(concat(flags, {"-save-temps=obj", "-MF", "got/k.d", "-c", "bare.c", "-o", "got/k.o"}),
                    {{"OFFLOAD_BUILD_VERBOSE", "1"}});
    INFO(got.err);
    REQUIRE(ref.exit_code == 0);
    REQUIRE(got.exit_code == 0);
    CHECK_THAT(got.err, Catch::Contains("splitting -save-temps into the driver's 13 commands"));
    const auto want = files_in(l.tmp / "ref");
    CHECK(want.size() == 14);  // the object, the depfile and 12 temps
    CHECK(files_in(l.tmp / "got") == want);
  }
  SECTION("-save-temps: in the working directory") {
    auto ref = l.cc(concat(flags, {"-save-temps", "-MF", "k.d", "-c", "bare.c", "-o", "k.o"}));
    REQUIRE(ref.exit_code == 0);
    const auto want = files_in(l.tmp.path());
    for (const auto& [name, bytes] : want)
      if (name != "bare.c") fs::remove(l.tmp / name);
    auto got = l.ob(concat(flags, {"-save-temps", "-MF", "k.d", "-c", "bare.c", "-o", "k.o"}));
    INFO(got.err);
    REQUIRE(got.exit_code == 0);
    CHECK(got.err == ref.err);
    auto have = files_in(l.tmp.path());
    CHECK(have == want);
    CHECK(l.stats()["unchanged_by_reason"].empty());  // split, not run unchanged
  }
}

TEST_CASE("the optimization record comes back from the cache with the object", "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  const Argv compile{kClang, "-fopenmp", kHostTargets, "-O2", "-fsave-optimization-record", "-c",
                     "saxpy.c", "-o", "s.o"};
  REQUIRE(l.ob(compile).exit_code == 0);
  const std::string record = read_file(l.tmp / "s.opt.yaml");
  CHECK_THAT(record, Catch::Contains("Pass:"));
  fs::remove(l.tmp / "s.opt.yaml");
  fs::remove(l.tmp / "s.o");
  auto before = l.stats();
  REQUIRE(l.ob(compile).exit_code == 0);
  CHECK(l.stats()["misses"] == before["misses"]);  // every pass served
  CHECK(read_file(l.tmp / "s.opt.yaml") == record);
}

TEST_CASE("what runs unchanged is counted by reason and said once per build under -v",
          "[launcher][integration]") {
  Launcher l;
  fs::copy(fs::path(OB_EXAMPLES) / "saxpy-c/saxpy.c", l.tmp / "saxpy.c");
  const Env verbose{{"OFFLOAD_BUILD_VERBOSE", "1"}};
  // Two preprocessing runs of one build (this test is their parent process):
  // one line. (Plain compiles are cached whole: test_launcher_plain.cpp.)
  auto first = l.ob({kClang, "-O2", "-E", "saxpy.c", "-o", "p1.i"}, verbose);
  auto second = l.ob({kClang, "-O2", "-E", "saxpy.c", "-o", "p2.i"}, verbose);
  REQUIRE(first.exit_code == 0);
  REQUIRE(second.exit_code == 0);
  CHECK(count_occurrences(first.err, "running the compiler unchanged: option -E") == 1);
  CHECK(second.err.find("running the compiler unchanged") == std::string::npos);
  // -ftime-trace writes a trace named after each compile step's output.
  auto trace = l.ob({kClang, "-fopenmp", kHostTargets, "-ftime-trace", "-c", "saxpy.c", "-o", "t.o"}, verbose);
  REQUIRE(trace.exit_code == 0);
  CHECK_THAT(trace.err, Catch::Contains("running the compiler unchanged: option -ftime-trace") &&
                            Catch::Contains("(\"unsupported option\" in `offload-build cache stats`"));
  // --offload-arch=native on a machine without a GPU: clang's own error,
  // offload-arch asked once and its answer remembered with the other probes.
  const Argv native{kClang, "-fopenmp", "--offload-arch=native", "-c", "saxpy.c", "-o", "n.o"};
  auto ref = l.cc(native);
  auto got = l.ob(native);
  CHECK(got.exit_code == ref.exit_code);
  CHECK(got.err == ref.err);
  size_t memos = 0;
  for (const auto& e : fs::directory_iterator(l.cache / "probes"))
    memos += util::starts_with(e.path().filename().string(), "gpu-archs-");
  if (ref.exit_code != 0) CHECK(memos == 1);  // (a machine with a GPU splits it instead)

  auto stats = l.stats()["unchanged_by_reason"];
  CHECK(stats["not a compile to an object"] == 2);
  CHECK(stats["unsupported option"] == 1);
  if (ref.exit_code != 0) CHECK(stats["no GPU for native"] == 1);
  auto text = l.ob({"--cache-dir", l.cache.string(), "cache", "stats"});
  CHECK_THAT(text.out, Catch::Contains("compiles run unchanged") && Catch::Contains("not a compile to an object"));
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
  // `note`: what offload-build says before the compiler's own words (an
  // offload compile kept whole says why, once per build).
  auto same = [&](const Argv& cmd, bool ok, const std::string& note = "") {
    INFO(util::shell_join(cmd));
    auto ref = l.cc(cmd);
    auto got = l.ob(cmd);
    CHECK(got.exit_code == ref.exit_code);
    CHECK((ref.exit_code == 0) == ok);
    CHECK(got.out == ref.out);
    CHECK(got.err == note + ref.err);
  };
  SECTION("no offload flags") {
    same({kClang, "-O2", "-c", "saxpy.c", "-o", "plain.o"}, true);
    auto ref = read_file(l.tmp / "plain.o");
    CHECK(l.ob({kClang, "-O2", "-c", "saxpy.c", "-o", "plain2.o"}).exit_code == 0);
    CHECK(read_file(l.tmp / "plain2.o") == ref);
  }
  SECTION("preprocessing to stdout") { same({kClang, "-fopenmp", kHostTargets, "-E", "saxpy.c"}, true); }
  SECTION("version") { same({kClang, "--version"}, true); }
  SECTION("an unknown option in an offload compile: said once per build") {
    const Argv cmd{kClang, "-fopenmp", kHostTargets, "--frobnicate", "-c", "saxpy.c"};
    same(cmd, false,
         "offload-build: running the compiler unchanged: unknown option --frobnicate; not a link (-c) "
         "(\"unsupported option\" in `offload-build cache stats`; counted most: --frobnicate 1; "
         "said once per build and option)\n");
    same(cmd, false);
  }
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
  const Env names = stable_names_env(
      l.ob({"--dry-run", "wrap", "--", kClang, "-fopenmp", kHostTargets, "-O2", "-c", "saxpy.c", "-o", "ref.o"}).out);
  auto ref = l.cc({kClang, "-fopenmp", kHostTargets, "-O2", "-c", "saxpy.c", "-o", "ref.o"}, names);
  REQUIRE(ref.exit_code == 0);
  const fs::path other_cache = l.tmp / "other-cache";
  auto r = l.ob({"--cache-dir", other_cache.string(), "-v", "wrap", "--", kClang, "@flags.rsp",
                 "-c", "saxpy.c", "-o", "w.o"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("splitting into one host parse, 1 device pass, package, host codegen"));
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
  CHECK_THAT(two.err, Catch::Contains("splitting into 1 device pass, package, host pass"));
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
