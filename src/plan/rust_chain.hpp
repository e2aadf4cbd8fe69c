// Private to src/plan: the Rust chain after a crate's device images, laid
// out once for a manifest's crate (rust_planner.cpp) and for `offload-build
// cargo` (cargo_planner.cpp): the package of the images, then, unless the
// host pass reads the package itself (the native flavour), the stub and the
// embed of the package into an object. The caller adds the device passes
// before and the host pass after (rustc or cargo), which links the object.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/rust_frontend.hpp"

namespace ob::plan::rust_chain {

namespace fs = std::filesystem;

// Where the chain writes (absolute), and what its jobs name.
struct Paths {
  fs::path package;
  fs::path stub;      // the empty module the package is embedded into
  fs::path embedded;  // the object embedding the package
  fs::path subject;       // the package and embed jobs' (the crate root, or the package's name)
  fs::path stub_subject;  // the stub job's
};

struct Links {
  JobId last = 0;                    // the job the host pass comes after
  std::optional<fs::path> embedded;  // the object the host pass links; nullopt: it reads the package
};

// Adds the chain after `device_jobs` (each writing one of `images`, as argv
// names it) through `add` (the caller's: its unit, caching and --dry-run line).
Links add(const Plan& plan, const toolchain::frontend::RustFrontend& fe, const toolchain::Toolchain& tc,
          const std::vector<toolchain::frontend::Image>& images, const std::vector<JobId>& device_jobs,
          const Paths& paths, const std::function<JobId(Job)>& add);

}  // namespace ob::plan::rust_chain
