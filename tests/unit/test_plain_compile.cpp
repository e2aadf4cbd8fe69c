// A compile cached as one job in launcher mode (plain_compile.hpp): which
// command lines are one, read through clang's option table or GCC's reader,
// why the others are not, and the job's own command line.
#include <catch2/catch.hpp>

#include "offload_build/toolchain/frontends/plain_compile.hpp"

using namespace ob;
using namespace ob::toolchain::frontend;
using Argv = std::vector<std::string>;

namespace {

// The counter a command line is not cached under ("" when it is cached).
std::string why_not(const Argv& argv, Dialect d) {
  const Parsed p = parse_plain(argv, d);
  return p.compile ? "" : p.pass_code;
}

}  // namespace

TEST_CASE("GCC and its spellings are recognised by name", "[frontend][plain]") {
  for (const char* name : {"gcc", "g++", "cc", "c++", "gcc-12", "x86_64-linux-gnu-g++-12", "/usr/bin/cc"})
    CHECK(is_gcc(name));
  for (const char* name : {"clang", "clang++-22", "distcc", "nvcc", "gfortran", "icx", "mpicc"}) CHECK_FALSE(is_gcc(name));
}

TEST_CASE("a plain compile is read for GCC: source, output, depfile, files keyed", "[frontend][plain]") {
  const Parsed p = parse_plain({"g++", "-O2", "-Iinc", "-DX=1", "-MMD", "-MF", "d/q.d", "-MTq", "-MP",
                                "-fplugin=p.so", "-xc++", "-c", "q.cc", "-oout/q.o"},
                               Dialect::Gcc);
  REQUIRE(p.compile);
  const CompileRequest& r = *p.compile;
  CHECK(r.source == "q.cc");
  CHECK(r.output_arg() == "out/q.o");
  REQUIRE(r.deps);
  CHECK(r.deps->user_headers_only);
  CHECK(r.deps->file == "d/q.d");
  CHECK(r.deps->targets == std::vector<std::string>{"-MTq"});
  CHECK(r.deps->phony);
  CHECK(r.keyed_files == std::vector<std::string>{"p.so"});
  CHECK_FALSE(r.names_kernels);
  // The job writes the caller's depfile where it asked, the object under -o.
  CHECK(plain_compile_argv(r, "d/q.d") == Argv{"g++", "-O2", "-Iinc", "-DX=1", "-fplugin=p.so", "-xc++", "-c",
                                                "q.cc", "-o", "out/q.o", "-MMD", "-MF", "d/q.d", "-MTq", "-MP"});
  // No depfile asked for: -MD into the job's own, the output as its target.
  const Parsed bare = parse_plain({"gcc", "-c", "k.c"}, Dialect::Gcc);
  REQUIRE(bare.compile);
  CHECK(plain_compile_argv(*bare.compile, "w/compile.d") == Argv{"gcc", "-c", "k.c", "-o", "k.o", "-MD", "-MF",
                                                                  "w/compile.d"});
}

TEST_CASE("what GCC's reader does not cache says why", "[frontend][plain]") {
  const auto gcc = [](Argv more) {
    Argv argv{"gcc", "-c", "k.c"};
    argv.insert(argv.end(), more.begin(), more.end());
    return why_not(argv, Dialect::Gcc);
  };
  CHECK(gcc({}).empty());
  CHECK(gcc({"-funknown-flag", "-Wweird"}).empty());  // keyed as written
  for (const char* o : {"-E", "-S", "-M", "-fsyntax-only", "-v", "--version"}) CHECK(gcc({o}) == unchanged::kNotCompile);
  CHECK(gcc({"-o", "-"}) == unchanged::kNotCompile);
  CHECK(gcc({"other.c"}) == unchanged::kNotCompile);  // several sources
  CHECK(why_not({"gcc", "k.c"}, Dialect::Gcc) == unchanged::kNotCompile);  // no -c
  for (const char* o : {"@args.rsp", "-save-temps", "-fdump-tree-all", "-fprofile-use", "-fprofile-generate",
                        "--coverage", "-gsplit-dwarf", "-B/opt/bin", "-Wp,-MD,x.d", "-ftime-report", "-MF"})
    CHECK(gcc({o}) == unchanged::kOption);
  CHECK(why_not({"gcc", "-c", "k.s"}, Dialect::Gcc) == unchanged::kNotOffload);
  CHECK(why_not({"gcc", "-x", "cuda", "-c", "k.c"}, Dialect::Gcc) == unchanged::kNotOffload);
}

TEST_CASE("clang's plain compiles through the option table", "[frontend][plain]") {
  CHECK(why_not({"clang++", "-O2", "-c", "q.cpp"}, Dialect::Clang).empty());
  const Parsed omp = parse_plain({"clang", "-fopenmp", "-c", "k.c", "-o", "k.o"}, Dialect::Clang);
  REQUIRE(omp.compile);
  CHECK(omp.compile->names_kernels);  // target regions named after inodes: stable names
  CHECK(why_not({"clang", "-ftime-trace", "-c", "k.c"}, Dialect::Clang) == unchanged::kOption);
  CHECK(why_not({"clang", "-fsave-optimization-record", "-c", "k.c", "-o", "k.o"}, Dialect::Clang) ==
        unchanged::kOption);
  CHECK(why_not({"clang", "-save-temps", "-c", "k.c"}, Dialect::Clang) == unchanged::kOption);
  CHECK(why_not({"clang", "-fopenmp", "--offload-arch=native", "-c", "k.c"}, Dialect::Clang) == unchanged::kTargets);
  CHECK(why_not({"clang", "-E", "k.c"}, Dialect::Clang) == unchanged::kNotCompile);
}
