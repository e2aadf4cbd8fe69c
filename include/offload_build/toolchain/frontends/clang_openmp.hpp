// The clang OpenMP-offload frontend for manifests: the package and the link.
// The passes of one compile are a frontend::Compile (clang_compiles.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"
#include "offload_build/toolchain/frontends/frontend_base.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::toolchain::clang_openmp {

namespace fs = std::filesystem;

using frontend::Image;  // frontend_base.hpp

// Whether these compile options turn offload LTO on (-foffload-lto[=K], the
// last of it and -fno-offload-lto wins), as the driver's isUsingOffloadLTO.
bool uses_offload_lto(const std::vector<std::string>& options);

// The package of `images` (llvm-offload-binary), in the driver's image order.
// Shared with the Rust planner. The passes of a C/C++ compile are
// frontend::Compile's (frontend.hpp).
std::vector<std::string> package(const Toolchain& tc, const std::vector<Image>& images,
                                 const fs::path& out);

// What a manifest's compile options name besides text, read as a launcher
// compile's options are (clang_cli::parse, the one option table): the files
// no depfile lists (-fprofile-use=, -fsanitize-ignorelist=, -fplugin=, ...)
// that the host passes and the device passes read, as written (relative to
// the manifest's directory), keyed by their content; -mllvm values that may
// name a file; or why the compiles cannot be cached at all (an option naming
// what offload-build cannot key: -B, a device library path, an unknown option).
struct OptionFiles {
  std::vector<std::string> host, device, maybe;
  std::optional<std::string> uncacheable;
};
OptionFiles option_files(const manifest::Manifest& m);
// The same read by another driver's parser (flang's): `driver` and `source`
// (a file name of its language) make the compile line `parse` reads.
OptionFiles option_files(const manifest::Manifest& m, const std::string& driver, const std::string& source,
                         const std::function<frontend::Parsed(const std::vector<std::string>&)>& parse);

// The compile options a one-shot compile of `targets` with `tc`'s clang
// needs to reach the device runtime (the CMake package asks for them through
// `offload-build runtime-flags`): a private prefix's bitcode directory
// (--libomptarget-nvptx-bc-path=DIR), and "-Xopenmp-target=amdgcn-amd-amdhsa
// -nogpulib" for an AMD GPU without ROCm's device libraries; each item one
// shell-quoted group. Empty where the driver finds all itself, or where there
// is no runtime (then only ompx_bare kernels build: -nogpulib is the caller's).
std::vector<std::string> runtime_compile_flags(const Toolchain& tc, const std::vector<manifest::Target>& targets);

// The host linker a manifest's program is linked with: ld.lld when the
// manifest asks for it ("linker": "lld", the default) and the toolchain has
// it, else the system's ld. A Rust crate's host pass links with rustc's
// default (through clang, rustc::host_link_flags): the system's ld.
fs::path host_linker(const Toolchain& tc, const manifest::Manifest& m);

std::vector<std::string> link(const Toolchain& tc, const manifest::Manifest& m,
                              const std::vector<fs::path>& objects, const fs::path& out,
                              const fs::path& depfile);

}  // namespace ob::toolchain::clang_openmp
