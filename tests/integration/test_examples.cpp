// Build every example with the real LLVM 22 tools and run it on the host device.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support/ob_process.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using namespace ob::test;

namespace {

const Env kMandatoryWithLog = {{"OMP_TARGET_OFFLOAD", "MANDATORY"}, {"LIBOMPTARGET_INFO", "-1"}};

fs::path build_example(const std::string& name, const TempDir& tmp) {
  fs::path dir = copy_example(name, tmp.path());
  auto r = run_ob({"-C", dir.string(), "build"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return dir;
}

}  // namespace

TEST_CASE("saxpy-c builds and runs offloaded on the host device", "[integration][examples]") {
  TempDir tmp;
  fs::path dir = build_example("saxpy-c", tmp);
  auto r = run_tool({(dir / "build/saxpy").string()}, dir, kMandatoryWithLog);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "saxpy: n=1048576 y[10]=21.000000 max_err=0 OK\non_device=yes\n");
  CHECK(count_occurrences(r.err, "Launching kernel __omp_offloading_") == 1);
  CHECK(count_occurrences(r.err, "Copying data from host to device") >= 1);
}

TEST_CASE("vector-cxx: three TUs, declare-target templates, all kernels launch",
          "[integration][examples]") {
  TempDir tmp;
  fs::path dir = build_example("vector-cxx", tmp);
  // One device object per TU, including main.cpp that has no target region.
  for (const char* tu : {"main.cpp", "axpy.cpp", "reduce.cpp"}) {
    CHECK(fs::exists(dir / "build/obj/src" / (std::string(tu) + ".dev.host.o")));
    CHECK(fs::exists(dir / "build/obj/src" / (std::string(tu) + ".host.o")));
  }
  auto r = run_tool({(dir / "build/vector").string()}, dir, kMandatoryWithLog);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "vector-cxx: n=100000\n"
        "axpy<float>: y[10]=21.0 y[n-1]=199999.0 mismatches=0 OK\n"
        "axpy<double>: y[10]=21.0 y[n-1]=199999.0 mismatches=0 OK\n"
        "dot<double>: sum=149850005.0 expected=149850005.0 OK\n"
        "launches=3 on_device=yes\n"
        "vector-cxx: all OK\n");
  CHECK(count_occurrences(r.err, "Launching kernel __omp_offloading_") == 3);
}

TEST_CASE("bare-gpu links images for host, sm_90 and gfx90a and runs on the host device",
          "[integration][examples]") {
  TempDir tmp;
  fs::path dir = build_example("bare-gpu", tmp);
  fs::path prog = dir / "build/bare";
  auto listing = run_tool({std::string(kLlvmBin) + "/llvm-objdump", "--offloading", prog.string()});
  REQUIRE(listing.exit_code == 0);
  CHECK(count_occurrences(listing.out, "OFFLOADING IMAGE") == 3);
  CHECK_THAT(listing.out, Catch::Contains("arch            sm_90\ntriple          nvptx64-nvidia-cuda"));
  CHECK_THAT(listing.out, Catch::Contains("arch            gfx90a\ntriple          amdgcn-amd-amdhsa"));
  CHECK_THAT(listing.out, Catch::Contains("triple          x86_64-unknown-linux-gnu"));
  auto r = run_tool({prog.string()}, dir, kMandatoryWithLog);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("sum=1048576.0 expected=1048576.0 mismatches=0 OK"));
  CHECK(count_occurrences(r.err, "Launching kernel") == 1);
}

TEST_CASE("single-TU examples equal a one-shot clang build byte for byte",
          "[integration][examples]") {
  struct Case {
    std::string example, program;
    std::vector<std::string> oneshot;
  };
  const std::string clang = std::string(kLlvmBin) + "/clang";
  const std::vector<Case> cases = {
      {"saxpy-c", "build/saxpy",
       {clang, "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-O2", "saxpy.c", "-o",
        "oneshot", "-lm"}},
      {"bare-gpu", "build/bare",
       {clang, "-fopenmp",
        "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda,amdgcn-amd-amdhsa",
        "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90",
        "-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a", "-nogpulib", "-O2", "bare.c", "-o",
        "oneshot"}},
  };
  for (const auto& c : cases) {
    // offload-build links with lld by default ("linker": "lld"); with
    // "linker": "system" it links as plain clang does (GNU ld).
    for (const bool lld : {true, false}) {
      DYNAMIC_SECTION(c.example << (lld ? " (linker lld)" : " (linker system)")) {
        TempDir tmp;
        const fs::path dir = copy_example(c.example, tmp.path());
        std::vector<std::string> oneshot = c.oneshot;
        if (lld) {
          oneshot.push_back("-fuse-ld=lld");
        } else {
          auto m = nlohmann::json::parse(read_file(dir / "offload.json"));
          m["linker"] = "system";
          write_file(dir / "offload.json", m.dump());
        }
        auto r = run_ob({"-C", dir.string(), "--no-cache", "build"});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        // Kernel names are stable (docs/CACHE.md): clang run with the same
        // preloaded library and salt names them the same way.
        const Env names = stable_names_env(run_ob({"-C", dir.string(), "--dry-run", "build"}).out);
        REQUIRE(names.size() == 4);
        auto one = run_tool(oneshot, dir, names);
        INFO(one.err);
        REQUIRE(one.exit_code == 0);
        const std::string ours = read_file(dir / c.program);
        REQUIRE(ours.size() > 1000);
        CHECK(ours == read_file(dir / "oneshot"));
      }
    }
  }
}

