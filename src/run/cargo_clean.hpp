// Private to src/run: what `cargo clean -p CRATE`, `--release` and
// `--profile NAME` leave of offload-build's in the target dir, removed after
// cargo's own clean (a plain `cargo clean` removes the whole target dir, ours
// in it): the device passes' target dirs of those crates and profiles
// (offload-device/<target>/<crate>-<configuration>, each of one profile), and
// the packages and embedded objects built from them (offload/<profile>/).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "offload_build/run/request.hpp"
#include "offload_build/util/result.hpp"

namespace ob::run {

// `args` are cargo's (`clean ...`); `cargo` runs `cargo metadata` for the
// target dir. Prints what it removed (with --dry-run/-n, what it would).
Result<void> clean_offload_outputs(const Request& o, const std::filesystem::path& cargo,
                                   const std::vector<std::string>& args);

}  // namespace ob::run
