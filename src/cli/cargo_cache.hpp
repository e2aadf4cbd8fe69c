// Private to src/cli: the job cache of `offload-build cargo`'s device passes.
// cargo's fingerprints decide whether a device pass reruns in one target
// directory; this cache serves a kernel crate's device image to a fresh clone,
// another checkout or another machine (through remote storage), so a build
// there runs no device pass at all.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/cli/build_context.hpp"
#include "offload_build/storage/storage.hpp"
#include "offload_build/storage/remote/layered.hpp"
#include "offload_build/cli/commands.hpp"
#include "offload_build/toolchain/frontends/cargo.hpp"

namespace ob::cli::cargo_cache {

namespace fs = std::filesystem;

// The files that decide a kernel crate's device images: Cargo.lock and the
// path (relative to the workspace root) and content of every file under each
// of `crate_dirs` (the kernel crate and the local crates it depends on; their
// `target/` and hidden directories left out), as one digest. Conservative: any
// edit in those crates is a new key; cargo's fingerprint still keeps the local
// target directory fresh.
std::string files_digest(const fs::path& workspace_root, const std::vector<fs::path>& crate_dirs);

// What decides one device image: rustc's identity, the LLVM toolchain, the
// target, the profile and shared cargo arguments, the device flags, the kernels
// pulled, RUSTFLAGS, and the files (files_digest).
struct KeyInputs {
  std::string rustc_version;      // `rustc --version` line
  std::string llvm;               // the LLVM toolchain's directory name (llvm-22)
  std::vector<std::string> argv;  // the device pass, paths relative to the workspace
  std::vector<std::string> kernels;
  std::vector<std::string> rustflags;
  std::string files;              // files_digest()
};
std::string key(const KeyInputs& in);

class DeviceCache {
 public:
  // Nothing is cached under --no-cache or --dry-run; remotes from --remote-storage and
  // OFFLOAD_BUILD_REMOTE_STORAGE (a bad URL is said once and not used).
  explicit DeviceCache(const GlobalOptions& o);
  bool enabled() const { return layers_ != nullptr; }
  // Write the image stored under `key` to `image` (temp file + rename): true on a hit.
  bool restore(const std::string& key, const fs::path& image, const std::string& what);
  void store(const std::string& key, const fs::path& image, const std::string& what);
  // Wait for uploads; add this build's hits and misses to the cache's counters.
  void finish();

 private:
  BuildContext context_;  // the cache and remotes, opened as for any build
  cache::LayeredStorage* layers_ = nullptr;
  cache::Counters counters_;
};

}  // namespace ob::cli::cargo_cache
