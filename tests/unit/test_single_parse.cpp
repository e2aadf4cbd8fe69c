// Splitting the clang driver's device pass (its `-###` listing) into a host-IR
// step shared by every target, and the plan that runs it once per TU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <filesystem>

#include "offload_build/plan/launcher_plan.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/driver_listing.hpp"
#include "offload_build/toolchain/frontends/single_parse.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "support/fake_toolchain.hpp"

using namespace ob;
using Argv = std::vector<std::string>;

namespace {

std::string after(const Argv& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

// What clang 22 lists for `clang -fopenmp <selector> --offload-device-only
// -MD -MF D -c SRC -o OUT` (trimmed to the arguments that matter here).
std::vector<Argv> fake_listing(const Argv& driver) {
  const std::string src = after(driver, "-c"), out = after(driver, "-o"), dep = after(driver, "-MF");
  const std::string main = std::filesystem::path(src).filename().string();
  const bool nvptx = std::find(driver.begin(), driver.end(), "--offload-arch=sm_90") != driver.end();
  std::vector<Argv> l;
  l.push_back({"/llvm/bin/clang", "-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-llvm-bc",
               "-main-file-name", main, "-dependency-file", dep, "-MT", out,
               "-disable-llvm-passes", "-o", "/tmp/k-1a2b3c.bc", "-x", "c", src});
  l.push_back({"/llvm/bin/clang", "-cc1", "-triple", nvptx ? "nvptx64-nvidia-cuda" : "x86_64-unknown-linux-gnu",
               nvptx ? "-S" : "-emit-obj", "-main-file-name", main, "-dependency-file", dep, "-MT",
               out, "-fopenmp-is-target-device", "-fopenmp-host-ir-file-path", "/tmp/k-1a2b3c.bc",
               "-o", nvptx ? "/tmp/k-sm_90-4d5e6f.s" : out, "-x", "c", src});
  if (nvptx)
    l.push_back({"/cuda/bin/ptxas", "-m64", "-O2", "--gpu-name", "sm_90", "--output-file", out,
                 "/tmp/k-sm_90-4d5e6f.s", "-c"});
  return l;
}

class FakeProbe final : public toolchain::DriverProbe {
 public:
  std::atomic<int> calls{0}, running{0}, most{0};
  bool fail = false;
  Result<std::vector<Argv>> list(const Argv& argv, const fs::path&) override {
    ++calls;
    const int now = ++running;
    for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {}
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running;
    if (fail) return Error::failure("clang -### failed: error: unknown argument");
    return fake_listing(argv);
  }
};


manifest::Manifest fake_manifest(std::vector<std::string> sources) {
  manifest::Manifest m;
  m.file = "/proj/offload.json";
  m.project_dir = "/proj";
  m.name = m.output = "demo";
  m.build_dir = "/proj/build";
  for (auto& s : sources) m.sources.push_back({"/proj/" + s, manifest::Language::C});
  m.targets = {manifest::Target{"x86_64-unknown-linux-gnu", "generic"}, manifest::Target{"nvptx64-nvidia-cuda", "sm_90"}};
  m.include_dirs = {"include"};
  m.flags = {"-O2"};
  return m;
}

std::vector<std::string> kinds(const plan::Plan& plan) {
  std::vector<std::string> out;
  for (const auto& j : plan.jobs) out.push_back(j.describe(plan.cwd));
  return out;
}

}  // namespace

TEST_CASE("driver listing: commands, quotes and escapes, banner lines skipped", "[single-parse]") {
  auto cmds = toolchain::driver_listing::parse(
      "clang version 22.1.8\nTarget: x86_64-pc-linux-gnu\n"
      " \"/llvm/bin/clang\" \"-cc1\" \"-DX=\\\"a b\\\"\" \"c:\\\\d\" \"\\$HOME\"\n"
      " \"/cuda/bin/ptxas\" \"-c\"\n");
  REQUIRE(cmds);
  REQUIRE(cmds->size() == 2);
  CHECK((*cmds)[0] == Argv{"/llvm/bin/clang", "-cc1", "-DX=\"a b\"", "c:\\d", "$HOME"});
  CHECK((*cmds)[1] == Argv{"/cuda/bin/ptxas", "-c"});

  auto bad = toolchain::driver_listing::parse(" \"/llvm/bin/clang\" \"-cc1\n");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "clang -### line 1: unterminated quote");
}

