// The Frontend seam: both planners (manifest and launcher) take every C/C++
// command from a frontend::Compile and lay out one compile's jobs the same
// way; the driver-listing reader names a device cc1's target.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/clang_flags.hpp"
#include "offload_build/toolchain/frontends/driver_listing.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/util/strings.hpp"
#include "support/fake_toolchain.hpp"
#include "support/temp_dir.hpp"

using namespace ob;
using Argv = std::vector<std::string>;

namespace {

const manifest::Target kHost{"x86_64-unknown-linux-gnu", "generic"};
const manifest::Target kSm90{"nvptx64-nvidia-cuda", "sm_90"};


manifest::Manifest one_source(manifest::Language lang, const std::string& source) {
  manifest::Manifest m;
  m.file = "/proj/offload.json";
  m.project_dir = "/proj";
  m.name = m.output = "demo";
  m.build_dir = "/proj/build";
  m.sources = {{"/proj/" + source, lang}};
  m.targets = {kHost, kSm90};
  m.include_dirs = {"include"};
  m.defines = {"N=4"};
  m.flags = {"-O2"};
  return m;
}

toolchain::clang_cli::CompileRequest request(const Argv& argv) {
  auto parsed = toolchain::clang_cli::parse(argv);
  INFO(parsed.pass_reason);
  REQUIRE(parsed.compile);
  return *parsed.compile;
}

std::string after(const Argv& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

// The job graph without paths or argv: kind, target, deps, unit.
std::vector<std::string> shape(const plan::Plan& plan) {
  std::vector<std::string> out;
  for (const auto& j : plan.jobs) {
    if (j.kind == plan::JobKind::Link) continue;
    std::string s = std::string(plan::job_kind_name(j.kind)) + (j.target ? " " + j.target->short_name() : "") +
                    " unit " + std::to_string(j.unit) + " after";
    for (plan::JobId d : j.deps) s += " " + std::to_string(d);
    out.push_back(s);
  }
  return out;
}

// What clang lists for a device pass (host-IR cc1, device cc1, ptxas for
// nvptx), trimmed to what the single-parse split reads.
class ListingProbe final : public toolchain::DriverProbe {
 public:
  int calls = 0;
  Result<std::vector<Argv>> list(const Argv& d, const fs::path&) override {
    ++calls;
    const std::string out = after(d, "-o"), dep = after(d, "-MF");
    const bool nvptx = std::find(d.begin(), d.end(), "--offload-arch=sm_90") != d.end();
    std::string src;
    for (const auto& a : d)
      if (a.size() > 2 && (a.ends_with(".c") || a.ends_with(".cpp"))) src = a;
    std::vector<Argv> l{
        {"/llvm/bin/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-llvm-bc",
         "-dependency-file", dep, "-MT", out, "-disable-llvm-passes", "-o", "/tmp/k-1.bc", "-x",
         "c", src},
        {"/llvm/bin/clang", "-cc1", "-triple", nvptx ? kSm90.triple : kHost.triple,
         nvptx ? "-S" : "-emit-obj", "-dependency-file", dep, "-MT", out,
         "-fopenmp-is-target-device", "-fopenmp-host-ir-file-path", "/tmp/k-1.bc", "-o",
         nvptx ? "/tmp/k-2.s" : out, "-x", "c", src}};
    if (nvptx) l.push_back({"/cuda/bin/ptxas", "--output-file", out, "/tmp/k-2.s", "-c"});
    return l;
  }
};

}  // namespace

TEST_CASE("frontend seam: every pass of a manifest build is the frontend's Compile",
          "[frontend][plan]") {
  const manifest::Manifest m = one_source(manifest::Language::Cxx, "src/k.cpp");
  const toolchain::Toolchain tc = test::fake_toolchain();
  const plan::Plan plan = plan::make_plan(m, tc);  // no probe: the two-parse form
  REQUIRE(plan.jobs.size() == 5);
  const toolchain::frontend::Frontend& fe = toolchain::frontend::for_language(manifest::Language::Cxx);
  const auto compile = fe.manifest_compile(tc, m, m.sources[0], "src/k.cpp");
  CHECK(plan.jobs[0].argv == compile->device(kHost, "build/obj/src/k.cpp.dev.host.o",
                                              "build/obj/src/k.cpp.dev.host.d", false));
  CHECK(plan.jobs[1].argv == compile->device(kSm90, "build/obj/src/k.cpp.dev.sm_90.o",
                                              "build/obj/src/k.cpp.dev.sm_90.d", false));
  CHECK(plan.jobs[2].argv ==
        fe.package(tc, {{"build/obj/src/k.cpp.dev.host.o", kHost}, {"build/obj/src/k.cpp.dev.sm_90.o", kSm90}},
                   "build/obj/src/k.cpp.offload"));
  CHECK(plan.jobs[3].argv == compile->host("build/obj/src/k.cpp.offload", "build/obj/src/k.cpp.host.o",
                                            "build/obj/src/k.cpp.host.d"));
  CHECK(plan.jobs[4].argv ==
        fe.link(tc, m, {"build/obj/src/k.cpp.host.o"}, "build/demo", "build/obj/demo.link.d"));
  // The C++ frontend's device pass runs clang++ with the manifest's options.
  CHECK(plan.jobs[1].argv.front() == "/llvm/bin/clang++");
  CHECK(after(plan.jobs[1].argv, "-c") == "src/k.cpp");
}

TEST_CASE("frontend seam: every pass of a launcher compile is the frontend's Compile",
          "[frontend][launcher]") {
  const auto req = request({"/llvm/bin/clang", "-fopenmp", "--offload-arch=sm_90", "-g", "-MD",
                            "-c", "k.c", "-o", "k.o"});
  const plan::Plan plan = plan::make_launcher_plan(req, test::fake_toolchain(), "/w");
  REQUIRE(plan.jobs.size() == 3);
  const auto compile = toolchain::frontend::for_language(manifest::Language::C).launcher_compile(req, "/w", "");
  // The one device pass writes the caller's depfile (k.d, clang's default name).
  CHECK(plan.jobs[0].argv == compile->device(kSm90, "k.o.offload-build/dev.sm_90.o", "k.d", true));
  CHECK(plan.jobs[0].keep_depfile);
  CHECK(plan.jobs[2].argv ==
        compile->host("k.o.offload-build/images.offload", "k.o", "k.o.offload-build/host.d"));
  // -g: every pass names the compilation directory (the frontend adds it, not the planner).
  CHECK(std::count(plan.jobs[2].argv.begin(), plan.jobs[2].argv.end(), "-fdebug-compilation-dir=/w") == 1);
}

TEST_CASE("launcher: --cuda-path=DIR keys DIR's ptxas and libdevice, -Xcuda-ptxas goes to nvptx device passes only",
          "[frontend][launcher][cuda]") {
  test::TempDir tmp;
  const fs::path cuda = tmp / "cuda";
  fs::create_directories(cuda / "bin");
  fs::create_directories(cuda / "nvvm/libdevice");
  std::ofstream(cuda / "bin/ptxas") << "#!/bin/sh\n";
  fs::permissions(cuda / "bin/ptxas", fs::perms::owner_all);
  std::ofstream(cuda / "nvvm/libdevice/libdevice.10.bc") << "bc";
  const std::string cuda_flag = "--cuda-path=" + cuda.string();
  const auto req = request({"/llvm/bin/clang", "-fopenmp", "--offload-arch=sm_90,gfx90a", cuda_flag, "-Xcuda-ptxas",
                            "-v", "-c", "k.c", "-o", "k.o"});
  REQUIRE(req.cuda_path == cuda.string());
  toolchain::Toolchain tc = test::fake_toolchain();
  tc.cuda_path = "/usr/local/cuda";  // the default one: the compile's --cuda-path wins
  const plan::Plan plan = plan::make_launcher_plan(req, tc, "/w");
  REQUIRE(plan.jobs.size() == 4);  // sm_90, gfx90a, package, host
  auto has = [](const plan::Job& j, const std::string& a) {
    return std::find(j.argv.begin(), j.argv.end(), a) != j.argv.end();
  };
  for (const auto& job : plan.jobs) {
    INFO(util::shell_join(job.argv));
    if (job.kind == plan::JobKind::Package) continue;
    CHECK(has(job, cuda_flag));
    const bool nvptx = job.target && job.target->triple == "nvptx64-nvidia-cuda";
    CHECK(has(job, "-Xcuda-ptxas") == nvptx);  // a host pass would warn that it is unused
    if (nvptx) CHECK(job.tools == std::vector<fs::path>{cuda / "bin/ptxas", cuda / "nvvm/libdevice/libdevice.10.bc"});
  }
}

TEST_CASE("frontend seam: a manifest source and a launcher compile get the same jobs",
          "[frontend][plan][launcher][single-parse]") {
  const manifest::Manifest m = one_source(manifest::Language::C, "k.c");
  const auto req = request({"/llvm/bin/clang", "-fopenmp",
                            "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                            "-Xopenmp-target=nvptx64-nvidia-cuda", "-march=sm_90", "-Iinclude",
                            "-DN=4", "-O2", "-c", "k.c", "-o", "k.o"});
  const std::vector<std::string> two_parse{"device host unit 1 after", "device sm_90 unit 1 after",
                                           "package unit 1 after 0 1", "host unit 1 after 2"};
  CHECK(shape(plan::make_plan(m, test::fake_toolchain())) == two_parse);
  CHECK(shape(plan::make_launcher_plan(req, test::fake_toolchain(), "/proj")) == two_parse);

  ListingProbe probe;
  const plan::Plan manifest = plan::make_plan(m, test::fake_toolchain(), plan::PlanOptions{&probe, false, 1, nullptr});
  const plan::Plan launcher = plan::make_launcher_plan(req, test::fake_toolchain(), "/proj", &probe);
  CHECK(probe.calls == 4);
  const std::vector<std::string> single_parse{
      "host-ir unit 1 after", "device host unit 1 after 0", "device sm_90 unit 1 after 0",
      "assemble sm_90 unit 1 after 2", "package unit 1 after 1 3", "host unit 1 after 0 4"};
  CHECK(shape(manifest) == single_parse);
  CHECK(shape(launcher) == single_parse);
  // The same driver cc1 lines split out of each (paths aside: build/obj/k.c.* and k.o.offload-build/*).
  CHECK(after(manifest.jobs[2].argv, "-fopenmp-host-ir-file-path") == "build/obj/k.c.host.bc");
  CHECK(after(launcher.jobs[2].argv, "-fopenmp-host-ir-file-path") == "k.o.offload-build/host.bc");
  // compile_commands.json lists each host pass in the driver's form.
  CHECK(after(manifest.jobs[5].driver_argv, "-o") == "build/obj/k.c.host.o");
  CHECK(after(launcher.jobs[5].driver_argv, "-o") == "k.o");
}

TEST_CASE("frontend seam: the frontend says when a compile keeps the two-parse form",
          "[frontend][single-parse]") {
  manifest::Manifest m = one_source(manifest::Language::C, "k.c");
  const toolchain::Toolchain tc = test::fake_toolchain();
  const toolchain::frontend::Frontend& fe = toolchain::frontend::for_language(manifest::Language::C);
  CHECK_FALSE(fe.manifest_compile(tc, m, m.sources[0], "k.c")->two_parse_reason());
  m.device_flags = {"-DDEVICE_ONLY"};
  const auto why = fe.manifest_compile(tc, m, m.sources[0], "k.c")->two_parse_reason();
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("host_flags or device_flags are set"));
  // ...and the planner asks it before probing the driver.
  ListingProbe probe;
  const plan::Plan plan = plan::make_plan(m, tc, plan::PlanOptions{&probe, false, 1, nullptr});
  CHECK(probe.calls == 0);
  CHECK(plan.jobs.front().kind == plan::JobKind::DeviceCompile);
  // A launcher compile's options are the compiler's own: no such rule.
  const auto req = request({"/llvm/bin/clang", "-fopenmp", "--offload-arch=sm_90", "-c", "k.c", "-o", "k.o"});
  CHECK_FALSE(fe.launcher_compile(req, "/w", "")->two_parse_reason());
}

