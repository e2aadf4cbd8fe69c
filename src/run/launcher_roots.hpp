// Launcher mode: the directories whose paths are made relative (ccache's
// base_dir) and the one kernel names are relative to, and how a split
// compile names its kernels from them (launcher_roots.cpp).
#pragma once

#include <filesystem>
#include <utility>
#include <vector>

#include "offload_build/run/request.hpp"
#include "offload_build/run/session.hpp"

namespace ob::run {

// The base directories of a launcher call (--base-dir and every
// --project-dir, real paths) and the anchor kernel names are relative to: the
// nearest --project-dir holding `cwd`, else `cwd` (ccache's rule).
std::pair<std::vector<std::filesystem::path>, std::filesystem::path> launcher_roots(
    const Request& options, const std::filesystem::path& cwd);

// A launcher compile's stable kernel names (`plan` given the roots): asked of
// `compiler` when stable_names is set, in kernel_namespace; a fault (the
// library out of reach, or not loaded) is a warning once per build.
KernelNames launcher_kernel_names(const std::filesystem::path& compiler, const std::vector<std::filesystem::path>& bases,
                                  const std::filesystem::path& anchor, Session& session, plan::Plan& plan);

}  // namespace ob::run
