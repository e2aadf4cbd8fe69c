// Private to src/cli: the device pass derived from what cargo resolved for the
// host pass, so that the two build the same code (docs/RUST.md, "Both passes
// build the same code"): each kernel crate's features from the host pass's
// unit graph (`cargo build --unit-graph`), the rustflags of every target in
// cargo's own precedence (environment, `cargo config get`), and a check of the
// device pass's unit graph against the host's that fails naming both sides.
#pragma once

#include "offload_build/plan/cargo_plan.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cli {

// Fills s.host_rustflags, s.device_rustflags and each crate's features.
Result<void> resolve_passes(CargoSession& s);

}  // namespace ob::cli