TEST_CASE("driver listing: a device cc1's target", "[frontend][single-parse]") {
  using toolchain::driver_listing::device_cc1_target;
  CHECK(device_cc1_target({"clang", "-cc1", "-triple", "nvptx64-nvidia-cuda", "-target-cpu",
                           "sm_90", "-fopenmp-is-target-device"}) == kSm90);
  // The host device compiles for "generic" whatever its -target-cpu.
  CHECK(device_cc1_target({"clang", "-cc1", "-triple", "x86_64-unknown-linux-gnu", "-target-cpu",
                           "x86-64", "-fopenmp-is-target-device"}) == kHost);
  CHECK(device_cc1_target({"clang", "-cc1", "-triple", "amdgcn-amd-amdhsa",
                           "-fopenmp-is-target-device"}) == manifest::Target{"amdgcn-amd-amdhsa", "generic"});
  CHECK_FALSE(device_cc1_target({"clang", "-cc1", "-triple", "x86_64-unknown-linux-gnu",
                                 "-target-cpu", "x86-64", "-emit-obj"}));
}

TEST_CASE("driver listing: which listed commands package, assemble and write what", "[frontend][single-parse]") {
  using namespace toolchain::driver_listing;
  CHECK(packages({"/llvm/bin/llvm-offload-binary", "-o", "a.out", "--image=file=x"}));
  CHECK_FALSE(packages({"/llvm/bin/clang", "-cc1", "-o", "x.o"}));
  CHECK(assembles({"/cuda/bin/ptxas", "-m64", "--output-file", "x.cubin", "x.s"}));
  CHECK(assembles({"/llvm/bin/clang", "-cc1as", "-triple", "x86_64-unknown-linux-gnu", "-o", "x.o"}));
  CHECK_FALSE(assembles({"/llvm/bin/clang", "-cc1", "-emit-obj", "-o", "x.o"}));
  CHECK_FALSE(assembles({}));
  CHECK(output_of({"/llvm/bin/clang", "-c", "a.c", "-o", "build/a.o"}) == "build/a.o");
  CHECK(output_of({"/llvm/bin/clang", "-c", "a.c", "-o"}).empty());
}