TEST_CASE("single parse: a probed pass serves another TU with its own paths", "[single-parse]") {
  const Argv driver{"/llvm/bin/clang", "-fopenmp", "--offload-arch=sm_90", "--offload-device-only",
                    "-MD", "-MF", "build/obj/src/a.c.dev.sm_90.d", "-c", "src/a.c", "-o",
                    "build/obj/src/a.c.dev.sm_90.o"};
  auto pass = toolchain::single_parse::templatize(
      fake_listing(driver),
      {"src/a.c", "build/obj/src/a.c.dev.sm_90.o", "build/obj/src/a.c.dev.sm_90.d", {}, {}});
  REQUIRE(pass);
  const toolchain::single_parse::UnitPaths b{"lib/b.c", "build/obj/lib/b.c.dev.sm_90.o",
                                             "build/obj/lib/b.c.dev.sm_90.d", "build/obj/lib/b.c.host.bc",
                                             "build/obj/lib/b.c.dev.sm_90.s"};
  CHECK(toolchain::single_parse::instantiate(pass->device, b) ==
        Argv{"/llvm/bin/clang", "-cc1", "-triple", "nvptx64-nvidia-cuda", "-S", "-main-file-name",
             "b.c", "-dependency-file", "build/obj/lib/b.c.dev.sm_90.d", "-MT",
             "build/obj/lib/b.c.dev.sm_90.o", "-fopenmp-is-target-device",
             "-fopenmp-host-ir-file-path", "build/obj/lib/b.c.host.bc", "-o",
             "build/obj/lib/b.c.dev.sm_90.s", "-x", "c", "lib/b.c"});
  CHECK(toolchain::single_parse::instantiate(pass->assemble, b) ==
        Argv{"/cuda/bin/ptxas", "-m64", "-O2", "--gpu-name", "sm_90", "--output-file",
             "build/obj/lib/b.c.dev.sm_90.o", "build/obj/lib/b.c.dev.sm_90.s", "-c"});
}

TEST_CASE("single parse: listings of another shape are refused with the reason", "[single-parse]") {
  const Argv driver{"/llvm/bin/clang", "--offload-device-only", "-MF", "a.d", "-c", "a.c", "-o", "a.o"};
  const toolchain::single_parse::UnitPaths p{"a.c", "a.o", "a.d", {}, {}};
  auto listing = fake_listing(driver);

  SECTION("an extra step (-save-temps, -flto...)") {
    listing.push_back({"/llvm/bin/clang", "-cc1as"});
    listing.push_back({"/llvm/bin/clang", "-cc1as"});
    auto r = toolchain::single_parse::templatize(listing, p);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("4 commands"));
  }
  SECTION("a path of this TU inside another argument would leak into other TUs") {
    listing[1].push_back("-split-dwarf-file=a.o.dwo");
    auto r = toolchain::single_parse::templatize(listing, p);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("'-split-dwarf-file=a.o.dwo' embeds 'a.o'"));
  }
  SECTION("a device cc1 that does not read the host IR") {
    listing[1][13] = "/tmp/other.bc";
    REQUIRE_FALSE(toolchain::single_parse::templatize(listing, p));
  }
}

