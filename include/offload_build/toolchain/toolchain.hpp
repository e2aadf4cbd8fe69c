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

#include "offload_build/manifest/target.hpp"
#include "offload_build/toolchain/rustc_probe.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain {

namespace fs = std::filesystem;

struct Toolchain {
  fs::path root;             // e.g. /usr/lib/llvm-22
  fs::path clang;            // root/bin/clang
  fs::path clangxx;          // root/bin/clang++
  fs::path offload_binary;   // root/bin/llvm-offload-binary
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
  std::optional<fs::path> device_runtime(const manifest::Target& target) const;

  struct DeviceRuntimes {
    std::mutex mutex;
    std::map<std::string, std::optional<fs::path>> by_triple;
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
  fs::path system_prefix = "/usr/lib";  // holds llvm-30 .. llvm-22
  int newest = 30;
  int oldest = 22;
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

// lib_dir/libomptarget.so.<version> (newest), else lib_dir/libomptarget.so.
std::optional<fs::path> find_libomptarget(const fs::path& lib_dir);

// OpenMP device runtime under `root` for a triple (nvptx64-nvidia-cuda or
// amdgcn-amd-amdhsa); nullopt for any other triple or when none is installed.
std::optional<fs::path> find_device_runtime(const fs::path& root, std::string_view triple);

// Every directory the searches above list to find `tc` and what it holds for
// `targets`: where LLVM was looked for, its bin/ and lib/, lib/clang/<N>/lib,
// each GPU triple's runtime directories, CUDA's, and `path_env`'s. An entry
// added to or removed from any of them may change what a search finds (the
// no-op record stamps them).
std::vector<fs::path> searched_dirs(const Toolchain& tc, const std::vector<manifest::Target>& targets,
                                    std::string_view path_env);

}  // namespace ob::toolchain
