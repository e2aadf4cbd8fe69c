// Launcher mode: the directories whose paths are made relative (ccache's
// base_dir) and the one kernel names are relative to (launcher_roots.cpp).
#pragma once

#include <filesystem>
#include <utility>
#include <vector>

#include "offload_build/run/request.hpp"

namespace ob::run {

// The base directories of a launcher call (--base-dir and every
// --project-dir, real paths) and the anchor kernel names are relative to: the
// nearest --project-dir holding `cwd`, else `cwd` (ccache's rule).
std::pair<std::vector<std::filesystem::path>, std::filesystem::path> launcher_roots(
    const Request& options, const std::filesystem::path& cwd);

}  // namespace ob::run
