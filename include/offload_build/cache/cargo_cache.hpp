// What decides the device image of a cargo device pass, as the job's cache
// key material (Job::key_material), added to the cargo flow's plan by add_keys. cargo's fingerprints
// decide whether a device pass reruns in one target directory; the job cache,
// keyed by this, serves a kernel crate's device image to a fresh clone,
// another checkout or another machine (through remote storage), so a build
// there runs no device pass at all.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/plan/cargo_plan.hpp"

namespace ob::cache::cargo_cache {

namespace fs = std::filesystem;

// The files that decide a kernel crate's device images: Cargo.lock and the
// path (relative to the workspace root) and content of every file under each
// of `crate_dirs` (the kernel crate and the local crates it depends on; their
// `target/` and hidden directories left out), as one digest. Conservative: any
// edit in those crates is a new key; cargo's fingerprint still keeps the local
// target directory fresh.
std::string files_digest(const fs::path& workspace_root, const std::vector<fs::path>& crate_dirs);

// The same files one by one (--explain says which changed): path relative to
// the workspace root -> a digest of the content; Cargo.lock's "<none>" when absent.
std::map<std::string, std::string> file_hashes(const fs::path& workspace_root, const std::vector<fs::path>& dirs);

// What decides one device image: rustc's identity, the LLVM toolchain, the
// target, the profile and shared cargo arguments, the device flags, the kernels
// pulled, RUSTFLAGS, what cargo resolved for the pass (DeviceConfig::portable:
// features and profile of every unit), cargo's [env] table, and the files
// (files_digest). The job's depfile adds, as the cache's second level, every
// file and environment variable the pass read (toolchain::cargo::device_depfile).
struct KeyInputs {
  std::string rustc_version;      // `rustc --version` line
  std::string llvm;               // the LLVM toolchain's directory name (llvm-22)
  std::vector<std::string> argv;  // the device pass, paths relative to the workspace
  std::vector<std::string> kernels;
  std::vector<std::string> rustflags;
  std::string config;             // DeviceConfig::portable
  std::vector<std::string> env;   // cargo's [env]: NAME=setting
  std::string files;              // files_digest()
};
// As one digest: a device job's Job::key_material.
std::string key(const KeyInputs& in);

// Each device job of `p` (a plan of `s`) gets its key (Job::key_material):
// reads each kernel crate's files once, whatever the number of targets.
void add_keys(plan::CargoPlan& p, const plan::CargoSession& s);

}  // namespace ob::cache::cargo_cache
