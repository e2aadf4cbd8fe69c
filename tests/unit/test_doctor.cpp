// doctor: parsers and formatting with hand-made facts; one test probes this machine.
#include <sstream>

#include <catch2/catch.hpp>

#include "offload_build/toolchain/doctor.hpp"
#include "offload_build/toolchain/doctor_facts.hpp"
#include "support/skip.hpp"

using namespace ob::toolchain::doctor;

namespace {

// The facts of a machine like the project's: LLVM 22 without GPU device runtimes,
// CUDA 13, a nightly rustc built without LLVM Offload, no GPU.
DoctorFacts typical_facts() {
  DoctorFacts f;
  f.root = "/usr/lib/llvm-22";
  f.llvm_version = "22.1.8";
  for (const char* name : {"clang", "clang++", "llvm-offload-binary", "clang-linker-wrapper",
                           "clang-nvlink-wrapper", "ld.lld", "llvm-objdump"}) {
    f.tools.push_back({name, fs::path("/usr/lib/llvm-22/bin") / name, "22.1.8"});
  }
  f.flang_found = true;  // flang-22 (scripts/setup.sh)
  f.libomptarget = "/usr/lib/llvm-22/lib/libomptarget.so.22.1";
  f.tools.push_back({"libomptarget", f.libomptarget, "22.1"});
  f.cuda_path = "/usr/local/cuda";
  f.tools.push_back({"CUDA ptxas", fs::path("/usr/local/cuda/bin/ptxas"), "13.0.88"});
  f.tools.push_back({"CUDA nvlink", fs::path("/usr/local/cuda/bin/nvlink"), "13.0.88"});
  f.nvlink_found = true;
  f.lld_found = true;
  f.rust.rustc = "/rust/bin/rustc";
  f.rust.origin = "rustup nightly";
  f.rust.version = "1.97.0-nightly";
  f.rust.version_line = "rustc 1.97.0-nightly (e50aa6fba 2026-05-19)";
  f.rust.nightly = true;
  f.rust.accepts_offload = true;
  f.rust.offload_settings = {"Host=<Absolute-Path>", "Device", "Test"};
  f.rust.llvm_offload = Tri::no;
  f.rust.llvm_offload_note = "-Zoffload=Host= panics: not built with LLVM Offload support";
  f.tools.push_back({"rustc", f.rust.rustc, f.rust.version});
  f.gpus.nvptx_arch_ran = f.gpus.amdgpu_arch_ran = f.gpus.device_info_ran = true;
  f.gpus.offload_devices = {"Virtual Host Device (HOST)"};
  return f;
}

}  // namespace

TEST_CASE("parse_version reads --version output of each tool", "[doctor]") {
  CHECK(parse_version("Debian clang version 22.1.8 (1~deb12u1)\nTarget: x86_64-pc-linux-gnu\n") ==
        "22.1.8");
  CHECK(parse_version("Debian LLD 22.1.8 (compatible with GNU linkers)\n") == "22.1.8");
  CHECK(parse_version("Debian LLVM version 22.1.8\n  Optimized build.\n") == "22.1.8");
  CHECK(parse_version("ptxas: NVIDIA (R) Ptx optimizing assembler\n"
                      "Copyright (c) 2005-2025 NVIDIA Corporation\n"
                      "Built on Wed_Aug_20_01:55:12_PM_PDT_2025\n"
                      "Cuda compilation tools, release 13.0, V13.0.88\n") == "13.0.88");
  CHECK(parse_version("rustc 1.97.0-nightly (e50aa6fba 2026-05-19)\n") == "1.97.0-nightly");
  CHECK(parse_version("rustc 1.95.0 (59807616e 2026-04-14)") == "1.95.0");
  CHECK(parse_version("clang version 23.0.0git (https://github.com/llvm/llvm-project abc)") ==
        "23.0.0git");
  CHECK(parse_version("no version here\n2005-2025\n") == "");
}

TEST_CASE("short_version and libomptarget_version", "[doctor]") {
  CHECK(short_version("1.97.0-nightly") == "1.97");
  CHECK(short_version("22.1.8", 1) == "22");
  CHECK(short_version("") == "");
  CHECK(libomptarget_version("/usr/lib/llvm-22/lib/libomptarget.so.22.1") == "22.1");
  CHECK(libomptarget_version("/usr/lib/llvm-22/lib/libomptarget.so") == "");
}

