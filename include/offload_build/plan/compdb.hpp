// compile_commands.json (the Clang compilation database) for a plan: one
// entry per host pass and per device pass, each with its own "output", so
// clangd and other tools see the exact commands offload-build runs.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "offload_build/plan/plan.hpp"
#include "offload_build/util/result.hpp"

namespace ob::plan {

// Per C/C++ translation unit: its host pass first (the entry clangd uses for
// the file), then its device passes. Each entry has "directory" (Plan::cwd),
// "arguments" (the job's argv), "file" and "output" (absolute).
nlohmann::json compilation_database(const Plan& plan);

// Write it to <build dir>/compile_commands.json (atomically); returns the path.
Result<fs::path> write_compilation_database(const Plan& plan);

}  // namespace ob::plan
