// Probing half of `offload-build doctor`: run each tool's `--version` and the
// rustc probes (toolchain/rustc_probe), and read the filesystem, into DoctorFacts.
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include <fmt/core.h>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/doctor_facts.hpp"
#include "offload_build/toolchain/rustc_probe.hpp"
#include "offload_build/toolchain/probe.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/strings.hpp"

namespace ob::toolchain::doctor {

namespace {

using probe::is_executable;



// `tool --version` parsed to a version number ("" when it cannot be read).
std::string tool_version(const fs::path& tool) {
  auto out = probe::run({tool.string(), "--version"});
  if (!out) return "";
  std::string v = parse_version(out->out);
  return v.empty() ? parse_version(out->err) : v;
}

ToolFact tool_fact(std::string name, const std::optional<fs::path>& path) {
  ToolFact f{std::move(name), std::nullopt, ""};
  if (path && is_executable(*path)) {
    f.path = *path;
    f.version = tool_version(*path);
  }
  return f;
}

GpuFacts probe_gpus(const std::optional<fs::path>& root) {
  GpuFacts g;
  if (!root) return g;
  const fs::path bin = *root / "bin";
  if (is_executable(bin / "nvptx-arch")) {
    if (auto out = probe::run({(bin / "nvptx-arch").string()})) {
      g.nvptx_arch_ran = true;
      g.nvptx_archs = parse_arch_list(out->out);
    }
  }
  if (is_executable(bin / "amdgpu-arch")) {
    if (auto out = probe::run({(bin / "amdgpu-arch").string()})) {
      g.amdgpu_arch_ran = true;
      g.amdgpu_archs = parse_arch_list(out->out);
    }
  }
  if (is_executable(bin / "llvm-offload-device-info")) {
    if (auto out = probe::run({(bin / "llvm-offload-device-info").string()})) {
      g.device_info_ran = out->exit_code == 0;
      g.offload_devices = parse_device_info(out->out);
    }
  }
  return g;
}

}  // namespace

DoctorFacts probe_facts(const std::optional<fs::path>& toolchain_hint, const std::optional<fs::path>& llvm) {
  DoctorFacts f;
  auto search = ToolchainSearch::from_environment(toolchain_hint, llvm);
  auto tc = find_toolchain_in(search);
  if (tc) {
    f.root = tc->root;
    f.cuda_path = tc->cuda_path;
  } else {
    f.toolchain_error = tc.error().message;
    f.root = toolchain_root_candidate(search);
    const char* path_env = config::env_or_null("PATH");
    f.cuda_path = find_cuda(kDefaultCudaRoot, path_env ? path_env : "");
  }

  auto bin_tool = [&](const char* name) -> std::optional<fs::path> {
    if (!f.root) return std::nullopt;
    return *f.root / "bin" / name;
  };
  // The packager is clang-offload-packager before LLVM 20.
  const bool old_packager = f.root && !is_executable(*f.root / "bin/llvm-offload-binary") &&
                            is_executable(*f.root / "bin/clang-offload-packager");
  for (const char* name : {"clang", "clang++", old_packager ? "clang-offload-packager" : "llvm-offload-binary",
                           "clang-linker-wrapper", "clang-nvlink-wrapper", "ld.lld", "llvm-objdump"}) {
    f.tools.push_back(tool_fact(name, bin_tool(name)));
  }
  f.llvm_version = f.tools.front().version;
  f.lld_found = f.tools[5].path.has_value();
  std::error_code ec;
  // flang, or flang-new before LLVM 20.
  f.flang_found = f.root && (fs::exists(*f.root / "bin" / "flang", ec) || fs::exists(*f.root / "bin" / "flang-new", ec));
  f.devicertl_found = f.root && fs::exists(*f.root / "lib" / "libomptarget.devicertl.a", ec);

  ToolFact omp{"libomptarget", std::nullopt, ""};
  if (f.root) f.libomptarget = find_libomptarget(*f.root / "lib");
  if (f.libomptarget) {
    omp.path = f.libomptarget;
    omp.version = libomptarget_version(*f.libomptarget);
    if (omp.version.empty() && bin_tool("llvm-config")) omp.version = tool_version(*bin_tool("llvm-config"));
  }
  f.tools.push_back(omp);

  auto cuda_tool = [&](const char* name) -> std::optional<fs::path> {
    if (!f.cuda_path) return std::nullopt;
    return *f.cuda_path / "bin" / name;
  };
  f.tools.push_back(tool_fact("CUDA ptxas", cuda_tool("ptxas")));
  f.tools.push_back(tool_fact("CUDA nvlink", cuda_tool("nvlink")));
  f.nvlink_found = f.tools.back().path.has_value();

  f.rust = rust::probe_rustc(rust::RustcSearch::from_environment(std::nullopt));
  f.tools.push_back(ToolFact{"rustc", f.rust.rustc, f.rust.version});

  if (f.root) {
    f.nvptx_runtime = find_device_runtime(*f.root, manifest::kNvptxTriple);
    f.amdgcn_runtime = find_device_runtime(*f.root, manifest::kAmdgcnTriple);
    f.nvptx_archs = runtime_archs(*f.root, manifest::kNvptxTriple);
    f.amdgcn_archs = runtime_archs(*f.root, manifest::kAmdgcnTriple);
  }
  for (const auto& root : installed_llvms()) {
    std::vector<std::string> has;
    for (auto triple : {manifest::kNvptxTriple, manifest::kAmdgcnTriple})
      if (find_device_runtime(root, triple)) has.push_back(std::string(triple));
    f.llvms.emplace_back(root, has.empty() ? "no GPU device runtime" : "GPU device runtime: " + util::join(has, ", "));
  }
  f.gpus = probe_gpus(f.root);
  return f;
}

}  // namespace ob::toolchain::doctor
