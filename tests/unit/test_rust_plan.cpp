// The Rust plan: device pass per target with the device cfg and its dep-info,
// package, embed, and the host pass that links; exact argv (golden). The
// cargo flow's plan shares the chain after the device images.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

#include "offload_build/plan/cargo_plan.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/rust_frontend.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "support/fake_toolchain.hpp"

using namespace ob;

namespace {

using Argv = std::vector<std::string>;

const manifest::Target kHost{"x86_64-unknown-linux-gnu", "generic"};
const manifest::Target kSm90{"nvptx64-nvidia-cuda", "sm_90"};
const manifest::Target kGfx90a{"amdgcn-amd-amdhsa", "gfx90a"};

toolchain::Toolchain fake_toolchain(toolchain::rust::Flavour flavour = toolchain::rust::Flavour::Test) {
  toolchain::Toolchain tc = test::fake_rust_toolchain(flavour);
  tc.cuda_path = "/cuda";
  return tc;
}

manifest::Manifest fake_manifest(std::vector<manifest::Target> targets) {
  manifest::Manifest m;
  m.file = "/proj/offload.json";
  m.project_dir = "/proj";
  m.name = "rust-saxpy";
  m.output = "rust-saxpy";
  m.build_dir = "/proj/build";
  m.sources = {{"/proj/src/main.rs", manifest::Language::Rust}};
  m.targets = std::move(targets);
  m.flags = {"--edition=2024", "-O"};
  return m;
}

}  // namespace

