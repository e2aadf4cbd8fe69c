// Launcher mode asks the registered frontends which one drives a command and
// has it parse the command line (frontend.hpp): clang for C/C++, flang for Fortran.
#include <catch2/catch.hpp>

#include "offload_build/toolchain/frontends/frontend.hpp"

using namespace ob;

namespace {
std::string recognized(const std::string& program) {
  const toolchain::frontend::Frontend* fe = toolchain::frontend::recognize(program, std::nullopt);
  return fe ? std::string(fe->name()) : "none";
}
}  // namespace

TEST_CASE("the registered frontends recognise their drivers by name", "[frontend][flang]") {
  CHECK(recognized("clang-22") == "clang OpenMP offload");
  CHECK(recognized("/usr/bin/clang++") == "clang OpenMP offload");
  CHECK(recognized("flang-22") == "flang OpenMP offload");
  CHECK(recognized("/usr/lib/llvm-22/bin/flang") == "flang OpenMP offload");
  CHECK(recognized("flang-new-22") == "flang OpenMP offload");
  CHECK(recognized("x86_64-linux-gnu-flang-22") == "flang OpenMP offload");
  CHECK(recognized("gfortran") == "none");
  CHECK(recognized("gcc") == "none");
  CHECK(recognized("flangx") == "none");
  // Where the name says nothing, the program's real path decides.
  CHECK(toolchain::frontend::recognize("cc", fs::path("/usr/bin/flang-22")) == &toolchain::frontend::flang_openmp_frontend());
}

TEST_CASE("each language has its frontend", "[frontend][flang]") {
  CHECK(&toolchain::frontend::for_language(manifest::Language::C) == &toolchain::frontend::clang_openmp_frontend());
  CHECK(&toolchain::frontend::for_language(manifest::Language::Cxx) == &toolchain::frontend::clang_openmp_frontend());
  CHECK(&toolchain::frontend::for_language(manifest::Language::Fortran) == &toolchain::frontend::flang_openmp_frontend());
}

TEST_CASE("flang's frontend parses an offload compile", "[frontend][flang]") {
  const auto& flang = toolchain::frontend::flang_openmp_frontend();
  const auto parsed = flang.parse({"flang-22", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-O2",
                                   "-Iinc", "-J", "mods", "-c", "src/x.F90", "-o", "obj/x.o"});
  REQUIRE(parsed.compile);
  const auto& req = *parsed.compile;
  CHECK(req.language == manifest::Language::Fortran);
  CHECK(req.source == "src/x.F90");
  CHECK(req.output_arg() == "obj/x.o");
  REQUIRE(req.targets.size() == 1);
  CHECK(req.targets[0].triple == "x86_64-unknown-linux-gnu");

  const auto compile = flang.launcher_compile(req, "/nonexistent", "");
  CHECK(compile->device(req.targets[0], "w/dev.o", "w/dev.d", false) ==
        toolchain::frontend::Argv{"flang-22", "-fopenmp", "-O2", "-Iinc", "-J", "mods",
                                  "-fopenmp-targets=x86_64-unknown-linux-gnu", "--offload-device-only", "-c", "src/x.F90",
                                  "-o", "w/dev.o"});
  CHECK(compile->host("w/images.offload", "obj/x.o", "w/host.d") ==
        toolchain::frontend::Argv{"flang-22", "-fopenmp", "-O2", "-Iinc", "-J", "mods",
                                  "-fopenmp-targets=x86_64-unknown-linux-gnu", "--offload-host-only", "-Xflang",
                                  "-fembed-offload-object=w/images.offload", "-c", "src/x.F90", "-o", "obj/x.o"});
  // The source cannot be read: no key is known to be whole. -J names the module directory.
  REQUIRE(compile->module_files());
  CHECK(compile->module_files()->scan.problem);
  CHECK(compile->module_files()->module_dir == "/nonexistent/mods");
  CHECK(compile->module_files()->search ==
        std::vector<fs::path>{"/nonexistent/mods", "/nonexistent/inc", "/nonexistent"});
  CHECK_FALSE(compile->two_parse_reason());  // single parse, as flang's one-shot compile
  CHECK(compile->host_ir("w/host.bc", "w/host-ir.d") ==
        toolchain::frontend::Argv{"flang-22", "-fopenmp", "-O2", "-Iinc", "-J", "mods",
                                  "-fopenmp-targets=x86_64-unknown-linux-gnu", "--offload-host-only", "-emit-llvm", "-c",
                                  "src/x.F90", "-o", "w/host.bc"});
  CHECK(compile->host_codegen("w/host.bc", "w/images.offload", "obj/x.o") ==
        toolchain::frontend::Argv{"flang-22", "-fopenmp", "-O2", "-J", "mods",
                                  "-fopenmp-targets=x86_64-unknown-linux-gnu", "--offload-host-only", "-Xflang",
                                  "-fembed-offload-object=w/images.offload", "-c", "-x", "ir", "w/host.bc", "-o",
                                  "obj/x.o"});
}

TEST_CASE("flang's frontend says why a command runs unchanged", "[frontend][flang]") {
  const auto& flang = toolchain::frontend::flang_openmp_frontend();
  const std::string host = "-fopenmp-targets=x86_64-unknown-linux-gnu";
  auto code = [&](std::vector<std::string> argv) { return flang.parse(argv).pass_code; };
  CHECK(code({"flang-22", "-fopenmp", host, "x.f90", "-o", "x"}) == "not a compile to an object");
  CHECK(code({"flang-22", "-fopenmp", "-c", "x.f90"}) == "not an offload compile");
  CHECK(code({"flang-22", host, "-c", "x.f90"}) == "not an offload compile");
  CHECK(code({"flang-22", "-fopenmp", host, "-c", "x.c"}) == "not a compile to an object");
  CHECK(code({"flang-22", "-fopenmp", "-fopenmp-targets=nvptx64-nvidia-cuda", "-c", "x.f90"}) ==
        "unsupported targets");
  const auto option = flang.parse({"flang-22", "-fopenmp", host, "-MD", "-c", "x.f90"});
  CHECK(option.pass_code == "unsupported option");
  CHECK(option.option == "-MD");
  // clang's parser leaves Fortran to flang.
  CHECK(toolchain::frontend::clang_openmp_frontend().parse({"clang-22", "-fopenmp", host, "-c", "x.f90"}).pass_code ==
        "not an offload compile");
}
