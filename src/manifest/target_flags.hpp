// Private to src/manifest: compiler options that select offload targets,
// which belong in "targets", not in "flags", "host_flags" or "device_flags".
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ob::manifest_detail {

// The "targets" entries the target options in `flags` ask for, in order:
// --offload-arch=sm_80 -> "sm_80"; -fopenmp-targets=x86_64-unknown-linux-gnu
// -> "host"; a GPU triple takes its -Xopenmp-target -march= arch, else a
// placeholder ("sm_XX", "gfxNNN").
std::vector<std::string> targets_for_flags(const std::vector<std::string>& flags);

// The first target-selecting option in list `key` (its index) and the
// message naming the equivalent "targets"; nullopt when there is none.
std::optional<std::pair<size_t, std::string>> target_flag_problem(const std::string& key,
                                                                 const std::vector<std::string>& flags);

}  // namespace ob::manifest_detail