TEST_CASE("rust plan for the host device: device, image link, package, stub, embed, link", "[rust][plan]") {
  manifest::Manifest m = fake_manifest({kHost});
  toolchain::Toolchain tc = fake_toolchain();
  tc.rust_device_stub = "/ob/lib/offload-build/rust-device-stub.ll";
  const plan::Plan plan = plan::make_plan(m, tc);
  REQUIRE(plan.jobs.size() == 6);
  const plan::Job& dev = plan.jobs[0];
  CHECK(dev.kind == plan::JobKind::DeviceCompile);
  CHECK(dev.describe(plan.cwd) == "device host src/main.rs");
  // A fat-LTO staticlib: the archive's object carries the core the kernels use.
  CHECK(dev.argv == Argv{"/rust/bin/rustc", "--crate-name", "rust_saxpy", "--crate-type", "staticlib",
                         "--target", "x86_64-unknown-linux-gnu", "--cfg", "offload_device",
                         "-Cpanic=abort", "-Ccodegen-units=1", "-Clto=fat", "--edition=2024", "-O",
                         "--emit=link=build/obj/src/main.rs.host.a",
                         "--emit=mir=build/obj/src/main.rs.host.mir", "--emit=obj=build/obj/src/main.rs.host.crate.o",
                         "--emit=dep-info=build/obj/src/main.rs.host.d", "src/main.rs"});
  CHECK(dev.depfile == fs::path("/proj/build/obj/src/main.rs.host.d"));
  // Besides the archive: the MIR (the kernels' signatures) and the crate's object.
  CHECK(dev.outputs == std::vector<fs::path>{"/proj/build/obj/src/main.rs.host.a",
                                             "/proj/build/obj/src/main.rs.host.mir",
                                             "/proj/build/obj/src/main.rs.host.crate.o"});
  CHECK(dev.unit == 1);

  const plan::Job& image = plan.jobs[1];
  CHECK(image.kind == plan::JobKind::ImageLink);
  CHECK(image.argv == Argv{"/llvm/bin/clang", "--target=x86_64-unknown-linux-gnu", "-r", "-nostdlib",
                           "-Wno-override-module", "-o", "build/obj/src/main.rs.host.o",
                           "build/obj/src/main.rs.host.crate.o", "build/obj/src/main.rs.host.a",
                           "/ob/lib/offload-build/rust-device-stub.ll"});
  CHECK(image.inputs == std::vector<fs::path>{"/proj/build/obj/src/main.rs.host.crate.o",
                                              "/proj/build/obj/src/main.rs.host.a",
                                              "/ob/lib/offload-build/rust-device-stub.ll"});
  CHECK(image.deps == std::vector<plan::JobId>{0});

  const plan::Job& pack = plan.jobs[2];
  CHECK(pack.kind == plan::JobKind::Package);
  CHECK(pack.argv == Argv{"/llvm/bin/llvm-offload-binary", "-o", "build/obj/src/main.rs.offload",
                          "--image=file=build/obj/src/main.rs.host.o,triple=x86_64-unknown-linux-gnu,"
                          "arch=generic,kind=openmp"});
  CHECK(plan.jobs[3].argv == Argv{"touch", "build/obj/offload-stub.ll"});
  const plan::Job& embed = plan.jobs[4];
  CHECK(embed.argv == Argv{"/llvm/bin/clang", "-Wno-override-module", "-c", "-x", "ir",
                           "build/obj/offload-stub.ll", "-Xclang",
                           "-fembed-offload-object=build/obj/src/main.rs.offload", "-o",
                           "build/obj/src/main.rs.devimg.o"});
  CHECK(embed.deps == std::vector<plan::JobId>{3, 2});

  const plan::Job& link = plan.jobs[5];
  CHECK(link.kind == plan::JobKind::Link);
  CHECK(link.describe(plan.cwd) == "link build/rust-saxpy");
  CHECK(link.argv == Argv{"/rust/bin/rustc", "--crate-name", "rust_saxpy", "--crate-type", "bin",
                          "--edition=2024", "-O", "-Clto=fat", "-Zunstable-options", "-Zoffload=Test",
                          "-Clinker=/llvm/bin/clang", "-Clink-arg=--offload-link",
                          "-Clink-arg=build/obj/src/main.rs.devimg.o", "-Clink-arg=-L/llvm/lib",
                          "-Clink-arg=-lomptarget", "-Clink-arg=-Wl,-rpath,/llvm/lib",
                          "--emit=link=build/rust-saxpy", "-Zmir-include-spans=on",
                          "--emit=mir=build/obj/src/main.rs.launches.mir",
                          "--emit=dep-info=build/obj/src/main.rs.host.d", "src/main.rs"});
  CHECK(link.outputs == std::vector<fs::path>{"/proj/build/rust-saxpy", "/proj/build/obj/src/main.rs.launches.mir"});
  CHECK(link.inputs == std::vector<fs::path>{"/proj/src/main.rs", "/proj/build/obj/src/main.rs.devimg.o"});
  CHECK(link.depfile == fs::path("/proj/build/obj/src/main.rs.host.d"));
  CHECK(link.tools == std::vector<fs::path>{"/llvm/bin/clang", "/llvm/bin/clang-linker-wrapper", "/usr/bin/ld"});
  CHECK(plan.program == fs::path("/proj/build/rust-saxpy"));
  CHECK(plan.build_dir == fs::path("/proj/build"));
}

TEST_CASE("rust plan for GPUs: fat-LTO bitcode per arch, CUDA for the link", "[rust][plan]") {
  const plan::Plan plan = plan::make_plan(fake_manifest({kSm90, kGfx90a}), fake_toolchain());
  REQUIRE(plan.jobs.size() == 6);
  CHECK(plan.jobs[0].argv == Argv{"/rust/bin/rustc", "--crate-name", "rust_saxpy", "--crate-type",
                                  "staticlib", "--target", "nvptx64-nvidia-cuda", "-Ctarget-cpu=sm_90",
                                  "--cfg", "offload_device", "-Cpanic=abort", "-Ccodegen-units=1",
                                  "-Clto=fat", "--edition=2024", "-O",
                                  "--emit=llvm-bc=build/obj/src/main.rs.sm_90.bc",
                                  "--emit=mir=build/obj/src/main.rs.sm_90.mir",
                                  "--emit=dep-info=build/obj/src/main.rs.sm_90.d", "src/main.rs"});
  CHECK(plan.jobs[1].outputs == std::vector<fs::path>{"/proj/build/obj/src/main.rs.gfx90a.bc",
                                                      "/proj/build/obj/src/main.rs.gfx90a.mir"});
  // Images sorted like clang's: amdgcn before nvptx64.
  CHECK(plan.jobs[2].argv[3].find("gfx90a.bc,triple=amdgcn-amd-amdhsa,arch=gfx90a") != std::string::npos);
  const plan::Job& link = plan.jobs.back();
  CHECK(std::count(link.argv.begin(), link.argv.end(), "-Clink-arg=--cuda-path=/cuda") == 1);
  CHECK(link.tools == std::vector<fs::path>{"/cuda/bin/nvlink", "/cuda/bin/ptxas", "/llvm/bin/clang",
                                            "/llvm/bin/clang-linker-wrapper", "/llvm/bin/ld.lld",
                                            "/usr/bin/ld"});
}

