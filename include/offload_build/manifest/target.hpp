// Offload targets: what a user writes ("host", "sm_90", "gfx90a", "triple:arch")
// resolved to an LLVM triple and an arch.
#pragma once

#include <string>
#include <string_view>

#include "offload_build/util/result.hpp"

namespace ob::manifest {

inline constexpr std::string_view kHostTriple = "x86_64-unknown-linux-gnu";
inline constexpr std::string_view kNvptxTriple = "nvptx64-nvidia-cuda";
inline constexpr std::string_view kAmdgcnTriple = "amdgcn-amd-amdhsa";

enum class TargetFamily { HostDevice, Nvptx, Amdgcn };

struct Target {
  std::string triple;  // e.g. nvptx64-nvidia-cuda
  std::string arch;    // e.g. sm_90, gfx90a, "generic" for the host device

  TargetFamily family() const;
  bool is_gpu() const { return family() != TargetFamily::HostDevice; }
  // Short name used in file names, progress lines and --target: host, sm_90, gfx90a.
  std::string short_name() const;
  bool operator==(const Target&) const = default;
};

// Resolve one spelling. Errors name the spelling and list what is accepted,
// with a "did you mean" hint for near misses; the caller adds the location.
Result<Target> resolve_target(std::string_view spelling);

}  // namespace ob::manifest
