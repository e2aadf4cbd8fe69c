// The LLVM installation offload-build drives: where each tool is, and what
// device runtimes it ships (which decides what a GPU target can build).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/manifest/target.hpp"
#include "offload_build/toolchain/rustc_probe.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain {

namespace fs = std::filesystem;

// A GPU family's OpenMP device runtime as one LLVM installation has it, and
// what a device pass must be told to use it (the frontend spells the flags:
// clang_openmp::device_runtime_flags).
struct DeviceRuntime {
  fs::path file;  // libomptarget-nvptx-sm_90.bc, libompdevice.a, libomptarget.devicertl.a
  // The bitcode is where the driver does not look itself: Debian's clang
  // looks in /usr/lib/llvm-N/lib, not next to itself (a private prefix).
  bool bitcode_elsewhere = false;
  // An AMD GPU without ROCm's device libraries, which LLVM 16-19's driver
  // links into every compile unless told not to; the OpenMP runtime itself
  // comes at the link (libomptarget.devicertl.a).
  bool without_rocm_libs = false;
};

// An LLVM installation described by what it has, not by its major: the
// packager's name, each target's device runtime, the image names.
struct Toolchain {
  fs::path root;             // e.g. /usr/lib/llvm-22
  int major = 0;             // root/lib/clang/<N> (0 when unknown)
  fs::path clang;            // root/bin/clang
  fs::path clangxx;          // root/bin/clang++
  fs::path flang;            // root/bin/flang, flang-new before LLVM 20 (which may be absent: flang-N)
  fs::path offload_binary;   // root/bin/llvm-offload-binary, clang-offload-packager before LLVM 20
  fs::path linker_wrapper;   // root/bin/clang-linker-wrapper
  fs::path objdump;          // root/bin/llvm-objdump
  fs::path lib_dir;          // root/lib (libomptarget.so)
  std::optional<fs::path> cuda_path;  // holds bin/ptxas and bin/nvlink
  std::optional<fs::path> lld;        // root/bin/ld.lld when installed (lld-22)
  // Rust projects only: the nightly rustc and its -Zoffload flavour, set by
  // rustc::prepare (toolchain/frontends/rustc.hpp) before planning.
  std::optional<rust::RustToolchain> rust;
  std::optional<fs::path> rust_device_stub;  // rustc::find_device_stub(), for host-device images

  // The OpenMP device runtime for a GPU family (libompdevice / libomptarget-*.bc).
  // The host device needs none. Without one only ompx_bare kernels build.
  // Searched once per triple by a Toolchain and its copies: it describes the
  // installation as it was when first asked (a plan asks for every GPU job).
  bool has_device_runtime(const manifest::Target& target) const;
  std::optional<DeviceRuntime> device_runtime(const manifest::Target& target) const;
  // The arch a package names an image of `target` by, as this LLVM's driver
  // writes it: the host device's is "generic" from LLVM 20 on, empty before.
  std::string image_arch(const manifest::Target& target) const;

  struct DeviceRuntimes {
    std::mutex mutex;
    std::map<std::string, std::optional<DeviceRuntime>> by_target;
  };
  std::shared_ptr<DeviceRuntimes> runtimes = std::make_shared<DeviceRuntimes>();
};

// Find the toolchain: `hint` (manifest "toolchain"), then `llvm` (the llvm
// setting, $OFFLOAD_BUILD_LLVM), then /usr/lib/llvm-22 and newer, then clang
// on PATH. The error says what to install.
Result<Toolchain> find_toolchain(const std::optional<fs::path>& hint, const std::optional<fs::path>& llvm);

// Describe a toolchain rooted at `root`; fails when a required tool is missing.
Result<Toolchain> toolchain_at(const fs::path& root);

// ---- Lower-level pieces of the search, testable against a fake directory tree. ----

// Where find_toolchain looks; from_environment() reads $PATH.
struct ToolchainSearch {
  std::optional<fs::path> hint;       // "toolchain" in offload.json: used alone when set
  std::optional<fs::path> env_root;   // the llvm setting ($OFFLOAD_BUILD_LLVM): used alone when set
  fs::path system_prefix = "/usr/lib";  // holds llvm-30 .. llvm-16, the newest first
  int newest = 30;
  int oldest = 16;  // kOldestLlvm
  std::string path_env;                 // $PATH, for the clang-on-PATH fallback