TEST_CASE("plan: one host-IR job per TU, shared by its device passes", "[single-parse][plan]") {
  FakeProbe probe;
  std::vector<std::string> notes;
  plan::PlanOptions o{&probe, false, 4, [&](const std::string& s) { notes.push_back(s); }};
  const plan::Plan plan = plan::make_plan(fake_manifest({"src/a.c", "src/b.c", "c.c"}), test::fake_toolchain(), o);

  CHECK(probe.calls == 2);  // one per target, not per TU x target
  CHECK(kinds(plan) ==
        std::vector<std::string>{"host-ir src/a.c", "device host src/a.c", "device sm_90 src/a.c",
                                 "assemble sm_90 src/a.c", "package src/a.c", "host src/a.c",
                                 "host-ir src/b.c", "device host src/b.c", "device sm_90 src/b.c",
                                 "assemble sm_90 src/b.c", "package src/b.c", "host src/b.c",
                                 "host-ir c.c", "device host c.c", "device sm_90 c.c",
                                 "assemble sm_90 c.c", "package c.c", "host c.c", "link build/demo"});
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "single-parse C/C++ pipeline for 3 of 3 translation units (2 driver probes)");

  const plan::Job& parse = plan.jobs[12];
  CHECK(parse.argv == Argv{"/llvm/bin/clang", "-fopenmp",
                           "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                           "--offload-host-only", "-emit-llvm", "-Xclang", "-disable-llvm-passes",
                           "-Iinclude", "-O2", "-MD", "-MF", "build/obj/c.c.host-ir.d", "-c",
                           "c.c", "-o", "build/obj/c.c.host.bc"});
  const plan::Job& dev = plan.jobs[14];
  CHECK(dev.deps == std::vector<plan::JobId>{12});
  CHECK(dev.inputs == std::vector<fs::path>{"/proj/c.c", "/proj/build/obj/c.c.host.bc"});
  CHECK(dev.outputs == std::vector<fs::path>{"/proj/build/obj/c.c.dev.sm_90.s"});
  CHECK(after(dev.argv, "-main-file-name") == "c.c");
  CHECK(after(dev.argv, "-fopenmp-host-ir-file-path") == "build/obj/c.c.host.bc");
  CHECK(after(dev.driver_argv, "-o") == "build/obj/c.c.dev.sm_90.o");  // compile_commands.json
  CHECK(dev.forbid_device_runtime_calls);  // checked on the PTX, before ptxas
  const plan::Job& host = plan.jobs[17];
  CHECK(host.argv == Argv{"/llvm/bin/clang", "-fopenmp",
                          "-fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda",
                          "--offload-host-only", "-Xclang",
                          "-fembed-offload-object=build/obj/c.c.offload", "-O2", "-c", "-x", "ir",
                          "build/obj/c.c.host.bc", "-o", "build/obj/c.c.host.o"});
  CHECK(host.inputs == std::vector<fs::path>{"/proj/build/obj/c.c.host.bc", "/proj/build/obj/c.c.offload"});
  CHECK_FALSE(host.depfile);
}

TEST_CASE("plan: the two-parse form where a single parse could differ", "[single-parse][plan]") {
  FakeProbe probe;
  std::vector<std::string> notes;
  plan::PlanOptions o{&probe, false, 4, [&](const std::string& s) { notes.push_back(s); }};
  manifest::Manifest m = fake_manifest({"a.c"});

  SECTION("host_flags: the host pass parses with flags the device passes do not see") {
    m.host_flags = {"-DHOST_ONLY"};
    CHECK(kinds(plan::make_plan(m, test::fake_toolchain(), o)).front() == "device host a.c");
    CHECK(probe.calls == 0);
    CHECK_THAT(notes.at(0), Catch::Contains("host_flags or device_flags are set"));
  }
  SECTION("--two-parse") {
    o.two_parse = true;
    CHECK(kinds(plan::make_plan(m, test::fake_toolchain(), o)).size() == 5);
    CHECK_THAT(notes.at(0), Catch::Contains("--two-parse"));
  }
  SECTION("a failed probe") {
    probe.fail = true;
    const plan::Plan plan = plan::make_plan(m, test::fake_toolchain(), o);
    CHECK(kinds(plan) == std::vector<std::string>{"device host a.c", "device sm_90 a.c",
                                                  "package a.c", "host a.c", "link build/demo"});
    CHECK(notes.at(0) == "two-parse pipeline for a.c: clang -### failed: error: unknown argument");
  }
}

