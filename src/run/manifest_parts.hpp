// Private to src/run: what the manifest build (manifest_build.cpp) asks of
// its manifest: where kernel names are rooted, what names its working set,
// what checks a job's outputs, which compiles its options leave uncached.
#pragma once

#include <string>
#include <vector>

#include "offload_build/config/config.hpp"
#include "offload_build/manifest/manifest.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/run/manifest_build.hpp"
#include "offload_build/toolchain/stable_names.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::run {

// C/C++ compiles name kernels from each file's place relative to the
// project directory (when it lies under the project or `base`) and the
// project's namespace, its name (docs/CACHE.md).
toolchain::NameRoots kernel_name_roots(const manifest::Manifest& m, const fs::path& base);

// What names the build's working set in the engine (exec/remote/working_set.hpp).
std::string working_set_identity(const manifest::Manifest& m);

// What a job wrote, checked before it is committed: a Rust program's
// launches against the kernels its device passes compiled; a GPU object
// built without a device runtime for calls into it.
Result<void> check_outputs(const manifest::Manifest& m, const toolchain::Toolchain& tc, const plan::Plan& plan,
                           const plan::Job& job, const std::vector<fs::path>& outs);

// Why an option list leaves compiles uncached, said once a build.
void say_uncached(const plan::Plan& plan, const config::Config& c);

}  // namespace ob::run
