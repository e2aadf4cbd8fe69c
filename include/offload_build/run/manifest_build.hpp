// The manifest build (`offload-build build`): the manifest read, its plan
// made, stable kernel names applied, the plan run as a Session (session.hpp),
// and its no-op fast path (noop_build.hpp).
#pragma once

#include "offload_build/run/request.hpp"

namespace ob::run {

// The manifest file of -C DIR and --manifest FILE.
fs::path manifest_path(const Request& options);
// The error for a missing manifest: where it was looked for, and how to make one.
Error no_manifest(const fs::path& file);

// Build the project; returns the linked program's path.
Result<fs::path> build(const Request& options);

}  // namespace ob::run
