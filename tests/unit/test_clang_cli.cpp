// Launcher mode's clang command-line parser: every option it understands,
// what it passes through, and response files (golden).
#include <catch2/catch.hpp>

#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include <fstream>

#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::toolchain::clang_cli;
using Argv = std::vector<std::string>;

namespace {

const manifest::Target kHost{"x86_64-unknown-linux-gnu", "generic"};
const manifest::Target kSm90{"nvptx64-nvidia-cuda", "sm_90"};
const manifest::Target kSm80{"nvptx64-nvidia-cuda", "sm_80"};
const manifest::Target kGfx90a{"amdgcn-amd-amdhsa", "gfx90a"};

CompileRequest compile(Argv argv) {
  auto p = parse(argv);
  INFO(p.pass_reason);
  REQUIRE(p.compile);
  return *p.compile;
}

std::string pass_reason(Argv argv) {
  auto p = parse(argv);
  REQUIRE_FALSE(p.compile);
  return p.pass_reason;
}

std::vector<ArgKind> kinds(const CompileRequest& r) {
  std::vector<ArgKind> out;
  for (const auto& a : r.args) out.push_back(a.kind);
  return out;
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("a CMake offload compile is classified argument by argument", "[launcher][clang_cli]") {
  auto r = compile({"/usr/bin/clang++-22", "-DN=4", "-I/p/include", "-O2", "-fopenmp",
                    "-fopenmp-targets=x86_64-unknown-linux-gnu", "-MD", "-MT", "CMakeFiles/a.dir/k.cpp.o",
                    "-MF", "CMakeFiles/a.dir/k.cpp.o.d", "-o", "CMakeFiles/a.dir/k.cpp.o", "-c",
                    "/p/src/k.cpp"});
  CHECK(r.compiler == "/usr/bin/clang++-22");
  CHECK(r.source == "/p/src/k.cpp");
  CHECK(r.language == manifest::Language::Cxx);
  CHECK(r.output == "CMakeFiles/a.dir/k.cpp.o");
  CHECK(r.targets == std::vector<manifest::Target>{kHost});
  CHECK(r.native.empty());
  REQUIRE(r.deps);
  CHECK_FALSE(r.deps->user_headers_only);
  CHECK(r.deps->file == "CMakeFiles/a.dir/k.cpp.o.d");
  CHECK(r.deps->targets == Argv{"-MTCMakeFiles/a.dir/k.cpp.o"});
  CHECK(kinds(r) == std::vector<ArgKind>{ArgKind::Common, ArgKind::Common, ArgKind::Common,
                                         ArgKind::Common, ArgKind::OffloadTargets, ArgKind::DepMode,
                                         ArgKind::DepTarget, ArgKind::DepFile, ArgKind::Output,
                                         ArgKind::Common, ArgKind::Input});
  CHECK(r.args[6].tokens == Argv{"-MT", "CMakeFiles/a.dir/k.cpp.o"});
}

TEST_CASE("offload-arch option takes comma lists, repeats and native", "[launcher][clang_cli]") {
  auto r = compile({"clang", "-fopenmp", "--offload-arch=sm_90,gfx90a", "--offload-arch=sm_80",
                    "--offload-arch=sm_90", "-nogpulib", "-c", "k.c"});
  CHECK(r.targets == std::vector<manifest::Target>{kSm90, kGfx90a, kSm80});
  CHECK(r.language == manifest::Language::C);
  CHECK(r.output_arg() == "k.o");
  auto n = compile({"clang", "-fopenmp", "--offload-arch=native,sm_90", "-c", "k.c"});
  CHECK(n.targets == std::vector<manifest::Target>{kSm90});
  CHECK(n.native == Argv{""});
  CHECK_THAT(pass_reason({"clang", "-fopenmp", "--offload-arch=x86_64", "-c", "k.c"}),
             Catch::Contains("--offload-arch=x86_64"));
}

TEST_CASE("fopenmp-targets and offload-targets options name triples", "[launcher][clang_cli]") {
  auto r = compile({"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                    "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_80",
                    "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90", "-c", "k.c"});
  CHECK(r.targets == std::vector<manifest::Target>{kHost, kSm90});  // the last -march wins, as in clang
  auto o = compile({"clang", "-fopenmp", "--offload-targets=x86_64-unknown-linux-gnu", "-c", "k.c"});
  CHECK(o.targets == std::vector<manifest::Target>{kHost});
  // Repeated lists accumulate; a GPU triple without -march is detected like clang's native.
  auto n = compile({"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
                    "-fopenmp-targets=amdgcn-amd-amdhsa", "-c", "k.c"});
  CHECK(n.targets == std::vector<manifest::Target>{kHost});
  CHECK(n.native == Argv{"amdgcn-amd-amdhsa"});
  // The implicit -Xopenmp-target form applies to the only triple.
  auto i = compile({"clang", "-fopenmp", "-fopenmp-targets=nvptx64-nvidia-cuda", "-Xopenmp-target",
                    "-march=sm_80", "-c", "k.c"});
  CHECK(i.targets == std::vector<manifest::Target>{kSm80});
  // --offload-arch with a GPU triple: every arch for that triple.
  auto b = compile({"clang", "-fopenmp", "-fopenmp-targets=nvptx64-nvidia-cuda",
                    "--offload-arch=sm_80,sm_90", "-c", "k.c"});
  CHECK(b.targets == std::vector<manifest::Target>{kSm80, kSm90});
}

TEST_CASE("target combinations clang rejects or offload-build does not model pass through",
          "[launcher][clang_cli]") {
  CHECK_THAT(pass_reason({"clang", "-fopenmp", "-fopenmp-targets=x86_64", "-c", "k.c"}),
             Catch::Contains("offload triple x86_64"));
  // clang 22 gives the host device the GPU arch (image arch=sm_90): not modeled.
  CHECK_THAT(pass_reason({"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
                          "--offload-arch=sm_90", "-c", "k.c"}),
             Catch::Contains("--offload-arch=sm_90 with the host offload triple"));
  CHECK_THAT(pass_reason({"clang", "-fopenmp",
                          "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                          "-Xopenmp-target", "-march=sm_90", "-c", "k.c"}),
             Catch::Contains("without a triple"));
  CHECK_THAT(pass_reason({"clang", "-fopenmp", "-fopenmp-targets=nvptx64-nvidia-cuda",
                          "--offload-arch=gfx90a", "-c", "k.c"}),
             Catch::Contains("gfx90a for triple nvptx64"));
}

TEST_CASE("commands that are not a split offload compile pass through, with the reason",
          "[launcher][clang_cli]") {
  const Argv offload{"clang", "-fopenmp", "--offload-arch=sm_90"};
  auto with = [&](Argv more) {
    Argv a = offload;
    a.insert(a.end(), more.begin(), more.end());
    return pass_reason(a);
  };
  CHECK(with({"k.o", "-o", "app"}) == "not a compile to an object (no -c)");  // a link
  CHECK(pass_reason({"clang", "-O2", "-c", "k.c"}) == "no -fopenmp");
  CHECK(pass_reason({"clang", "-fopenmp", "-c", "k.c"}) == "no offload targets");
  CHECK(pass_reason({"clang", "-fopenmp", "--offload-arch=sm_90", "-fno-openmp", "-c", "k.c"}) ==
        "no -fopenmp");
  CHECK(with({"--offload-device-only", "-c", "k.c"}) == "option --offload-device-only");
  CHECK(with({"--offload-host-only", "-c", "k.c"}) == "option --offload-host-only");
  CHECK(with({"-E", "k.c"}) == "option -E");
  CHECK(with({"-S", "-c", "k.c"}) == "option -S");
  CHECK(with({"-M", "-c", "k.c"}) == "option -M");
  CHECK(with({"-ftime-trace", "-c", "k.c"}) == "option -ftime-trace");
  CHECK(with({"-gsplit-dwarf", "-c", "k.c"}) == "option -gsplit-dwarf");
  CHECK(with({"-c", "a.c", "b.c"}) == "several inputs");
  CHECK(with({"-c", "k.cu"}) == "input k.cu is not a C or C++ source");
  CHECK(with({"-x", "cuda", "-c", "k.c"}) == "language -x cuda");
  CHECK(with({"-c", "k.c", "-o", "-"}) == "output to stdout");
  CHECK(with({"-c", "k.c", "--frobnicate"}) == "unknown option --frobnicate");
  CHECK(with({"-c", "-"}) == "input from stdin or after --");
  CHECK(with({"-c", "k.c", "-Xclang", "-fembed-offload-object=x"}) ==
        "-Xclang -fembed-offload-object=x");
  CHECK(with({"-c", "k.c", "-MF", "k.d"}) == "-MF/-MT without -MD or -MMD");
  CHECK(with({"-c", "k.c", "-o"}) == "option -o without a value");
}

TEST_CASE("each reason to run unchanged has a kind, counted in cache stats", "[launcher][clang_cli]") {
  auto code = [](Argv argv) {
    auto p = parse(argv);
    REQUIRE_FALSE(p.compile);
    return p.pass_code;
  };
  CHECK(code({"clang", "k.o", "-o", "app"}) == unchanged::kNotCompile);
  CHECK(code({"clang", "-fopenmp", "--offload-arch=sm_90", "-E", "k.c"}) == unchanged::kNotCompile);
  CHECK(code({"clang", "--version"}) == unchanged::kNotCompile);
  CHECK(code({"clang", "-O2", "-c", "k.c"}) == unchanged::kNotOffload);
  CHECK(code({"clang", "-fopenmp", "--offload-arch=sm_90", "-c", "k.cu"}) == unchanged::kNotOffload);
  CHECK(code({"clang", "-fopenmp", "--offload-arch=sm_90", "-ftime-trace", "-c", "k.c"}) == unchanged::kOption);
  CHECK(compile({"clang", "-fopenmp", "--offload-arch=sm_90", "-save-temps=obj", "-c", "k.c"}).save_temps);
  CHECK(code({"clang", "-fopenmp", "--offload-arch=sm_90", "--frobnicate", "-c", "k.c"}) == unchanged::kOption);
  CHECK(code({"clang", "-fopenmp", "-fopenmp-targets=x86_64", "-c", "k.c"}) == unchanged::kTargets);
}

TEST_CASE("an unsupported option is named without its value, for cache stats", "[launcher][clang_cli]") {
  auto option = [](Argv argv) {
    auto p = parse(argv);
    REQUIRE_FALSE(p.compile);
    CHECK(p.pass_code == unchanged::kOption);
    return p.option;
  };
  CHECK(option({"clang", "-fopenmp", "--offload-arch=sm_90", "-ftime-trace", "-c", "k.c"}) == "-ftime-trace");
  CHECK(option({"clang", "-fopenmp", "--offload-arch=sm_90", "--frobnicate=a/b/c", "-c", "k.c"}) == "--frobnicate=");
  CHECK(option({"clang", "-fopenmp", "--offload-arch=sm_90", "-MF", "k.d", "-c", "k.c"}) == "-MF");
  CHECK(option({"clang", "-c", "k.c", "-Xarch_host"}) == "-Xarch_host");
  CHECK(option_name(std::string(200, 'x')).size() < 100);  // bounded
  CHECK(parse({"clang", "-O2", "-c", "k.c"}).option.empty());  // not an option's fault
}

TEST_CASE("what clang's driver splits is split: host -march, remarks, records, native",
          "[launcher][clang_cli]") {
  SECTION("-Xopenmp-target=<host triple> -march= sets the host device's CPU (the image's arch)") {
    auto r = compile({"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
                      "-Xopenmp-target=x86_64-unknown-linux-gnu", "-march=x86-64-v3", "-c", "k.c"});
    CHECK(r.targets == std::vector<manifest::Target>{{"x86_64-unknown-linux-gnu", "x86-64-v3"}});
    auto i = compile({"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                      "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90",
                      "-Xopenmp-target=x86_64-unknown-linux-gnu", "-march=znver4", "-c", "k.c"});
    CHECK(i.targets == std::vector<manifest::Target>{{"x86_64-unknown-linux-gnu", "znver4"}, kSm90});
    auto implicit = compile({"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
                             "-Xopenmp-target", "-march=x86-64-v2", "-c", "k.c"});
    CHECK(implicit.targets == std::vector<manifest::Target>{{"x86_64-unknown-linux-gnu", "x86-64-v2"}});
  }
  SECTION("remarks go to every pass") {
    auto r = compile({"clang", "-fopenmp", "--offload-arch=sm_90", "-Rpass=openmp-opt",
                      "-Rpass-missed=inline", "-c", "k.c"});
    CHECK(kinds(r)[2] == ArgKind::Common);
    CHECK(kinds(r)[3] == ArgKind::Common);
  }
  SECTION("optimization records: the host pass's file, named as clang names it") {
    const Argv base{"clang", "-fopenmp", "--offload-arch=sm_90", "-c", "k.c"};
    auto with = [&](Argv more) {
      Argv a = base;
      a.insert(a.end(), more.begin(), more.end());
      return a;
    };
    CHECK(compile(with({"-fsave-optimization-record", "-o", "o/k.c.o"})).opt_record == "o/k.c.opt.yaml");
    CHECK(compile(with({"-fsave-optimization-record=bitstream", "-o", "o/k.o"})).opt_record ==
          "o/k.opt.bitstream");
    auto f = compile(with({"-foptimization-record-file=r/x.yaml", "-o", "k.o"}));
    CHECK(f.opt_record == "r/x.yaml");
    CHECK(kinds(f)[4] == ArgKind::RecordFile);
    CHECK(compile(with({"-foptimization-record-passes=inline", "-o", "k.o"})).opt_record == "k.opt.yaml");
    CHECK_FALSE(compile(with({"-fsave-optimization-record", "-fno-save-optimization-record", "-o", "k.o"}))
                    .opt_record);
    CHECK_FALSE(compile(with({"-o", "k.o"})).opt_record);
    // Without -o clang names each device's record after the source and target.
    CHECK(pass_reason(with({"-fsave-optimization-record"})) == "optimization records without -o");
  }
  SECTION("--offload-arch=native next to the host triple: the host device stays generic") {
    auto r = compile({"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
                      "--offload-arch=native", "-c", "k.c"});
    CHECK(r.targets == std::vector<manifest::Target>{kHost});
    CHECK(r.native.empty());
    auto g = compile({"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                      "--offload-arch=native", "-c", "k.c"});
    CHECK(g.targets == std::vector<manifest::Target>{kHost});
    CHECK(g.native == Argv{"nvptx64-nvidia-cuda"});  // found by offload-arch, else clang's error
  }
}

TEST_CASE("x, Xarch_*, nogpulib and joined forms are understood", "[launcher][clang_cli]") {
  auto r = compile({"clang", "-xc++", "-fopenmp", "--offload-arch=gfx90a", "-nogpulib",
                    "-Xarch_device", "-O3", "-Xarch_host", "-DHOST", "-Xclang", "-fno-rtti",
                    "-ok.o", "-MMD", "-MFk.d", "-MQ", "k$.o", "-MP", "-c", "k.c"});
  CHECK(r.language == manifest::Language::Cxx);
  CHECK(r.output == "k.o");
  REQUIRE(r.deps);
  CHECK(r.deps->user_headers_only);
  CHECK(r.deps->file == "k.d");
  CHECK(r.deps->targets == Argv{"-MQk$.o"});
  CHECK(r.deps->phony);
  CHECK(r.targets == std::vector<manifest::Target>{kGfx90a});
  CHECK(kinds(r) == std::vector<ArgKind>{ArgKind::Common, ArgKind::Common, ArgKind::OffloadArch,
                                         ArgKind::Common, ArgKind::XArch, ArgKind::XArch,
                                         ArgKind::Common, ArgKind::Output, ArgKind::DepMode,
                                         ArgKind::DepFile, ArgKind::DepTarget, ArgKind::DepPhony,
                                         ArgKind::Common, ArgKind::Input});
  CHECK(r.args[3].tokens == Argv{"-nogpulib"});
  CHECK(r.args[4].tokens == Argv{"-Xarch_device", "-O3"});
  CHECK(r.args[4].value == "device");
  CHECK(r.args[5].value == "host");
  CHECK(r.args[6].tokens == Argv{"-Xclang", "-fno-rtti"});
  CHECK(r.args[7].tokens == Argv{"-ok.o"});
  // -Xopenmp-target keeps its triple and forwarded argument.
  auto x = compile({"clang", "-fopenmp", "-fopenmp-targets=nvptx64-nvidia-cuda",
                    "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90", "-Xopenmp-target",
                    "-O3", "-c", "k.c"});
  CHECK(x.args[2].kind == ArgKind::XOpenmpTarget);
  CHECK(x.args[2].triple == "nvptx64-nvidia-cuda");
  CHECK(x.args[2].value == "-march=sm_90");
  CHECK(x.args[3].triple.empty());
  CHECK(x.args[3].value == "-O3");
  // -x none goes back to the extension.
  CHECK(compile({"clang", "-x", "c++", "-x", "none", "-fopenmp", "--offload-arch=sm_90", "-c", "k.c"})
            .language == manifest::Language::C);
  CHECK(compile({"clang", "-x", "c", "-fopenmp", "--offload-arch=sm_90", "-c", "k.cpp"}).language ==
        manifest::Language::C);
}

TEST_CASE("debug info is noticed (the launcher then names the compilation directory)",
          "[launcher][clang_cli]") {
  const Argv base{"clang", "-fopenmp", "--offload-arch=sm_90", "-c", "k.c"};
  auto with = [&](Argv more) {
    Argv a = base;
    a.insert(a.end(), more.begin(), more.end());
    return compile(a);
  };
  CHECK_FALSE(with({}).debug_info);
  CHECK(with({"-g"}).debug_info);
  CHECK(with({"-gdwarf-5"}).debug_info);
  CHECK_FALSE(with({"-g", "-g0"}).debug_info);
  CHECK_FALSE(with({"-gno-column-info"}).debug_info);
  CHECK(with({"-g", "-fdebug-compilation-dir=."}).sets_compilation_dir);
}

TEST_CASE("response files are split with GNU quoting and expanded recursively",
          "[launcher][clang_cli]") {
  CHECK(split_response_file("-DA=1  'b c' \"d\\\"e\" f\\ g\n-O2\r\n") ==
        Argv{"-DA=1", "b c", "d\"e", "f g", "-O2"});
  CHECK(split_response_file("''") == Argv{""});
  test::TempDir dir;
  write_file(dir / "flags.rsp", "-fopenmp @sub/more.rsp\n");
  write_file(dir / "sub/more.rsp", "--offload-arch=sm_90 -c");
  auto expanded = expand_response_files({"clang", "@flags.rsp", "k.c"}, dir.path());
  REQUIRE(expanded);
  CHECK(*expanded == Argv{"clang", "-fopenmp", "--offload-arch=sm_90", "-c", "k.c"});
  CHECK_FALSE(expand_response_files({"clang", "@missing.rsp"}, dir.path()));
  write_file(dir / "loop.rsp", "@loop.rsp");
  CHECK_FALSE(expand_response_files({"clang", "@loop.rsp"}, dir.path()));
}

TEST_CASE("clang is recognized by name", "[launcher][clang_cli]") {
  for (const char* yes : {"clang", "clang++", "clang-22", "clang++-22", "/usr/bin/clang-22",
                          "x86_64-linux-gnu-clang++", "clang-22.1"})
    CHECK(is_clang(yes));
  for (const char* no : {"gcc", "clangd", "clang-tidy", "cc", "clang-", "myclang"})
    CHECK_FALSE(is_clang(no));
}