TEST_CASE("rust plan maps defines, device/host flags, link flags and libs", "[rust][plan]") {
  auto m = fake_manifest({kHost});
  m.device_cfg = "gpu";
  m.defines = {"fast", "mode=wide"};
  m.device_flags = {"-Copt-level=3"};
  m.host_flags = {"-Ctarget-cpu=native"};
  m.link_flags = {"-Wl,--as-needed"};
  m.libs = {"m", "vendor/libfoo.a"};
  const plan::Plan plan = plan::make_plan(m, fake_toolchain());
  const Argv& dev = plan.jobs[0].argv;
  const Argv dev_expected{"--cfg", "gpu", "-Cpanic=abort", "-Ccodegen-units=1", "-Clto=fat", "--cfg", "fast",
                          "--cfg", "mode=\"wide\"", "--edition=2024", "-O", "-Copt-level=3"};
  CHECK(Argv(dev.begin() + 7, dev.begin() + 7 + dev_expected.size()) == dev_expected);
  const Argv& link = plan.jobs.back().argv;
  CHECK(Argv(link.begin() + 5, link.begin() + 12) ==
        Argv{"--cfg", "fast", "--cfg", "mode=\"wide\"", "--edition=2024", "-O", "-Ctarget-cpu=native"});
  CHECK(std::find(link.begin(), link.end(), "-Copt-level=3") == link.end());
  const Argv tail{"-Clink-arg=-Wl,--as-needed", "-lm", "-Clink-arg=vendor/libfoo.a"};
  auto at = std::search(link.begin(), link.end(), tail.begin(), tail.end());
  CHECK(at != link.end());
}

TEST_CASE("rust plan, native flavour: rustc's own Device and Host=<abs>/host.out", "[rust][plan]") {
  const plan::Plan plan = plan::make_plan(fake_manifest({kSm90}), fake_toolchain(toolchain::rust::Flavour::Native));
  REQUIRE(plan.jobs.size() == 3);  // device, package, link: no stub, no embed
  const Argv& dev = plan.jobs[0].argv;
  CHECK(std::count(dev.begin(), dev.end(), "-Zoffload=Device") == 1);
  CHECK(plan.jobs[1].outputs == std::vector<fs::path>{"/proj/build/obj/src/host.out"});
  const Argv& link = plan.jobs[2].argv;
  CHECK(std::count(link.begin(), link.end(), "-Zoffload=Host=/proj/build/obj/src/host.out") == 1);
  CHECK(std::count(link.begin(), link.end(), "-Zoffload=Test") == 0);
  CHECK(plan.jobs[2].inputs.back() == fs::path("/proj/build/obj/src/host.out"));
}

TEST_CASE("crate names come from the manifest name", "[rust][plan]") {
  CHECK(toolchain::rustc::crate_name("rust-saxpy") == "rust_saxpy");
  CHECK(toolchain::rustc::crate_name("2d.grid") == "_2d_grid");
}

TEST_CASE("rust frontend: registered for Rust only, and asked for each pass", "[rust][plan][frontend]") {
  const toolchain::frontend::RustFrontend* fe = toolchain::frontend::rust_for_language(manifest::Language::Rust);
  REQUIRE(fe != nullptr);
  CHECK(fe->compiles(manifest::Language::Rust));
  CHECK_FALSE(fe->compiles(manifest::Language::C));
  CHECK(toolchain::frontend::rust_for_language(manifest::Language::C) == nullptr);
  CHECK(toolchain::frontend::rust_for_language(manifest::Language::Fortran) == nullptr);
  CHECK(fe->needs_image_link(kHost));
  CHECK_FALSE(fe->needs_image_link(kSm90));
  CHECK(fe->host_reads_package(fake_toolchain(toolchain::rust::Flavour::Native)));
  CHECK_FALSE(fe->host_reads_package(fake_toolchain(toolchain::rust::Flavour::Test)));
}