TEST_CASE("run --verify shows the launch and the copies", "[integration][examples]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  auto r = run_ob({"-C", dir.string(), "run", "--verify"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "saxpy: n=1048576 y[10]=21.000000 max_err=0 OK\non_device=yes\n");
  CHECK_THAT(r.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch"));
  CHECK_THAT(r.err, Catch::Contains("__omp_offloading_"));
  CHECK_THAT(r.err, Catch::Contains("8.0 MiB to device"));
  CHECK_THAT(r.err, Catch::Contains("4.0 MiB from device"));
  // The runtime's own log lines are summarized, not dumped.
  CHECK(count_occurrences(r.err, "omptarget device") == 0);
}

TEST_CASE("run --verify fails when nothing was offloaded", "[integration][examples]") {
  TempDir tmp;
  fs::path dir = copy_example("saxpy-c", tmp.path());
  auto r = run_ob({"-C", dir.string(), "run", "--verify"}, {},
                  {{"OMP_TARGET_OFFLOAD", "DISABLED"}});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("on_device=no"));
  CHECK_THAT(r.err, Catch::Contains("no kernel was launched on an offload device"));
}

TEST_CASE("run passes arguments after -- and returns the program's exit code",
          "[integration][examples]") {
  TempDir tmp;
  fs::path dir = tmp / "args";
  write_file(dir / "offload.json",
             R"({"name": "args", "sources": ["main.c"], "targets": ["host"]})");
  write_file(dir / "main.c", R"(#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  int n = 0;
  #pragma omp target map(from: n)
  n = 7;
  for (int i = 1; i < argc; i++) printf("arg%d=%s\n", i, argv[i]);
  return argc > 1 ? atoi(argv[argc - 1]) : n;
})");
  auto r = run_ob({"-C", dir.string(), "run", "--", "hello world", "3"});
  CHECK(r.out == "arg1=hello world\narg2=3\n");
  CHECK(r.exit_code == 3);
  // A failing program is reported as the program's failure, not the build's.
  CHECK_THAT(r.err, Catch::Contains("offload-build: the program exited with status 3; the build succeeded"));
  auto verify = run_ob({"-C", dir.string(), "run", "--verify", "--", "1"});
  CHECK(verify.exit_code == 1);
  CHECK_THAT(verify.err, Catch::Contains("offload-build: verify: offload: 1 kernel launch"));
  CHECK_THAT(verify.err, Catch::Contains("the program exited with status 1; the build succeeded"));
  CHECK(verify.err.find("offload-build: error") == std::string::npos);
  auto ok = run_ob({"-C", dir.string(), "run"});
  CHECK(ok.exit_code == 7);
  // The program's options before `--`: a usage error naming them in their
  // order, with the command line that puts them after `--`. Nothing runs.
  auto stray = run_ob({"run", "--verify", "-C", dir.string(), "-m", "event", "-s", "small"});
  CHECK(stray.exit_code == 2);
  CHECK(stray.out.empty());
  CHECK_THAT(stray.err, Catch::Contains("offload-build: error: run does not know -m -s; arguments for the "
                                        "program go after `--`:\n  offload-build run --verify -C " +
                                        dir.string() + " -- -m event -s small\n"));
}

TEST_CASE("a second clean build of every example runs no compiler at all",
          "[integration][examples][cache]") {
  for (const std::string example : {"saxpy-c", "vector-cxx", "bare-gpu", "rust-saxpy"}) {
    SECTION(example) {
      TempDir tmp;
      fs::path dir = copy_example(example, tmp.path());
      const std::vector<std::string> args{"-C", dir.string(), "--cache-dir",
                                          (tmp / "cache").string(), "-v", "build"};
      auto first = run_ob(args);
      INFO(first.err);
      REQUIRE(first.exit_code == 0);
      CHECK_THAT(first.err, Catch::Contains(" from cache, ") && !Catch::Contains(" 0 run"));
      fs::remove_all(dir / "build");
      auto second = run_ob(args);
      INFO(second.err);
      REQUIRE(second.exit_code == 0);
      // Every job served: "N jobs: N from cache, 0 run", and no compile, package or link command.
      auto pos = second.err.find(" jobs: ");
      REQUIRE(pos != std::string::npos);
      const std::string total = second.err.substr(second.err.rfind(' ', pos - 1) + 1, pos - second.err.rfind(' ', pos - 1) - 1);
      CHECK_THAT(second.err, Catch::Contains(total + " jobs: " + total + " from cache, 0 run"));
      for (const char* tool : {"bin/clang", "llvm-offload-binary", "--crate-type", "--emit"})
        CHECK(second.err.find(tool) == std::string::npos);
    }
  }
}