TEST_CASE("parse_arch_list, parse_device_info, parse_offload_settings", "[doctor]") {
  CHECK(parse_arch_list("") == std::vector<std::string>{});
  CHECK(parse_arch_list("sm_90\nsm_90\nsm_80\n") == std::vector<std::string>{"sm_90", "sm_80"});
  CHECK(parse_arch_list("gfx90a\nerror: something failed\n") == std::vector<std::string>{"gfx90a"});

  const char* info =
      "Liboffload Version: 0.0.1\nNum Devices: 1\n\n[Virtual Host Device]\nPlatform Name: Host\n"
      "Platform Backend: HOST\nName: Virtual Host Device\nType: HOST\nDriver Version: 22.1.8\n";
  CHECK(parse_device_info(info) == std::vector<std::string>{"Virtual Host Device (HOST)"});

  CHECK(parse_offload_settings(
            "error: incorrect value `?` for unstable option `offload` - a comma separated list of "
            "settings: `Host=<Absolute-Path>`, `Device`, `Test` was expected\n\n") ==
        std::vector<std::string>{"Host=<Absolute-Path>", "Device", "Test"});
  CHECK(parse_offload_settings("error: unknown unstable option: `offload`\n").empty());
}

TEST_CASE("conclusions for the typical machine", "[doctor]") {
  auto c = conclusions(typical_facts());
  REQUIRE(c.size() == 5);
  CHECK_THAT(c[3], Catch::StartsWith("fortran: flang compiles offload code (split and cached), but cannot link"));
  CHECK(c[0] == "host (x86_64): full OpenMP offload; programs run here through libomptarget's "
                "host plugin");
  CHECK(c[1] == "nvptx64: bare kernels only (ompx_bare with -nogpulib), no OpenMP device runtime "
                "installed (LLVM 19 has one: scripts/setup.sh --llvm 19 unpacks it beside this LLVM); device link uses CUDA at /usr/local/cuda; no NVIDIA GPU visible here, "
                "so nvptx64 programs build here but run elsewhere");
  CHECK(c[2] == "amdgcn: bare kernels only (ompx_bare with -nogpulib), no OpenMP device runtime "
                "installed (LLVM 19 has one: scripts/setup.sh --llvm 19 unpacks it beside this LLVM); device link uses ld.lld; no AMD GPU visible here, so amdgcn programs "
                "build here but run elsewhere");
  CHECK(c[4] == "rust: nightly rustc 1.97 accepts -Zoffload; built without LLVM Offload, so "
                "offload-build uses the -Zoffload=Test host pass and packages device images itself");
}

TEST_CASE("conclusions follow the facts", "[doctor]") {
  auto f = typical_facts();
  SECTION("no CUDA") {
    f.cuda_path.reset();
    f.nvlink_found = false;
    CHECK_THAT(conclusions(f)[1], Catch::StartsWith("nvptx64: cannot link: no CUDA ptxas/nvlink found"));
  }
  SECTION("a device runtime and a GPU") {
    f.nvptx_runtime = "/opt/llvm/lib/nvptx64-nvidia-cuda/libompdevice.a";
    f.gpus.nvptx_archs = {"sm_90"};
    CHECK(conclusions(f)[1] ==
          "nvptx64: full OpenMP offload (device runtime "
          "/opt/llvm/lib/nvptx64-nvidia-cuda/libompdevice.a); device link uses CUDA at "
          "/usr/local/cuda; NVIDIA GPU visible: sm_90");
  }
  SECTION("no lld") {
    f.lld_found = false;
    CHECK_THAT(conclusions(f)[2], Catch::StartsWith("amdgcn: cannot link: ld.lld not found (install lld-22)"));
  }
  SECTION("stable rustc") {
    f.rust.nightly = false;
    f.rust.version = "1.95.0";
    CHECK_THAT(conclusions(f)[4], Catch::StartsWith("rust: rustc 1.95 is not nightly"));
  }
  SECTION("no rustc") {
    f.rust = RustFacts{};
    CHECK_THAT(conclusions(f)[4], Catch::StartsWith("rust: no rustc found"));
  }
  SECTION("rustc without -Zoffload") {
    f.rust.accepts_offload = false;
    CHECK(conclusions(f)[4] ==
          "rust: nightly rustc 1.97 does not know -Zoffload; update the nightly (rustup update nightly)");
  }
  SECTION("rustc with LLVM Offload") {
    f.rust.llvm_offload = Tri::yes;
    CHECK_THAT(conclusions(f)[4], Catch::EndsWith("was built with LLVM Offload, so its own "
                                                  "-Zoffload=Device/Host passes work"));
  }
}