namespace {

// A cargo session for the package `app` in /ws, one kernel crate (itself),
// targets as given; nothing is run or read.
plan::CargoSession fake_session(const toolchain::Toolchain& tc, std::vector<manifest::Target> targets) {
  toolchain::cargo::Package pkg;
  pkg.name = "app";
  pkg.id = "path+file:///ws#app@0.1.0";
  pkg.manifest_path = "/ws/Cargo.toml";
  pkg.lib = "app";
  pkg.lib_root = "/ws/src/lib.rs";
  pkg.target_directory = "/ws/target";
  pkg.workspace_root = "/ws";
  plan::CargoSession s{false, "/ws", tc, "/rust/bin/cargo", {}, pkg, {pkg}, {}, std::move(targets), {}, {}};
  s.crates.push_back({pkg, {}, {"saxpy"}, {"/ws"}, std::nullopt});
  for (const auto& t : s.targets) s.device_rustflags[t.triple] = {};
  return s;
}

std::vector<std::string> kinds_of(const plan::Plan& plan) {
  std::vector<std::string> out;
  for (const auto& j : plan.jobs) out.emplace_back(plan::job_kind_name(j.kind));
  return out;
}

}  // namespace

TEST_CASE("cargo plan: the same chain as a manifest crate's (package, stub, embed), then the host pass",
          "[rust][plan][cargo]") {
  toolchain::Toolchain tc = fake_toolchain();
  tc.rust_device_stub = "/ob/lib/offload-build/rust-device-stub.ll";
  const plan::CargoSession s = fake_session(tc, {kHost});
  const plan::CargoPlan p = plan::make_cargo_plan(s);
  // The image link runs inside the device job (cargo names the archive).
  CHECK(kinds_of(p.plan) == std::vector<std::string>{"device", "package", "stub", "host", "link"});
  const plan::Job& dev = p.plan.jobs[0];
  CHECK(dev.cacheable);
  CHECK_FALSE(dev.key_material);  // the cache's to add (cache::cargo_cache::add_keys)
  CHECK(dev.outputs == std::vector<fs::path>{"/ws/target/offload-device/host/app/offload/app.host.o",
                                             "/ws/target/offload-device/host/app/offload/app.host.kernels.mir"});
  REQUIRE(p.devices.count(0));
  CHECK(p.devices.at(0).mir == fs::path("/ws/target/offload-device/host/app/offload/app.host.mir"));
  CHECK(p.devices.at(0).image_link("lib.a", "out.o") ==
        Argv{"/llvm/bin/clang", "--target=x86_64-unknown-linux-gnu", "-r", "-nostdlib", "-Wno-override-module",
             "-o", "out.o", "/ws/target/offload-device/host/app/offload/app.host.crate.o", "lib.a",
             "/ob/lib/offload-build/rust-device-stub.ll"});
  // The package and its embedded object in the configuration's own dir.
  REQUIRE(p.host_steps.size() == 1);
  const fs::path off = p.host_steps.front().package.parent_path();
  CHECK(off.parent_path() == "/ws/target/offload/dev");
  CHECK(std::regex_match(off.filename().string(), std::regex("images-[0-9a-f]{16}")));
  const std::string rel = "target/offload/dev/" + off.filename().string();
  const plan::Job& pack = p.plan.jobs[1];
  CHECK(pack.argv == Argv{"/llvm/bin/llvm-offload-binary", "-o", rel + "/app.offload",
                          "--image=file=target/offload-device/host/app/offload/app.host.o,"
                          "triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp"});
  CHECK(pack.inputs == std::vector<fs::path>{dev.outputs.front()});
  CHECK(pack.deps == std::vector<plan::JobId>{0});
  CHECK(p.plan.jobs[2].argv == Argv{"touch", rel + "/offload-stub.ll"});
  CHECK(p.plan.jobs[2].describe(p.plan.cwd) == "stub offload-stub.ll");
  const plan::Job& embed = p.plan.jobs[3];
  CHECK(embed.argv == Argv{"/llvm/bin/clang", "-Wno-override-module", "-c", "-x", "ir",
                           rel + "/offload-stub.ll", "-Xclang", "-fembed-offload-object=" + rel + "/app.offload",
                           "-o", rel + "/app.devimg.o"});
  CHECK(embed.deps == std::vector<plan::JobId>{2, 1});
  for (const auto& j : p.plan.jobs)
    if (j.id != 0) CHECK_FALSE(j.cacheable);
  CHECK(p.host == 4);
  CHECK(p.plan.jobs[4].deps == std::vector<plan::JobId>{3});
  CHECK(p.host_steps.front().image == off / "app.devimg.o");
  CHECK(p.host_steps.front().named("H") == off / "devimg-H.o");
  // Another configuration of the device pass (features, profile): another dir.
  plan::CargoSession other = s;
  other.crates.front().configs["x86_64-unknown-linux-gnu"] = {"p", "q"};
  CHECK(plan::make_cargo_plan(other).host_steps.front().package.parent_path() != off);
}

