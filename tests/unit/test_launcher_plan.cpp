// Launcher mode's plan for one compile: the exact argv of every pass (golden),
// the files each job reads and writes, and the compilation database.
#include <catch2/catch.hpp>

#include <algorithm>

#include "support/fake_toolchain.hpp"
#include "offload_build/plan/compdb.hpp"
#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"

using namespace ob;
using Argv = std::vector<std::string>;

namespace {

plan::Plan plan_for(const Argv& argv, const fs::path& cwd = "/b") {
  auto parsed = toolchain::clang_cli::parse(argv);
  INFO(parsed.pass_reason);
  REQUIRE(parsed.compile);
  return plan::make_launcher_plan(*parsed.compile, test::fake_toolchain("/nonexistent/llvm"), cwd);
}

const std::string kWork = "obj/k.cpp.o.offload-build";

}  // namespace

TEST_CASE("launcher plan: device pass per target, package, host pass (golden argv)",
          "[launcher][plan]") {
  plan::Plan plan = plan_for({"/usr/bin/clang++-22", "-DN=4", "-I/p/include", "-O2", "-g", "-fopenmp",
                        "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                        "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90",
                        "-Xopenmp-target=nvptx64-nvidia-cuda", "-O3", "-nogpulib", "-MD", "-MT",
                        "obj/k.cpp.o", "-MF", "obj/k.cpp.o.d", "-o", "obj/k.cpp.o", "-c",
                        "/p/src/k.cpp"});
  REQUIRE(plan.jobs.size() == 4);
  CHECK(plan.cwd == "/b");
  CHECK(plan.program == "/b/obj/k.cpp.o");
  CHECK(plan.build_dir == "/b/" + kWork);
  CHECK(plan.directories == std::vector<fs::path>{"/b/" + kWork});

  const plan::Job& host_dev = plan.jobs[0];
  CHECK(host_dev.kind == plan::JobKind::DeviceCompile);
  CHECK(host_dev.argv ==
        Argv{"/usr/bin/clang++-22", "-DN=4", "-I/p/include", "-O2", "-g", "-fopenmp", "-nogpulib",
             "-c", "/p/src/k.cpp", "-fdebug-compilation-dir=/b", "-Xarch_host", "-w",
             "-fopenmp-targets=x86_64-unknown-linux-gnu", "--offload-device-only", "-MD", "-MF",
             "obj/k.cpp.o.d", "-MTobj/k.cpp.o", "-o", kWork + "/dev.host.o"});
  CHECK(host_dev.inputs == std::vector<fs::path>{"/p/src/k.cpp"});
  CHECK(host_dev.outputs == std::vector<fs::path>{"/b/" + kWork + "/dev.host.o"});
  // The last device front end (greatest triple) writes the caller's depfile, as in clang.
  CHECK(host_dev.depfile == fs::path("/b/obj/k.cpp.o.d"));
  CHECK(host_dev.keep_depfile);  // cached and restored with the object
  CHECK(host_dev.inode_sensitive);

  const plan::Job& sm90 = plan.jobs[1];
  CHECK(sm90.argv ==
        Argv{"/usr/bin/clang++-22", "-DN=4", "-I/p/include", "-O2", "-g", "-fopenmp",
             "-Xopenmp-target=nvptx64-nvidia-cuda", "-O3", "-nogpulib", "-c", "/p/src/k.cpp",
             "-fdebug-compilation-dir=/b", "-Xarch_host", "-w", "--offload-arch=sm_90",
             "--offload-device-only", "-MD",
             "-MF", kWork + "/dev.sm_90.d", "-o", kWork + "/dev.sm_90.o"});

  const plan::Job& pack = plan.jobs[2];
  CHECK(pack.kind == plan::JobKind::Package);
  CHECK(pack.deps == std::vector<plan::JobId>{0, 1});
  CHECK(pack.argv ==
        Argv{"/nonexistent/llvm/bin/llvm-offload-binary", "-o", kWork + "/images.offload",
             "--image=file=" + kWork + "/dev.sm_90.o,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=openmp",
             "--image=file=" + kWork +
                 "/dev.host.o,triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp"});

  const plan::Job& host = plan.jobs[3];
  CHECK(host.kind == plan::JobKind::HostCompile);
  CHECK(host.deps == std::vector<plan::JobId>{2});
  CHECK(host.argv ==
        Argv{"/usr/bin/clang++-22", "-DN=4", "-I/p/include", "-O2", "-g", "-fopenmp",
             // -Xopenmp-target is for device passes (clang warns it is unused here).
             "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda", "-nogpulib", "-o",
             "obj/k.cpp.o", "-c",
             "/p/src/k.cpp", "-fdebug-compilation-dir=/b", "-MD", "-MF", kWork + "/host.d",
             "--offload-host-only", "-Xclang",
             "-fembed-offload-object=" + kWork + "/images.offload"});
  CHECK_FALSE(sm90.keep_depfile);
  CHECK(host.inputs == std::vector<fs::path>{"/p/src/k.cpp", "/b/" + kWork + "/images.offload"});
  CHECK(host.outputs == std::vector<fs::path>{"/b/obj/k.cpp.o"});
  CHECK(host.depfile == fs::path("/b/" + kWork + "/host.d"));
  CHECK_FALSE(host.keep_depfile);
  for (const auto& j : plan.jobs) CHECK(j.unit == 1);
}