TEST_CASE("clang flags: the stable-names probe's argv", "[frontend][stable_names]") {
  // The same bytes as before it moved out of stable_names.cpp.
  CHECK(toolchain::clang_flags::host_ir_probe_argv("/llvm/bin/clang", "/tmp/p.c") ==
        Argv{"/llvm/bin/clang", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "--offload-host-only",
             "-x", "c", "-S", "-emit-llvm", "-o", "-", "/tmp/p.c"});
}

TEST_CASE("clang flags: target options in a manifest list and the targets they mean", "[frontend][manifest]") {
  CHECK(toolchain::clang_flags::targets_for_flags({"--offload-arch=sm_80,gfx90a", "-O2"}) == Argv{"sm_80", "gfx90a"});
  CHECK(toolchain::clang_flags::targets_for_flags({"-fopenmp-targets=nvptx64-nvidia-cuda", "-Xopenmp-target", "-march=sm_70"}) ==
        Argv{"sm_70"});
  CHECK(toolchain::clang_flags::targets_for_flags({"-O2"}).empty());
  auto problem = toolchain::clang_flags::target_flag_problem("host_flags", {"-O2", "-g", "-fno-openmp"});
  REQUIRE(problem);
  CHECK(problem->first == 2);
  CHECK(problem->second.find("\"host_flags\" entry \"-fno-openmp\" selects offload targets") == 0);
  CHECK_FALSE(toolchain::clang_flags::target_flag_problem("flags", {"-O2", "-fopenmp-simd"}));
}
