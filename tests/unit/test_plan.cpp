// The plan for N TUs x M targets, and the exact argv of every job kind (golden).
#include <catch2/catch.hpp>

#include <algorithm>

#include "offload_build/plan/plan.hpp"
#include "support/fake_toolchain.hpp"

using namespace ob;

namespace {

// No device runtimes there: GPU targets get -nogpulib.

manifest::Manifest fake_manifest(std::vector<std::string> sources, std::vector<manifest::Target> targets) {
  manifest::Manifest m;
  m.file = "/proj/offload.json";
  m.project_dir = "/proj";
  m.name = "demo";
  m.output = "demo";
  m.build_dir = "/proj/build";
  for (auto& s : sources) {
    bool cxx = s.size() > 4 && s.substr(s.size() - 4) == ".cpp";
    m.sources.push_back({"/proj/" + s, cxx ? manifest::Language::Cxx : manifest::Language::C});
  }
  m.targets = std::move(targets);
  return m;
}

const manifest::Target kHost{"x86_64-unknown-linux-gnu", "generic"};
const manifest::Target kSm90{"nvptx64-nvidia-cuda", "sm_90"};
const manifest::Target kGfx90a{"amdgcn-amd-amdhsa", "gfx90a"};

using Argv = std::vector<std::string>;

}  // namespace

TEST_CASE("plan has device x target, package, host per TU and one link", "[plan]") {
  auto m = fake_manifest({"a.c", "src/b.c", "src/c.c"}, {kHost, kSm90});
  plan::Plan plan = plan::make_plan(m, test::fake_toolchain("/nonexistent/llvm"));
  // 3 TUs x (2 device + package + host) + link
  REQUIRE(plan.jobs.size() == 3 * 4 + 1);
  size_t device = 0, package = 0, host = 0, link = 0;
  for (const auto& j : plan.jobs) {
    for (plan::JobId d : j.deps) CHECK(d < j.id);  // topological order
    switch (j.kind) {
      case plan::JobKind::DeviceCompile: ++device; CHECK(j.deps.empty()); break;
      case plan::JobKind::Package: ++package; CHECK(j.deps.size() == 2); break;
      case plan::JobKind::HostCompile: ++host; CHECK(j.deps.size() == 1); break;
      case plan::JobKind::Link: ++link; CHECK(j.deps.size() == 3); break;
    }
  }
  CHECK(device == 6);
  CHECK(package == 3);
  CHECK(host == 3);
  CHECK(link == 1);
  CHECK(plan.cwd == "/proj");
  CHECK(plan.program == "/proj/build/demo");
  CHECK(plan.jobs.back().outputs == std::vector<fs::path>{"/proj/build/demo"});
  CHECK(plan.directories == std::vector<fs::path>{"/proj/build", "/proj/build/obj",
                                                  "/proj/build/obj/src"});
  // Jobs of one TU share a unit; the link has none.
  CHECK(plan.jobs[0].unit == plan.jobs[3].unit);
  CHECK(plan.jobs[0].unit != plan.jobs[4].unit);
  CHECK(plan.jobs.back().unit == 0);
}

TEST_CASE("job descriptions name kind, target and source", "[plan]") {
  auto m = fake_manifest({"src/k.cpp"}, {kSm90});
  plan::Plan plan = plan::make_plan(m, test::fake_toolchain("/nonexistent/llvm"));
  CHECK(plan.jobs[0].describe(plan.cwd) == "device sm_90 src/k.cpp");
  CHECK(plan.jobs[1].describe(plan.cwd) == "package src/k.cpp");
  CHECK(plan.jobs[2].describe(plan.cwd) == "host src/k.cpp");
  CHECK(plan.jobs[3].describe(plan.cwd) == "link build/demo");
}

TEST_CASE("golden argv: host-device target, C", "[plan]") {
  auto m = fake_manifest({"saxpy.c"}, {kHost});
  m.include_dirs = {"include"};
  m.defines = {"N=8"};
  m.flags = {"-O2"};
  m.device_flags = {"-DDEVICE"};
  m.host_flags = {"-Wall"};
  m.link_flags = {"-Wl,--as-needed"};
  m.libs = {"m", "vendor/libfoo.a"};
  plan::Plan plan = plan::make_plan(m, test::fake_toolchain("/nonexistent/llvm"));
  REQUIRE(plan.jobs.size() == 4);
  CHECK(plan.jobs[0].argv ==
        Argv{"/nonexistent/llvm/bin/clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
             "--offload-device-only", "-Iinclude", "-DN=8", "-O2", "-DDEVICE", "-MD", "-MF",
             "build/obj/saxpy.c.dev.host.d", "-c", "saxpy.c", "-o", "build/obj/saxpy.c.dev.host.o"});
  CHECK(plan.jobs[0].depfile == fs::path("/proj/build/obj/saxpy.c.dev.host.d"));
  CHECK(plan.jobs[0].inode_sensitive);
  CHECK(plan.jobs[0].forbid_device_runtime_calls == false);
  CHECK(plan.jobs[1].argv ==
        Argv{"/nonexistent/llvm/bin/llvm-offload-binary", "-o", "build/obj/saxpy.c.offload",
             "--image=file=build/obj/saxpy.c.dev.host.o,triple=x86_64-unknown-linux-gnu,arch=generic,"
             "kind=openmp"});
  CHECK(plan.jobs[2].argv ==
        Argv{"/nonexistent/llvm/bin/clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
             "--offload-host-only", "-Xclang", "-fembed-offload-object=build/obj/saxpy.c.offload",
             "-Iinclude", "-DN=8", "-O2", "-Wall", "-MD", "-MF", "build/obj/saxpy.c.host.d", "-c",
             "saxpy.c", "-o", "build/obj/saxpy.c.host.o"});
  CHECK(plan.jobs[3].argv ==
        Argv{"/nonexistent/llvm/bin/clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
             "build/obj/saxpy.c.host.o", "-o", "build/demo",
             "-Wl,--dependency-file=build/obj/demo.link.d", "-Wl,--as-needed", "-lm",
             "vendor/libfoo.a"});
  CHECK(plan.jobs[1].depfile == std::nullopt);  // a package reads exactly its images
}