TEST_CASE("format_report of the typical machine, exactly", "[doctor]") {
  const std::string expected = R"(offload-build doctor
toolchain: /usr/lib/llvm-22 (LLVM 22.1.8)

Tools
  clang                 22.1.8          /usr/lib/llvm-22/bin/clang
  clang++               22.1.8          /usr/lib/llvm-22/bin/clang++
  llvm-offload-binary   22.1.8          /usr/lib/llvm-22/bin/llvm-offload-binary
  clang-linker-wrapper  22.1.8          /usr/lib/llvm-22/bin/clang-linker-wrapper
  clang-nvlink-wrapper  22.1.8          /usr/lib/llvm-22/bin/clang-nvlink-wrapper
  ld.lld                22.1.8          /usr/lib/llvm-22/bin/ld.lld
  llvm-objdump          22.1.8          /usr/lib/llvm-22/bin/llvm-objdump
  libomptarget          22.1            /usr/lib/llvm-22/lib/libomptarget.so.22.1
  CUDA ptxas            13.0.88         /usr/local/cuda/bin/ptxas
  CUDA nvlink           13.0.88         /usr/local/cuda/bin/nvlink
  rustc                 1.97.0-nightly  /rust/bin/rustc

Rust
  rustc         /rust/bin/rustc (from rustup nightly)
  version       rustc 1.97.0-nightly (e50aa6fba 2026-05-19)
  nightly       yes
  -Zoffload     accepted (Host=<Absolute-Path>, Device, Test)
  LLVM Offload  no (-Zoffload=Host= panics: not built with LLVM Offload support)

Device runtimes
  x86_64-unknown-linux-gnu  host plugin: yes (/usr/lib/llvm-22/lib/libomptarget.so.22.1)
  nvptx64-nvidia-cuda       none
  amdgcn-amd-amdhsa         none

GPUs visible
  nvptx-arch                none visible
  amdgpu-arch               none visible
  llvm-offload-device-info  Virtual Host Device (HOST)

Conclusions
  host (x86_64): full OpenMP offload; programs run here through libomptarget's host plugin
  nvptx64: bare kernels only (ompx_bare with -nogpulib), no OpenMP device runtime installed (LLVM 19 has one: scripts/setup.sh --llvm 19 unpacks it beside this LLVM); device link uses CUDA at /usr/local/cuda; no NVIDIA GPU visible here, so nvptx64 programs build here but run elsewhere
  amdgcn: bare kernels only (ompx_bare with -nogpulib), no OpenMP device runtime installed (LLVM 19 has one: scripts/setup.sh --llvm 19 unpacks it beside this LLVM); device link uses ld.lld; no AMD GPU visible here, so amdgcn programs build here but run elsewhere
  fortran: flang compiles offload code (split and cached), but cannot link an offload program: flang's kernels call __kmpc_target_init and other OpenMP device-runtime entry points that no installed runtime provides for the host device, and there is no GPU device runtime
  rust: nightly rustc 1.97 accepts -Zoffload; built without LLVM Offload, so offload-build uses the -Zoffload=Test host pass and packages device images itself

ok: the host-device pipeline can build and run here
)";
  auto f = typical_facts();
  CHECK(format_report(f) == expected);
  CHECK(exit_code(f) == 0);
}

