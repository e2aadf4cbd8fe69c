// Private to src/run: the check of a Rust build's launches against its device
// images (toolchain/frontends/rust_mir.hpp), after the host pass ran and
// before its program is committed: each device pass's image and MIR are
// found in the plan (its device jobs' outputs), the host side's MIR is given.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/result.hpp"

namespace ob::run {

namespace fs = std::filesystem;

// `programs`: what the host side linked, whose offload entries name the
// symbols launched (a #[link_name] applied). `devices`: the device jobs whose
// images the program links (a cargo host pass's own kernel crates);
// nullopt: every device job of the plan.
Result<void> check_rust_launches(const plan::Plan& plan, const toolchain::Toolchain& tc,
                                 const std::vector<fs::path>& host_mirs, const std::vector<fs::path>& programs,
                                 const std::string& device_cfg,
                                 const std::optional<std::vector<plan::JobId>>& devices = std::nullopt);

}  // namespace ob::run