  static ToolchainSearch from_environment(const std::optional<fs::path>& hint,
                                          const std::optional<fs::path>& llvm);
};

Result<Toolchain> find_toolchain_in(const ToolchainSearch& search);

// The root the search would report on even when that toolchain is incomplete
// (doctor lists its tools); nullopt when no candidate directory exists at all.
std::optional<fs::path> toolchain_root_candidate(const ToolchainSearch& search);

// First executable `name` in a colon-separated PATH, or nullopt.
std::optional<fs::path> find_in_path(std::string_view name, std::string_view path_env);

// Where CUDA is looked for first (find_cuda's default_root).
inline constexpr const char* kDefaultCudaRoot = "/usr/local/cuda";

// CUDA: `default_root` (/usr/local/cuda) when it has bin/ptxas, else the parent
// of the bin directory holding the `ptxas` found on PATH.
std::optional<fs::path> find_cuda(const fs::path& default_root, std::string_view path_env);
// `tc` with the CUDA installation a compile's --cuda-path=DIR names (`dir`
// as written, relative to `cwd`) when DIR has bin/ptxas, as clang picks it.
Toolchain with_cuda_path(Toolchain tc, const std::optional<std::string>& dir, const fs::path& cwd);
// What an nvptx device compile reads of CUDA that no depfile lists: ptxas
// (the driver's device pass runs it) and libdevice (each device cc1 links
// it); empty without CUDA.
std::vector<fs::path> cuda_compile_files(const Toolchain& tc);

// lib_dir/libomptarget.so.<version> (newest), else lib_dir/libomptarget.so.
std::optional<fs::path> find_libomptarget(const fs::path& lib_dir);

// OpenMP device runtime under `root` for a GPU target (nvptx64-nvidia-cuda or
// amdgcn-amd-amdhsa, its arch: LLVM 16-19 ship one bitcode file per arch);
// an empty arch takes any arch's. nullopt for any other triple or when none
// is installed.
std::optional<fs::path> find_device_runtime(const fs::path& root, std::string_view triple,
                                            std::string_view arch = {});

// The oldest LLVM whose offload driver offload-build models (the packager,
// -fopenmp-targets, --offload-device-only/--offload-host-only, the linker wrapper).
inline constexpr int kOldestLlvm = 16;
// The LLVM offload-build is built and tested with, and the one that ships a
// GPU device runtime in Debian's registry (scripts/llvm-prefix.sh).
inline constexpr int kDefaultLlvm = 22;
inline constexpr int kRuntimeLlvm = 19;

// N of root/lib/clang/N, the LLVM major of an installation; 0 when unknown.
int llvm_major(const fs::path& root);
// The LLVM major of the compiler `program` runs (a path, or a name on PATH,
// links resolved: /usr/bin/clang-19 is /usr/lib/llvm-19/bin/clang), else the
// version its name ends in (clang-19), else kDefaultLlvm. Remembered per name.
int program_llvm_major(const std::string& program);

// The archs a GPU family's per-arch device runtime bitcode covers under
// `root` (LLVM 16-19: libomptarget-nvptx-sm_35.bc ... sm_90.bc), sorted;
// empty when it has one file for every arch or none.
std::vector<std::string> runtime_archs(const fs::path& root, std::string_view triple);

// Where LLVM installations live besides the one a search picks: the system's
// /usr/lib/llvm-N (16 and newer) and the private prefixes scripts/llvm-prefix.sh
// makes ($OFFLOAD_BUILD_TOOLCHAINS, else ${XDG_DATA_HOME:-~/.local/share}/offload-build:
// llvm-N/usr/lib/llvm-N); each root that has bin/clang, newest first.
std::vector<fs::path> installed_llvms();

// Every directory the searches above list to find `tc` and what it holds for
// `targets`: where LLVM was looked for, its bin/ and lib/, lib/clang/<N>/lib,
// each GPU triple's runtime directories, CUDA's, and `path_env`'s. An entry
// added to or removed from any of them may change what a search finds (the
// no-op record stamps them).
std::vector<fs::path> searched_dirs(const Toolchain& tc, const std::vector<manifest::Target>& targets,
                                    std::string_view path_env);

}  // namespace ob::toolchain