TEST_CASE("launcher plan: -Xarch_* goes to the passes it applies to", "[launcher][plan]") {
  plan::Plan plan = plan_for({"clang", "-fopenmp", "--offload-arch=sm_90,gfx90a", "-Xarch_host", "-DH",
                        "-Xarch_device", "-DD", "-Xarch_sm_90", "-DS", "-Xarch_gfx90a", "-DG",
                        "-c", "k.c"});
  REQUIRE(plan.jobs.size() == 4);
  auto args = [](const plan::Job& j) { return Argv(j.argv.begin() + 1, j.argv.begin() + 13); };
  CHECK(args(plan.jobs[0]) == Argv{"-fopenmp", "-Xarch_host", "-DH", "-Xarch_device", "-DD",
                                   "-Xarch_sm_90", "-DS", "-c", "k.c", "-Xarch_host", "-w",
                                   "--offload-arch=sm_90"});
  CHECK(args(plan.jobs[1]) == Argv{"-fopenmp", "-Xarch_host", "-DH", "-Xarch_device", "-DD",
                                   "-Xarch_gfx90a", "-DG", "-c", "k.c", "-Xarch_host", "-w",
                                   "--offload-arch=gfx90a"});
  CHECK(Argv(plan.jobs[3].argv.begin() + 1, plan.jobs[3].argv.begin() + 6) ==
        Argv{"-fopenmp", "--offload-arch=sm_90,gfx90a", "-Xarch_host", "-DH", "-c"});
}

TEST_CASE("launcher plan: the host device's -march and the optimization record", "[launcher][plan]") {
  plan::Plan plan = plan_for({"clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu",
                        "-Xopenmp-target=x86_64-unknown-linux-gnu", "-march=x86-64-v3",
                        "-fsave-optimization-record", "-c", "k.c", "-o", "o/k.o"});
  REQUIRE(plan.jobs.size() == 3);
  // The device pass keeps the host device's -march (its selector names only the triple).
  CHECK(Argv(plan.jobs[0].argv.begin() + 1, plan.jobs[0].argv.begin() + 5) ==
        Argv{"-fopenmp", "-Xopenmp-target=x86_64-unknown-linux-gnu", "-march=x86-64-v3",
             "-fsave-optimization-record"});
  CHECK(plan.jobs[0].target == manifest::Target{"x86_64-unknown-linux-gnu", "x86-64-v3"});
  CHECK_THAT(plan.jobs[1].argv.back(), Catch::Contains("arch=x86-64-v3"));  // the image's arch
  // The host pass writes the record clang's host compile writes, a product of the job.
  const plan::Job& host = plan.jobs[2];
  CHECK(host.outputs == std::vector<fs::path>{"/b/o/k.o", "/b/o/k.opt.yaml"});
  CHECK(std::count(host.argv.begin(), host.argv.end(), "-foptimization-record-file=o/k.opt.yaml") == 1);
  CHECK(std::find(host.argv.begin(), host.argv.end(), "-march=x86-64-v3") == host.argv.end());
}

TEST_CASE("launcher plan: depfiles requested or private", "[launcher][plan]") {
  // No depfile requested: the cache still needs one, in the work directory.
  plan::Plan none = plan_for({"clang", "-fopenmp", "--offload-arch=gfx90a", "-c", "k.c", "-o", "k.o"});
  const plan::Job& host = none.jobs.back();
  CHECK(host.depfile == fs::path("/b/k.o.offload-build/host.d"));
  CHECK_FALSE(host.keep_depfile);
  CHECK(host.argv == Argv{"clang", "-fopenmp", "--offload-arch=gfx90a", "-c", "k.c", "-o", "k.o",
                          "-MD", "-MF", "k.o.offload-build/host.d", "--offload-host-only",
                          "-Xclang", "-fembed-offload-object=k.o.offload-build/images.offload"});
  // -MMD without -MF or -MT: clang's defaults, made explicit; no -g, no compilation dir.
  plan::Plan mmd = plan_for({"clang", "-fopenmp", "--offload-arch=gfx90a,sm_90", "-MMD", "-MP", "-c",
                       "src/k.c"});
  const plan::Job& d2 = mmd.jobs[1];  // sm_90: nvptx64 sorts after amdgcn
  CHECK(mmd.program == "/b/k.o");
  CHECK(d2.depfile == fs::path("/b/k.d"));
  CHECK(d2.argv == Argv{"clang", "-fopenmp", "-c", "src/k.c", "-Xarch_host", "-w",
                        "--offload-arch=sm_90", "--offload-device-only", "-MMD", "-MF", "k.d",
                        "-MQk.o", "-MP", "-o", "k.o.offload-build/dev.sm_90.o"});
  CHECK(mmd.jobs[0].depfile == fs::path("/b/k.o.offload-build/dev.gfx90a.d"));
  CHECK(plan::requested_depfile(*toolchain::clang_cli::parse({"clang", "-fopenmp", "--offload-arch=sm_90", "-MD",
                                             "-c", "k.c", "-o", "out/k.c.o"})
                               .compile,
                          "/b") == fs::path("/b/out/k.c.d"));
}

