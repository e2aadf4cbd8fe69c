// What a split launcher compile prints: its jobs' output (warnings, remarks)
// as the compiler alone would print it (compiler_output.cpp).
#pragma once

#include <map>
#include <string>

#include "offload_build/plan/plan.hpp"

namespace ob::report {

// `output` (what each job of `plan` printed) in the compiler's order: per
// translation unit (in plan order), the host parse's output first, then
// every other job's (single parse: the host-IR job; else the unit's last
// job, the host pass, which parses the host side). A driver diagnostic
// (`clang-22: warning: argument unused during compilation: '-L/x'`) that
// every driver command of the split says again is kept once, as the
// compiler alone says it.
std::string in_clang_order(const plan::Plan& plan, const std::map<plan::JobId, std::string>& output);

}  // namespace ob::report
