// The clang OpenMP-offload frontend for manifests: the package and the link.
// The passes of one compile are a frontend::Compile (clang_compiles.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::clang_openmp {

namespace fs = std::filesystem;

struct Image {
  fs::path file;
  Target target;
  // Under offload LTO (-foffload-lto) the driver also records the device
  // compile's target features ("+ptx88") in the image: `feature=` entries.
  std::vector<std::string> features = {};
};

// Whether these compile options turn offload LTO on (-foffload-lto[=K], the
// last of it and -fno-offload-lto wins), as the driver's isUsingOffloadLTO.
bool uses_offload_lto(const std::vector<std::string>& options);

// The package of `images` (llvm-offload-binary), in the driver's image order.
// Shared with the Rust planner. The passes of a C/C++ compile are
// frontend::Compile's (frontend.hpp).
std::vector<std::string> package(const Toolchain& tc, const std::vector<Image>& images,
                                 const fs::path& out);

std::vector<std::string> link(const Toolchain& tc, const Manifest& m,
                              const std::vector<fs::path>& objects, const fs::path& out,
                              const fs::path& depfile);

}  // namespace ob::clang_openmp