TEST_CASE("launcher plan: one compile split around one host parse", "[single-parse][launcher]") {
  auto parsed = toolchain::clang_cli::parse({"/llvm/bin/clang", "-fopenmp", "--offload-arch=sm_90", "-O2",
                                  "-Iinc", "-MD", "-MF", "a.o.d", "-c", "a.c", "-o", "a.o"});
  REQUIRE(parsed.compile);
  FakeProbe probe;
  const plan::Plan plan = plan::make_launcher_plan(*parsed.compile, test::fake_toolchain(), "/w", &probe);
  CHECK(probe.calls == 1);
  CHECK(kinds(plan) == std::vector<std::string>{"host-ir a.c", "device sm_90 a.c",
                                                "assemble sm_90 a.c", "package a.c", "host a.c"});
  // The device cc1 writes the caller's depfile (as clang's last front end does) and keeps it.
  const plan::Job& dev = plan.jobs[1];
  CHECK(after(dev.argv, "-dependency-file") == "a.o.d");
  CHECK(dev.keep_depfile);
  CHECK(after(dev.argv, "-fopenmp-host-ir-file-path") == "a.o.offload-build/host.bc");
  // The codegen takes no source and no preprocessor option.
  const plan::Job& host = plan.jobs[4];
  CHECK(std::find(host.argv.begin(), host.argv.end(), "-Iinc") == host.argv.end());
  CHECK(std::find(host.argv.begin(), host.argv.end(), "a.c") == host.argv.end());
  CHECK(after(host.argv, "ir") == "a.o.offload-build/host.bc");
  CHECK(host.outputs == std::vector<fs::path>{"/w/a.o"});

  auto lto = toolchain::clang_cli::parse({"/llvm/bin/clang", "-fopenmp", "--offload-arch=sm_90", "-flto", "-c",
                               "a.c", "-o", "a.o"});
  REQUIRE(lto.compile);
  // -flto too: clang's own one-shot compile is this host-IR flow.
  CHECK(kinds(plan::make_launcher_plan(*lto.compile, test::fake_toolchain(), "/w", &probe)).front() ==
        "host-ir a.c");

  probe.fail = true;  // no listing: the driver's own two-parse passes
  CHECK(kinds(plan::make_launcher_plan(*parsed.compile, test::fake_toolchain(), "/w", &probe)) ==
        std::vector<std::string>{"device sm_90 a.c", "package a.c", "host a.c"});
}

TEST_CASE("plan: probes run at most parallel_probes at once", "[single-parse][plan]") {
  manifest::Manifest m = fake_manifest({"a.c"});
  m.targets = {manifest::Target{"x86_64-unknown-linux-gnu", "generic"}, manifest::Target{"nvptx64-nvidia-cuda", "sm_80"},
               manifest::Target{"nvptx64-nvidia-cuda", "sm_90"}, manifest::Target{"amdgcn-amd-amdhsa", "gfx90a"}};
  for (size_t limit : {1, 2}) {
    FakeProbe probe;
    plan::PlanOptions options{&probe, false, limit, nullptr};
    int probing = 0;  // told once that the probes run (the engine opens then)
    options.probing = [&] { ++probing; };
    plan::make_plan(m, test::fake_toolchain(), options);
    CHECK(probe.calls == 4);
    CHECK(probe.most == int(limit));
    CHECK(probing == 1);
  }
}

TEST_CASE("under offload LTO the package records the device cc1's target features, as the driver does",
          "[single-parse][plan]") {
  CHECK(toolchain::clang_openmp::uses_offload_lto({"-O2", "-foffload-lto"}));
  CHECK(toolchain::clang_openmp::uses_offload_lto({"-foffload-lto=thin"}));
  CHECK_FALSE(toolchain::clang_openmp::uses_offload_lto({"-foffload-lto", "-fno-offload-lto"}));
  CHECK_FALSE(toolchain::clang_openmp::uses_offload_lto({"-flto"}));  // host LTO only
  toolchain::single_parse::DevicePass pass;
  pass.device = {"/llvm/bin/clang", "-cc1", "-triple", "nvptx64-nvidia-cuda", "-target-cpu", "sm_90",
                 "-target-feature", "+ptx88", "-target-feature", "+sm_90a"};
  CHECK(toolchain::single_parse::target_features(pass) == std::vector<std::string>{"+ptx88", "+sm_90a"});
  auto argv = toolchain::clang_openmp::package(test::fake_toolchain(),
                                               {{"d.o", {"nvptx64-nvidia-cuda", "sm_90"}, {"+ptx88"}}}, "p.offload");
  CHECK(argv.back() == "--image=file=d.o,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=openmp,feature=+ptx88");
}
