// The single-parse layout of a manifest's C/C++ translation units: one host-IR
// job per TU, whose bitcode every device pass and the host codegen read,
// instead of each of them parsing the source for the host again (the
// two-parse driver form). Here: which TUs take it, probing the driver once
// per distinct device command; compile_planner.cpp makes the jobs.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/frontends/single_parse.hpp"
#include "common_jobs.hpp"

namespace ob::plan::single_parse_plan {

using Passes = std::vector<toolchain::single_parse::DevicePass>;  // one per target

using Compiles = std::vector<std::unique_ptr<toolchain::frontend::Compile>>;  // one per source

// Per source (m.sources order): its device passes split out of the driver's
// own commands, or nullopt where the TU keeps the two-parse form: no probe,
// --two-parse, the frontend's two_parse_reason (clang: host_flags or
// device_flags set, the device passes' host parse would then differ from the
// host pass's), or a listing of another shape.
// One probe serves every TU whose device pass differs only in its paths; the
// probes run in parallel. Reasons go to options.note.
std::vector<std::optional<Passes>> split(const manifest::Manifest& m, const Compiles& compiles,
                                         const std::vector<std::vector<common_jobs::DeviceStep>>& steps,
                                         const fs::path& cwd, const PlanOptions& options);

}  // namespace ob::plan::single_parse_plan
