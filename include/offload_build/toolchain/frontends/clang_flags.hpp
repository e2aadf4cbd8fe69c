// Clang option spellings that code outside the frontends asks about: the
// options that select offload targets (a manifest's "flags" must not carry
// them: offload-build writes them from "targets") and the stable-names probe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ob::toolchain::clang_flags {

// The "targets" entries the target options in `flags` ask for, in order:
// --offload-arch=sm_80 -> "sm_80"; -fopenmp-targets=x86_64-unknown-linux-gnu
// -> "host"; a GPU triple takes its -Xopenmp-target -march= arch, else a
// placeholder ("sm_XX", "gfxNNN").
std::vector<std::string> targets_for_flags(const std::vector<std::string>& flags);

// The first target-selecting option (-fopenmp, -fopenmp-targets=,
// --offload-arch=, -Xopenmp-target...) in the manifest list `key` (its
// index) and the message naming the equivalent "targets"; nullopt when none.
std::optional<std::pair<size_t, std::string>> target_flag_problem(const std::string& key,
                                                                 const std::vector<std::string>& flags);

// `compiler` compiling `source` (a C file, or a Fortran one for flang) for the host side of an OpenMP
// target region, printing its IR to stdout (the stable-names probe reads the
// kernels' names in it).
std::vector<std::string> host_ir_probe_argv(const std::filesystem::path& compiler,
                                            const std::filesystem::path& source);

}  // namespace ob::toolchain::clang_flags