TEST_CASE("cargo plan: programs of different kernel crates, each group its own package and host pass",
          "[rust][plan][cargo]") {
  plan::CargoSession s = fake_session(fake_toolchain(), {kHost});
  toolchain::cargo::Package two = s.pkg;
  two.name = "app2";
  two.id = "path+file:///ws/app2#app2@0.1.0";
  two.lib = "app2";
  s.packages.push_back(two);
  s.crates.push_back({two, {}, {"saxpy"}, {"/ws/app2"}, std::nullopt});
  s.user = toolchain::cargo::split_user_args({"--workspace", "--release"});
  s.groups = {{{s.pkg}, {0}, toolchain::cargo::for_packages(s.user, {"app"})},
              {{two}, {1}, toolchain::cargo::for_packages(s.user, {"app2"})}};
  const plan::CargoPlan p = plan::make_cargo_plan(s);
  REQUIRE(p.host_steps.size() == 2);
  CHECK(p.host_steps[0].package.parent_path() != p.host_steps[1].package.parent_path());
  CHECK(p.host_steps[1].package.filename() == "app2.offload");
  CHECK(p.host_steps[1].ids == std::vector<std::string>{two.id});
  // Each package holds its own crate's image only; the host job comes after both.
  size_t packages = 0;
  for (const auto& j : p.plan.jobs)
    if (plan::job_kind_name(j.kind) == std::string("package")) {
      CHECK(j.deps.size() == 1);
      ++packages;
    }
  CHECK(packages == 2);
  CHECK(p.plan.jobs[p.host].deps.size() == 2);
  const auto argv = p.host_steps[1].pass("/x/devimg-H.o").argv;
  CHECK(std::count(argv.begin(), argv.end(), "--workspace") == 0);
  const std::vector<std::string> tail(argv.end() - 3, argv.end());
  CHECK(tail == std::vector<std::string>{"--release", "-p", "app2"});
}

TEST_CASE("cargo plan, native flavour: the host pass reads the package itself", "[rust][plan][cargo]") {
  const plan::CargoSession s = fake_session(fake_toolchain(toolchain::rust::Flavour::Native), {kSm90});
  const plan::CargoPlan p = plan::make_cargo_plan(s);
  CHECK(kinds_of(p.plan) == std::vector<std::string>{"device", "package", "link"});
  const fs::path off = p.host_steps.front().package.parent_path();
  CHECK(off.parent_path() == "/ws/target/offload/dev");
  CHECK(p.host_steps.front().image == off / "app.offload");
  CHECK(p.host_steps.front().named("H") == off / "native-H/host.out");
  CHECK(p.plan.jobs[2].deps == std::vector<plan::JobId>{1});
}
