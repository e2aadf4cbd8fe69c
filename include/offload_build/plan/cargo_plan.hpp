// `offload-build cargo`'s steps as one Plan (src/plan/cargo_planner.cpp), run
// by run::Session with the CargoRunner (exec/cargo_runner.hpp): per
// kernel crate x target a device pass through cargo (+ the host device's
// image link), whose declared output is the device image; then the Rust chain
// a manifest's crate has too (src/plan/rust_chain.hpp: the package, after
// every image; in the test flavour the embed's stub and the embed); the host
// pass through cargo, after the package (or the embed). Each command is the
// Rust frontend's (toolchain/frontends/rust_frontend.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/cargo_answers.hpp"
#include "offload_build/toolchain/frontends/cargo.hpp"
#include "offload_build/toolchain/frontends/rust_kernels.hpp"

namespace ob::plan {

// A crate whose library defines kernels: each gets a device pass per target.
struct KernelCrate {
  toolchain::cargo::Package pkg;
  toolchain::rust::CrateScan scan;
  std::vector<std::string> kernels;  // their symbols, for the host device's image link
  std::vector<fs::path> dirs;        // its directory and its local dependencies': the cache key's files
  // The features cargo enabled on it in the host pass (plan/cargo_resolve.cpp),
  // then `dep/feature` for each feature cargo's unification across the build
  // gives a dependency of it there; nullopt when the host pass does not build it.
  std::optional<std::vector<std::string>> features;
  // The device triples whose pass unifies features across the workspace's
  // members (DeviceInputs::unify_workspace): where the host pass gives a crate
  // below a direct dependency more features than the pass's own resolve.
  std::set<std::string> unify_workspace;
  // Per device triple, the configuration of its device pass (plan/cargo_resolve.cpp):
  // its target dir's name and its cache key's part of what cargo resolved.
  std::map<std::string, toolchain::cargo::DeviceConfig> configs;
  // configs' entry for `triple`; empty digests before resolve_passes.
  const toolchain::cargo::DeviceConfig& config(const std::string& triple) const {
    static const toolchain::cargo::DeviceConfig none;
    const auto it = configs.find(triple);
    return it == configs.end() ? none : it->second;
  }
};

// Programs that link the same kernel crates' images: those in their
// dependency graphs (cargo metadata's resolve), so that a program never links
// another's kernels (two kernels of one name would be defined twice). One
// host pass each, after the package of those images.
struct HostGroup {
  std::vector<toolchain::cargo::Package> packages;
  std::vector<size_t> crates;         // indices into CargoSession::crates
  toolchain::cargo::UserArgs user;    // its host pass's: the user's own when there is one group
                                      // (else cargo::for_packages: -p each of `packages`)
};

// Everything `cargo` needs, found once (run/cargo_build.cpp).
struct CargoSession {
  bool pictures = false;  // --timings or --trace: the host pass writes cargo's own page too
  fs::path dir;
  toolchain::Toolchain tc;
  fs::path cargo_bin;
  toolchain::cargo::UserArgs user;
  toolchain::cargo::Package pkg;               // the package cargo builds (the first of `packages`)
  std::vector<toolchain::cargo::Package> packages;  // all it builds (-p, --workspace, default-members)
  std::vector<KernelCrate> crates;  // it, and the local crates it depends on, that define kernels
  std::vector<manifest::Target> targets;
  // The rustflags cargo gives every crate, as cargo resolves them
  // (plan/cargo_resolve.cpp): the host pass's triple's, and each device triple's.
  toolchain::cargo::Rustflags host_rustflags;
  std::map<std::string, toolchain::cargo::Rustflags> device_rustflags;
  // cargo's [env] table (config files, --config): NAME and its setting as
  // cargo's config reports it; part of every device pass's configuration.
  std::vector<std::pair<std::string, std::string>> config_env;
  // None of those because the features leave out the optional local crates
  // that would (`gpu = ["dep:kern"]` without --features gpu): their names;
  // cargo then builds the program alone, as it would without offload-build.
  std::vector<std::string> inactive_kernel_crates;
  std::vector<HostGroup> groups;  // every package in one (in `packages`' order)
  // cargo's answers (metadata, config, unit graphs), remembered across runs.
  std::shared_ptr<toolchain::cargo::Answers> answers;
};

// How the runner does a device job: cargo (again after `cargo clean -p` when
// it says fresh but its output is gone), then the image link on the archive
// cargo names, into the job's temporary; the pass's MIR copied to the second.
struct CargoDeviceStep {
  toolchain::cargo::Package pkg;
  manifest::Target target;
  fs::path image;                  // the job's output (final path)
  std::optional<fs::path> output;  // a GPU's bitcode, which is the image; nullopt: the archive cargo names
  fs::path mir;                    // the MIR rustc writes (a fixed place), the job's second output
  // The host device: the image link of `archive` into `out`.
  std::function<std::vector<std::string>(const fs::path& archive, const fs::path& out)> image_link;
  fs::path target_dir;              // the pass's own --target-dir
  std::vector<std::string> clean;  // cargo clean -p for the retry
  std::vector<std::string> config_env;  // names cargo's [env] sets: not env-deps (device_depfile)
  bool echo_json = false, render = false, colour = false, quiet = false;  // the Invocation's
};

// How the runner does the host pass: the embedded object (or, native, the
// package) copied to a name made of the package's content, so that a new
// image changes the host flags and cargo relinks; then cargo.
struct CargoHostStep {
  toolchain::cargo::Package pkg;
  std::vector<std::string> ids;  // the packages whose programs it builds
  fs::path package;  // hashed
  std::vector<JobId> devices;  // the device passes whose images it links (its package's)
  fs::path image;    // copied to named(hash)
  std::function<fs::path(const std::string& hash)> named;
  bool remove_stale = false;  // other devimg-* next to it
  std::function<toolchain::cargo::Invocation(const fs::path& named)> pass;
  // `cargo test --no-run`: cargo's JSON messages leave out its `Executable` lines; printed from them.
  bool list_executables = false;
  std::string failed = "the host pass failed (cargo's messages above say why)";
};

struct CargoPlan {
  Plan plan;
  std::map<JobId, CargoDeviceStep> devices;
  // check|clippy: each job a cargo run whose messages the runner reads (Invocation::render).
  std::map<JobId, toolchain::cargo::Invocation> checks;
  JobId host = 0;
  std::vector<CargoHostStep> host_steps;  // the host job's: one cargo run per HostGroup, in turn
  std::string script;  // --dry-run: cd, then each command
};

// The plan of `s`. Its device jobs are cacheable; their key material is the
// cache's to add (cache/cargo_cache.hpp: add_keys).
CargoPlan make_cargo_plan(const CargoSession& s);

// Runs cargo to derive the device passes from the host pass
// (src/plan/cargo_resolve.cpp): fills s.host_rustflags, s.device_rustflags,
// s.config_env and each crate's features and configurations, or fails naming
// both sides of a difference.
Result<void> resolve_passes(CargoSession& s);

}  // namespace ob::plan
