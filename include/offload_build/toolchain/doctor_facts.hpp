// `offload-build doctor` in two halves: probing the machine into DoctorFacts
// (subprocesses, filesystem) and formatting those facts as text (a pure function,
// unit-tested with hand-made facts).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/toolchain/rustc_probe.hpp"

namespace ob::toolchain::doctor {

namespace fs = std::filesystem;

// The rustc facts are probed by toolchain/rustc_probe (shared with the Rust build).
using Tri = rust::Tri;
using RustFacts = rust::RustcFacts;

struct ToolFact {
  std::string name;             // "clang", "CUDA ptxas", "libomptarget", ...
  std::optional<fs::path> path; // nullopt: not found
  std::string version;          // "22.1.8"; empty when it could not be read
};

struct GpuFacts {
  std::vector<std::string> nvptx_archs;      // from nvptx-arch, e.g. "sm_90"
  std::vector<std::string> amdgpu_archs;     // from amdgpu-arch, e.g. "gfx90a"
  std::vector<std::string> offload_devices;  // from llvm-offload-device-info: "Name (TYPE)"
  bool nvptx_arch_ran = false;
  bool amdgpu_arch_ran = false;
  bool device_info_ran = false;
};

struct DoctorFacts {
  std::optional<fs::path> root;        // the toolchain root reported on (even if incomplete)
  std::optional<std::string> toolchain_error;  // why find_toolchain failed
  std::string llvm_version;            // "22.1.8" (clang's)
  std::vector<ToolFact> tools;         // in display order
  std::optional<fs::path> libomptarget;
  std::optional<fs::path> cuda_path;   // has bin/ptxas
  bool nvlink_found = false;
  bool lld_found = false;
  bool flang_found = false;            // root/bin/flang (flang-new before 20): Fortran offload compiles
  bool devicertl_found = false;        // root/lib/libomptarget.devicertl.a: flang's GPU link takes it
  std::optional<fs::path> nvptx_runtime;
  std::optional<fs::path> amdgcn_runtime;
  std::vector<std::string> nvptx_archs, amdgcn_archs;  // a per-arch runtime's archs (LLVM 16-19)
  // Every LLVM installed here (installed_llvms) with its device runtimes in a word.
  std::vector<std::pair<fs::path, std::string>> llvms;
  RustFacts rust;
  GpuFacts gpus;
};

// Gather every fact; each probe is a short `--version`-style subprocess.
DoctorFacts probe_facts(const std::optional<fs::path>& toolchain_hint, const std::optional<fs::path>& llvm);

// The full report, aligned plain text, ending with the verdict line.
std::string format_report(const DoctorFacts& facts);

// One plain-language line per family: host, nvptx64, amdgcn, fortran, rust.
std::vector<std::string> conclusions(const DoctorFacts& facts);

// 0 when the host-device pipeline can build and run (complete toolchain and
// libomptarget), else 1.
int exit_code(const DoctorFacts& facts);

// ---- parsing helpers (pure) ----

// The version number in `--version` output: on the first line that has a dotted
// number, the one with the most components ("Debian clang version 22.1.8 (..)" ->
// "22.1.8", "release 13.0, V13.0.88" -> "13.0.88"), with a "-nightly"-style suffix kept.
std::string parse_version(std::string_view text);
// The "1.2.3" part of a version, or its first `components` parts ("1.97").
std::string short_version(std::string_view version, int components = 2);
// The version in a libomptarget file name: libomptarget.so.22.1 -> "22.1"; "" if none.
std::string libomptarget_version(const fs::path& lib);
// Arch names printed by nvptx-arch / amdgpu-arch (one per line), de-duplicated.
std::vector<std::string> parse_arch_list(std::string_view output);
// Devices listed by llvm-offload-device-info: "[Name]" headings plus their "Type:".
std::vector<std::string> parse_device_info(std::string_view output);
// The settings rustc lists when -Zoffload gets a bad value
// ("... `Host=<Absolute-Path>`, `Device`, `Test` was expected").
std::vector<std::string> parse_offload_settings(std::string_view rustc_error);

}  // namespace ob::toolchain::doctor