TEST_CASE("compile_commands.json: a host and a device entry per pass", "[launcher][compdb]") {
  plan::Plan plan = plan_for({"clang", "-fopenmp", "--offload-arch=sm_90,gfx90a", "-c", "k.c", "-o", "k.o"});
  auto db = plan::compilation_database(plan);
  REQUIRE(db.size() == 3);  // host first: the entry clangd uses for the file
  CHECK(db[0]["output"] == "/b/k.o");
  CHECK(db[1]["output"] == "/b/k.o.offload-build/dev.sm_90.o");
  CHECK(db[2]["output"] == "/b/k.o.offload-build/dev.gfx90a.o");
  for (const auto& e : db) {
    CHECK(e["directory"] == "/b");
    CHECK(e["file"] == "/b/k.c");
    CHECK(e["arguments"].size() > 3);
  }
  CHECK(db[0]["arguments"] == nlohmann::json(plan.jobs.back().argv));
}

TEST_CASE("launcher plan: -save-temps as the driver's commands, ordered by the files they share",
          "[launcher][plan]") {
  auto parsed = toolchain::clang_cli::parse({"clang", "-fopenmp", "--offload-arch=sm_90", "-save-temps", "-MD",
                                  "-MF", "k.d", "-c", "k.c", "-o", "k.o"});
  REQUIRE(parsed.compile);
  CHECK(parsed.compile->save_temps);
  const std::vector<Argv> listing = {
      {"/llvm/bin/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-E", "-dependency-file", "k.d", "-o", "k-host.i", "k.c"},
      {"/llvm/bin/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-llvm-bc", "-o", "k-host.bc", "k-host.i"},
      {"/llvm/bin/clang", "-cc1", "-triple", "nvptx64-nvidia-cuda", "-fopenmp-is-target-device", "-E",
       "-dependency-file", "k.d", "-o", "k-dev.i", "k.c"},
      {"/llvm/bin/clang", "-cc1", "-triple", "nvptx64-nvidia-cuda", "-target-cpu", "sm_90",
       "-fopenmp-is-target-device", "-fopenmp-host-ir-file-path", "k-host.bc", "-S", "-o", "k-dev.s", "k-dev.i"},
      {"/cuda/bin/ptxas", "-m64", "--output-file", "k-dev.o", "k-dev.s"},
      {"/llvm/bin/llvm-offload-binary", "-o", "k.out", "--image=file=k-dev.o,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=openmp"},
      {"/llvm/bin/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-S", "-fembed-offload-object=k.out", "-o", "k-host.s", "k-host.bc"},
      {"/llvm/bin/clang", "-cc1as", "-o", "k.o", "k-host.s"},
  };
  auto plan = plan::make_listing_plan(listing, *parsed.compile, "/b");
  REQUIRE(plan);
  REQUIRE(plan->jobs.size() == 8);
  std::vector<std::vector<plan::JobId>> deps;
  for (const auto& j : plan->jobs) deps.push_back(j.deps);
  // The device's preprocessing waits for the host's only because both write k.d.
  CHECK(deps == std::vector<std::vector<plan::JobId>>{{}, {0}, {0}, {1, 2}, {3}, {4}, {1, 5}, {6}});
  CHECK(plan->jobs[3].kind == plan::JobKind::DeviceCompile);
  CHECK(plan->jobs[3].target == manifest::Target{"nvptx64-nvidia-cuda", "sm_90"});
  CHECK(plan->jobs[4].kind == plan::JobKind::Assemble);
  CHECK(plan->jobs[5].kind == plan::JobKind::Package);
  CHECK(plan->jobs[7].kind == plan::JobKind::HostCompile);
  CHECK(plan->jobs[7].outputs == std::vector<fs::path>{"/b/k.o"});
  CHECK_FALSE(plan->jobs[6].cacheable);
  // A temporary file (a shape -save-temps does not give) or another last output: not split.
  auto temp = listing;
  temp[1][6] = (fs::temp_directory_path() / "k-1234.bc").string();
  CHECK_FALSE(plan::make_listing_plan(temp, *parsed.compile, "/b"));
  CHECK_FALSE(plan::make_listing_plan({listing.begin(), listing.end() - 1}, *parsed.compile, "/b"));
}
