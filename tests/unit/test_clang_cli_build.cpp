// Launcher mode's one-step builds (`clang -fopenmp <targets> a.c b.c -o prog`):
// which are split, each source's compile and the link; and the device cc1
// keeping the compilation directory where it tracks source locations.
#include <catch2/catch.hpp>

#include <algorithm>

#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/frontends/single_parse.hpp"

using namespace ob;
using namespace ob::toolchain::clang_cli;
using Argv = std::vector<std::string>;

namespace {

const std::string kTargets = "-fopenmp-targets=x86_64-unknown-linux-gnu";

BuildRequest split(const Argv& argv) {
  auto p = parse_build(argv);
  INFO(p.pass_reason);
  REQUIRE(p.one_step);
  REQUIRE(p.build);
  return *p.build;
}

std::string refused(const Argv& argv) {
  auto p = parse_build(argv);
  CHECK(p.one_step);
  CHECK_FALSE(p.build);
  return p.pass_reason;
}

}  // namespace

TEST_CASE("a one-step build: each source's compile without link-only options, the link with objects in place",
          "[launcher][clang_cli]") {
  const Argv argv{"clang", "-fopenmp", kTargets, "-O2", "-Iinc", "-D", "N=4", "a.c", "-L", "/l",
                  "-Wl,-rpath,/l", "-rpath", "/r", "x.o", "b.c", "-lm", "-o", "prog"};
  const auto b = split(argv);
  CHECK(b.output_arg() == "prog");
  CHECK(b.sources == std::vector<size_t>{7, 14});
  CHECK(b.compile_argv(0, "w/1-a.o") ==
        Argv{"clang", "-fopenmp", kTargets, "-O2", "-Iinc", "-D", "N=4", "-c", "a.c", "-o", "w/1-a.o"});
  CHECK(b.compile_argv(1, "w/2-b.o").at(8) == "b.c");
  CHECK(b.link_argv({"w/1-a.o", "w/2-b.o"}) ==
        Argv{"clang", "-fopenmp", kTargets, "-O2", "-Iinc", "-D", "N=4", "w/1-a.o", "-L", "/l",
             "-Wl,-rpath,/l", "-rpath", "/r", "x.o", "w/2-b.o", "-lm", "-o", "prog"});
  // Each compile is one the launcher splits.
  CHECK(parse(b.compile_argv(0, "w/1-a.o")).compile);
  // Without -o: a.out.
  const auto out = split({"clang++", "-fopenmp", "--offload-arch=sm_90", "k.cpp", "m.cc"});
  CHECK(out.link_argv({"1.o", "2.o"}) ==
        Argv{"clang++", "-fopenmp", "--offload-arch=sm_90", "1.o", "2.o", "-o", "a.out"});
}

TEST_CASE("one-step builds not split, and commands that are none", "[launcher][clang_cli]") {
  CHECK(refused({"clang", "-fopenmp", kTargets, "a.c", "b.cpp"}) == "a one-step build with sources of two languages");
  CHECK(refused({"clang", "-fopenmp", kTargets, "-x", "c", "a.c"}) == "a one-step build with option -x");
  CHECK(refused({"clang", "-fopenmp", kTargets, "a.c", "k.s"}) ==
        "a one-step build with input k.s is not a C or C++ source");
  CHECK_THAT(refused({"clang", "-fopenmp", kTargets, "-MD", "a.c"}), Catch::StartsWith("a one-step build with option -MD"));
  CHECK_THAT(refused({"clang", "-fopenmp", kTargets, "-save-temps", "a.c"}),
             Catch::StartsWith("a one-step build with option -save-temps"));
  for (const Argv& none : {Argv{"clang", "-fopenmp", kTargets, "-c", "a.c"},    // a compile
                           Argv{"clang", "-fopenmp", kTargets, "a.o", "-o", "p"},  // a link
                           Argv{"clang", "a.c", "b.c", "-o", "p"},               // no offload
                           Argv{"clang", "-fopenmp", "a.c", "-o", "p"},          // no targets
                           Argv{"clang", "-fopenmp", kTargets, "-shared", "a.c", "-o", "p.so"}}) {
    INFO(none.back());
    CHECK_FALSE(parse_build(none).one_step);
  }
}

TEST_CASE("the device cc1 keeps the compilation directory when it tracks source locations (remarks)",
          "[single-parse][launcher]") {
  auto device = [](const Argv& extra) {
    Argv dev{"/llvm/bin/clang", "-cc1", "-fopenmp-is-target-device", "-fopenmp-host-ir-file-path",
             "/tmp/h.bc", "-fdebug-compilation-dir=/w", "-fcoverage-compilation-dir=/w", "-o", "d.o"};
    dev.insert(dev.end(), extra.begin(), extra.end());
    const std::vector<Argv> listing{
        {"/llvm/bin/clang", "-cc1", "-emit-llvm-bc", "-dependency-file", "d.d", "-disable-llvm-passes",
         "-o", "/tmp/h.bc", "k.c"},
        dev};
    auto pass = toolchain::single_parse::templatize(listing, {"k.c", "d.o", "d.d", {}, {}}, false);
    REQUIRE(pass);
    return pass->device;
  };
  auto has = [](const Argv& argv, const std::string& a) { return std::find(argv.begin(), argv.end(), a) != argv.end(); };
  CHECK_FALSE(has(device({}), "-fdebug-compilation-dir=/w"));
  CHECK(has(device({"-Rpass=openmp-opt"}), "-fdebug-compilation-dir=/w"));
  CHECK(has(device({"-opt-record-file", "r.yaml"}), "-fdebug-compilation-dir=/w"));
  CHECK(has(device({"-debug-info-kind=constructor"}), "-fdebug-compilation-dir=/w"));
  CHECK_FALSE(has(device({"-Rpass=openmp-opt"}), "-fcoverage-compilation-dir=/w"));
}