TEST_CASE("golden argv: GPU targets without a device runtime use -nogpulib", "[plan]") {
  auto m = fake_manifest({"bare.cpp"}, {kHost, kSm90, kGfx90a});
  plan::Plan plan = plan::make_plan(m, test::fake_toolchain("/nonexistent/llvm"));
  REQUIRE(plan.jobs.size() == 6);
  CHECK(plan.jobs[1].argv == Argv{"/nonexistent/llvm/bin/clang++", "-fopenmp",
                                  "--offload-arch=sm_90", "-nogpulib", "--offload-device-only",
                                  "-MD", "-MF", "build/obj/bare.cpp.dev.sm_90.d", "-c", "bare.cpp",
                                  "-o", "build/obj/bare.cpp.dev.sm_90.o"});
  CHECK(plan.jobs[1].forbid_device_runtime_calls);
  CHECK(plan.jobs[2].argv == Argv{"/nonexistent/llvm/bin/clang++", "-fopenmp",
                                  "--offload-arch=gfx90a", "-nogpulib", "--offload-device-only",
                                  "-MD", "-MF", "build/obj/bare.cpp.dev.gfx90a.d", "-c", "bare.cpp",
                                  "-o", "build/obj/bare.cpp.dev.gfx90a.o"});
  CHECK(plan.jobs[3].argv ==
        Argv{"/nonexistent/llvm/bin/llvm-offload-binary", "-o", "build/obj/bare.cpp.offload",
             // sorted by (triple, arch), as the clang driver does
             "--image=file=build/obj/bare.cpp.dev.gfx90a.o,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=openmp",
             "--image=file=build/obj/bare.cpp.dev.sm_90.o,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=openmp",
             "--image=file=build/obj/bare.cpp.dev.host.o,triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp"});
  const std::string triples =
      "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda,amdgcn-amd-amdhsa";
  CHECK(plan.jobs[4].argv[2] == triples);
  CHECK(plan.jobs[5].argv ==
        Argv{"/nonexistent/llvm/bin/clang++", "-fopenmp", triples,
             "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90",
             "-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a", "-nogpulib",
             "build/obj/bare.cpp.host.o", "-o", "build/demo",
             "-Wl,--dependency-file=build/obj/demo.link.d"});
}

TEST_CASE("the link uses the toolchain's lld unless the manifest says system", "[plan]") {
  auto m = fake_manifest({"a.c"}, {kHost});
  toolchain::Toolchain tc = test::fake_toolchain("/nonexistent/llvm");
  auto link_of = [&] { return plan::make_plan(m, tc).jobs.back(); };
  auto has = [](const plan::Job& j, const std::string& a) {
    return std::find(j.argv.begin(), j.argv.end(), a) != j.argv.end();
  };
  CHECK_FALSE(has(link_of(), "-fuse-ld=lld"));  // no ld.lld installed
  tc.lld = tc.root / "bin/ld.lld";
  const plan::Job lld = link_of();
  CHECK(has(lld, "-fuse-ld=lld"));
  CHECK(std::count(lld.tools.begin(), lld.tools.end(), tc.root / "bin/ld.lld") == 1);
  m.linker = manifest::Manifest::Linker::System;
  const plan::Job system = link_of();
  CHECK_FALSE(has(system, "-fuse-ld=lld"));
  CHECK(std::count(system.tools.begin(), system.tools.end(), fs::path("/usr/bin/ld")) == 1);
}

TEST_CASE("sources outside the project get safe object paths", "[plan]") {
  auto m = fake_manifest({"../common/x.c"}, {kHost});
  m.sources[0].path = fs::path("/proj/../common/x.c").lexically_normal();
  plan::Plan plan = plan::make_plan(m, test::fake_toolchain("/nonexistent/llvm"));
  CHECK(plan.jobs[0].outputs[0] == "/proj/build/obj/__/common/x.c.dev.host.o");
  CHECK(plan.jobs[0].argv[8] == "/common/x.c");  // outside cwd: absolute in argv
}
