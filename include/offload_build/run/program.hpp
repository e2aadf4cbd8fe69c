// A built program run as `run`, `cargo run` and `verify` run it.
#pragma once

#include <string_view>

#include "offload_build/process/subprocess.hpp"
#include "offload_build/run/request.hpp"

namespace ob::run {

// Run `cmd` (OMP_TARGET_OFFLOAD=MANDATORY unless set; under --dry-run, print
// it); with `verify`, read the offload runtime's log from its stderr, print
// the summary and fail when no kernel was launched on an offload device
// (`no_kernel` says what to check). The program's exit status is the result.
// A program without a host fallback (`no_fallback`: a Rust kernel's launch
// does nothing when libomptarget skips it) is refused under
// OMP_TARGET_OFFLOAD=DISABLED: it would print its unchanged input.
Result<int> run_program(process::Command cmd, const Request& options, bool verify, std::string_view no_kernel,
                        bool no_fallback = false);

}  // namespace ob::run
