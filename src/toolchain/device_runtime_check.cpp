#include "offload_build/toolchain/device_runtime_check.hpp"

#include <fmt/core.h>

#include "offload_build/toolchain/toolchain.hpp"

#include "offload_build/util/files.hpp"

namespace ob::toolchain {

namespace fs = std::filesystem;

namespace {

// Every entry point of the OpenMP device runtime is named __kmpc_*; both the
// ELF symbol table and the bitcode string table hold the names as plain bytes.
constexpr std::string_view kRuntimePrefix = "__kmpc_";

}  // namespace

Result<void> check_device_object(const manifest::Target& t, const fs::path& source, const fs::path& object) {
  auto read = util::read_regular_file(object, util::kMaxBuildOutput, "a device object");
  if (!read) return Error::failure(read.error().message);
  const std::string& bytes = *read;
  if (bytes.find(kRuntimePrefix) == std::string::npos) return {};
  return Error::failure(fmt::format(
      "{}: target {} ({}) needs the OpenMP device runtime, and this LLVM installation has "
      "none for {} (Debian's LLVM 22 packages ship no libomptarget-{}.bc / libompdevice.a).\n"
      "  Only 'ompx_bare' kernels that call no OpenMP runtime function can be built for a GPU "
      "here: write the region as '#pragma omp target teams ompx_bare num_teams(..) "
      "thread_limit(..)' using <gpuintrin.h>, build this source for target \"host\" only, or "
      "point \"toolchain\" in offload.json at an LLVM that has the GPU OpenMP runtime: LLVM {} does "
      "(scripts/setup.sh --llvm {} unpacks it beside LLVM 22 and prints its root).\n"
      "  (`offload-build doctor` shows which device runtimes are installed.)",
      source.string(), t.short_name(), t.triple, t.triple,
      t.family() == manifest::TargetFamily::Nvptx ? "nvptx" : "amdgpu", kRuntimeLlvm, kRuntimeLlvm));
}

}  // namespace ob::toolchain
