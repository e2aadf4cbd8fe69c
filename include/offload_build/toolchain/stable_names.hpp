// Stable OpenMP kernel names (docs/CACHE.md): C/C++ compiles run with a small
// preloaded library (src/preload/ob_stable_names.c) that gives every file an
// identity made of its place under the base directory and its content, so a
// kernel's name no longer depends on the file's inode or on where the
// checkout lives. This file finds the library, decides whether the compiler
// honours it (a statically linked or setuid compiler ignores LD_PRELOAD: its
// compiles are then keyed on inodes, as before) and gives each compile its
// environment.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "offload_build/process/command.hpp"

namespace ob {

namespace fs = std::filesystem;

struct StableNames {
  fs::path library;  // the preload library (absolute)
  fs::path base;     // real path of the base directory; empty: names use absolute paths
  // The compiler honours the library: its compiles are keyed on the stable
  // names' inputs instead of inodes. false: keyed on inodes, and why.
  bool keyed = true;
  std::string fallback;

  // The environment of one compile whose translation unit has `salt`.
  std::vector<std::pair<std::string, std::optional<std::string>>> env(const std::string& salt) const;
};

// A file offload-build ships (the preload library, the Rust device stub): next
// to the program (build tree), or in <prefix>/lib/offload-build (installed).
// nullopt: not found.
std::optional<fs::path> find_support_file(const std::string& name);
std::optional<fs::path> find_stable_names_library();

// OFFLOAD_BUILD_STABLE_NAMES=0 turns stable names off (kernels named after
// inodes, as plain clang names them).
bool stable_names_disabled();

// The salt of a project's compiles: a hash of its namespace (the manifest's
// name, --kernel-namespace), so two projects' files at the same relative
// path, linked into one program, get different names. Not the flags: a -D
// or -O change must not rename kernels (it would rerun every package, host
// codegen and link).
std::string kernel_salt(const std::string& kernel_namespace);

// Set up stable names for compiles by `compiler`: nullopt when they are off
// or the library is missing. Whether the compiler honours the library is
// asked once (a 1-line compile) and remembered in `memo_dir` (the cache's
// probes/); without a memo directory it is assumed (nothing is cached then).
std::optional<StableNames> stable_names_for(const fs::path& compiler, const fs::path& base,
                                            const std::optional<fs::path>& memo_dir);

// The real path of `file` as the preload library names it: relative to
// `base` when under it, else absolute (both from realpath(3)).
std::string stable_name_path(const fs::path& real, const fs::path& base);

}  // namespace ob