TEST_CASE("format_report of an incomplete toolchain fails with its error", "[doctor]") {
  auto f = typical_facts();
  f.toolchain_error =
      "LLVM toolchain at /usr/lib/llvm-22 is incomplete: clang-linker-wrapper not found in "
      "/usr/lib/llvm-22/bin; install clang-tools-22 (scripts/setup.sh does) or set \"toolchain\" "
      "in offload.json";
  f.tools[3].path.reset();
  f.tools[3].version.clear();
  const std::string report = format_report(f);
  CHECK(exit_code(f) == 1);
  CHECK_THAT(report, Catch::Contains("toolchain: /usr/lib/llvm-22 (unusable: see the error at the end)\n"));
  CHECK_THAT(report, Catch::Contains("  clang-linker-wrapper  -               not found\n"));
  CHECK_THAT(report, Catch::Contains("  host (x86_64): cannot build until the LLVM toolchain is complete"));
  CHECK_THAT(report, Catch::EndsWith("\nerror: " + *f.toolchain_error + "\n"));
}

TEST_CASE("format_report without libomptarget or rustc", "[doctor]") {
  auto f = typical_facts();
  f.libomptarget.reset();
  f.rust = RustFacts{};
  const std::string report = format_report(f);
  CHECK(exit_code(f) == 1);
  CHECK_THAT(report, Catch::Contains("  x86_64-unknown-linux-gnu  host plugin: no (libomptarget.so not found)\n"));
  CHECK_THAT(report, Catch::Contains("Rust\n  rustc  not found ($RUSTC, rustup nightly, PATH)\n"));
  CHECK_THAT(report, Catch::EndsWith("error: libomptarget.so not found in /usr/lib/llvm-22/lib; "
                                     "install liboffload-22-dev (scripts/setup.sh does)\n"));
}

TEST_CASE("doctor probes this machine", "[doctor]") {
  if (!fs::exists("/usr/lib/llvm-22/bin/clang")) OB_SKIP("no LLVM 22 at /usr/lib/llvm-22");
  DoctorFacts f = probe_facts(fs::path("/usr/lib/llvm-22"), std::nullopt);

  REQUIRE(f.root == fs::path("/usr/lib/llvm-22"));
  CHECK_FALSE(f.toolchain_error.has_value());
  CHECK_THAT(f.llvm_version, Catch::StartsWith("22."));
  REQUIRE(f.tools.size() == 11);
  for (const auto& t : f.tools) {
    if (t.name == "rustc" || t.name.rfind("CUDA", 0) == 0) continue;
    INFO(t.name);
    CHECK(t.path.has_value());
    CHECK_THAT(t.version, Catch::StartsWith("22."));
  }
  REQUIRE(f.libomptarget.has_value());
  CHECK_THAT(f.libomptarget->filename().string(), Catch::StartsWith("libomptarget.so"));
  CHECK_FALSE(f.nvptx_runtime.has_value());
  CHECK_FALSE(f.amdgcn_runtime.has_value());
  CHECK(f.gpus.device_info_ran);
  if (fs::exists("/usr/local/cuda/bin/ptxas")) {
    CHECK(f.cuda_path == fs::path("/usr/local/cuda"));
    CHECK_THAT(f.tools[8].version, Catch::StartsWith("1"));
  }
  // The nightly here (see offload-recipes.md) knows -Zoffload but lacks LLVM Offload.
  if (f.rust.rustc && f.rust.nightly) {
    CHECK(f.rust.accepts_offload);
    CHECK(f.rust.llvm_offload == Tri::no);
  }
  CHECK(exit_code(f) == 0);

  std::ostringstream out;
  CHECK(ob::toolchain::run_doctor(fs::path("/usr/lib/llvm-22"), std::nullopt, out) == 0);
  CHECK_THAT(out.str(), Catch::Contains("host (x86_64): full OpenMP offload"));
}

TEST_CASE("doctor on a missing toolchain exits 1", "[doctor]") {
  std::ostringstream out;
  CHECK(ob::toolchain::run_doctor(fs::path("/nonexistent/llvm-22"), std::nullopt, out) == 1);
  CHECK_THAT(out.str(), Catch::Contains("toolchain: /nonexistent/llvm-22 (unusable"));
  CHECK_THAT(out.str(), Catch::Contains("error: LLVM toolchain directory /nonexistent/llvm-22 does not exist"));
}

TEST_CASE("doctor says a Fortran offload program does not link here", "[doctor]") {
  auto f = typical_facts();
  CHECK_THAT(conclusions(f)[3], Catch::Contains("__kmpc_target_init"));
  f.flang_found = false;
  CHECK(conclusions(f)[3] == "fortran: no flang in the toolchain; install flang-22 for Fortran offload compiles");
}
