// One C/C++ compile's jobs, for a manifest's source and for a compile seen
// in launcher mode alike: the device passes (two-parse), or the host-IR job,
// each target's device cc1 (+ ptxas for nvptx) reading it and the host
// codegen (single parse); then the package and the host pass. The argv of
// each comes from a frontend::Compile; the callers decide the layout (where
// the files go) and the probing, and the manifest planner adds the link.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "common_jobs.hpp"

namespace ob::plan::compile_plan {

using Passes = std::vector<toolchain::single_parse::DevicePass>;  // one per target

// Where one compile's files go: each work file is `dir / (prefix + name)`
// (a manifest: build/obj/a.c.dev.sm_90.o; launcher mode: the work directory's
// dev.sm_90.o).
struct Layout {
  fs::path source;         // absolute
  std::string source_arg;  // the source as argv names it
  fs::path dir;
  std::string prefix;
  fs::path package;  // the TU's package
  fs::path object;   // the host object
  size_t unit = 1;
  // Launcher mode: the depfile the caller asked for. The device pass of the
  // greatest (triple, arch) writes it (as the compiler alone does: its last
  // front end wins) and the cache keeps it with the object.
  std::optional<fs::path> callers_depfile;
  std::optional<fs::path> record;  // a further output of the host pass (an optimization record)
  // A GPU object built without its device runtime installed is checked for
  // runtime calls (a manifest build); launcher mode leaves it to the link.
  bool check_device_runtime = true;

  fs::path file(const std::string& name) const { return dir / (prefix + name); }
};

// Each target's device pass in the driver's form (paths relative to `cwd`).
std::vector<common_jobs::DeviceStep> device_steps(const toolchain::frontend::Compile& compile,
                                                 const Layout& layout,
                                                 const std::vector<manifest::Target>& targets,
                                                 const fs::path& cwd);

// A launcher compile's single-parse form from the driver's listings.
struct Listed {
  Passes passes;
  // The host codegen as the driver lists it (Compile::host_parse_listed: flang's
  // -fc1, no driver process of its own); empty: run Compile::host_codegen.
  toolchain::single_parse::Argv host_codegen;
};

// Launcher mode: the single-parse form of every device pass of one compile,
// from the driver's listings (at most `parallel` probes at once); nullopt
// when a listing has another shape (the two-parse form, as the driver lays it out).
std::optional<Listed> probe_passes(const toolchain::frontend::Frontend& fe, const toolchain::frontend::Compile& compile,
                                   toolchain::DriverProbe& probe,
                                   const std::vector<common_jobs::DeviceStep>& steps,
                                   const Layout& layout, const fs::path& cwd, size_t parallel);

// Add the compile's jobs to `plan` (commands run in plan.cwd): single parse
// with `passes` (one per step; `host_codegen`, when not empty, the host
// codegen's command), else two-parse.
common_jobs::UnitJobs add_compile(Plan& plan, const toolchain::Toolchain& tc, const toolchain::frontend::Frontend& fe,
                                 const toolchain::frontend::Compile& compile, const Layout& layout,
                                 const std::vector<common_jobs::DeviceStep>& steps,
                                 const std::optional<Passes>& passes,
                                 const toolchain::single_parse::Argv& host_codegen = {});

// The module files (Compile::module_files) that jobs of the plan write: a
// file name ("m.mod") to its path and the job writing it.
using ModuleWriters = std::map<std::string, std::pair<fs::path, JobId>>;

// The module files a compile uses: those `writers` write (inputs, after
// them), else every place in the directories flang searches, whether a file
// is there now or not (Job::unordered_reads).
struct ModuleUses {
  std::vector<fs::path> inputs;
  std::vector<JobId> deps;
  std::vector<fs::path> unordered;
};
ModuleUses resolve_uses(const toolchain::frontend::ModuleFiles& files, const ModuleWriters& writers);

// Declare a compile's module files (after add_compile): the jobs of `unit`
// that parse the source (the host parse or two-parse host pass, the device
// passes) read its included files and `uses`, and wait for their writers;
// the host parse (or host pass) writes the modules it defines into
// files.module_dir, in place. Returns that job. A scan's problem leaves the
// parsing jobs uncached, saying why.
JobId add_module_files(Plan& plan, size_t unit, const toolchain::frontend::ModuleFiles& files,
                       const ModuleUses& uses);

// Whether `job` is a pass that reads the compile's options: a device pass,
// the host parse or the host pass.
bool reads_options(const Job& job);

// Files a compile's options name that no depfile lists (profiles, ignore
// lists, plugins), as written relative to `cwd`: inputs of every pass that
// reads those options, keyed by content. The device passes read `device`,
// the host parse and the host pass `host`.
void add_option_files(Plan& plan, const std::vector<std::string>& host, const std::vector<std::string>& device,
                      const fs::path& cwd);

}  // namespace ob::plan::compile_plan
