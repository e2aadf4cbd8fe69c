// The plan for one compile seen in launcher mode (`offload-build clang ARGS -c
// SRC -o OUT`): a device pass per target, the package, the host pass, the
// same job kinds as a manifest build and served from the same cache.
#pragma once

#include <filesystem>

#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"
#include "offload_build/toolchain/frontends/driver_listing.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::plan {

// Where the device objects and the package of output `output` (absolute) live
// while the compile runs: `<output>.offload-build/`, next to it, so every path
// in the passes' argv is the same from one build directory to another (the
// cache keys on argv) and never a temporary name.
fs::path launcher_work_dir(const fs::path& output);

// The depfile the caller asked for (absolute): -MF, else the output with its
// extension replaced by .d (as clang does). nullopt when none was requested.
std::optional<fs::path> requested_depfile(const toolchain::frontend::CompileRequest& req, const fs::path& cwd);
// A parsed launcher compile run in `cwd` made ready to plan with `tc`: its
// native targets found (`memo`: the probe memo), the output (with
// `check_output`), depfile and optimization record directories there; else
// why it runs unchanged.
std::optional<toolchain::frontend::Unchanged> ready_to_plan(toolchain::frontend::CompileRequest& req,
                                                            const fs::path& cwd, const toolchain::Toolchain& tc,
                                                            const std::optional<fs::path>& memo, bool check_output);

// Every target in `req.targets` (natives already resolved) gets a device pass.
// `cwd` is absolute: the passes run there and name paths relative to it.
// The host pass writes the caller's object, the device pass of the greatest
// (triple, arch) the caller's depfile (as clang's last front end does); the
// work directory holds the rest (Plan::build_dir).
// With a `probe`, the single-parse layout (one host-IR job read by every
// device cc1 and the host codegen) when the driver's listings have the
// expected shape; else, or without one, the two-parse driver passes. At most
// `parallel_probes` probes run at once.
Plan make_launcher_plan(const toolchain::frontend::CompileRequest& req, const toolchain::Toolchain& tc,
                        const fs::path& cwd, toolchain::DriverProbe* probe = nullptr,
                        size_t parallel_probes = 1);

// The caller's compile as one job (a launcher compile's whole entry in the
// cache, ccache's unit): `argv` the caller's command line (paths under base
// directories relative, argv[0] the compiler's path) reading the source and
// writing the object (and the optimization record); never run, only keyed,
// served and stored. Its depfile is the caller's (-MD: kept) or an unwritten
// name in the work directory: the files its jobs read are given when it is
// stored. `facts`: the settings that shape the split (Job::key_facts);
// `tools`: programs whose identity decides it besides the compiler
// (offload-build itself).
Plan make_whole_compile_plan(const toolchain::frontend::CompileRequest& req, std::vector<std::string> argv,
                             const fs::path& cwd, std::vector<std::string> facts,
                             std::vector<fs::path> tools);

// A compile the launcher does not split, cached as one job that runs
// (plain_compile.hpp; ccache's unit): make_whole_compile_plan's job, its
// argv the caller's command line (argv[0] `compiler`, its path) writing the
// caller's depfile, or -MD -MF into the work directory when it asked for
// none, so that the depfile lists what it read; it records the lookups that
// found nothing, and names kernels (inode-sensitive) where
// `req.names_kernels`. `facts`: Job::key_facts.
Plan make_plain_compile_plan(const toolchain::frontend::CompileRequest& req, const fs::path& compiler,
                             const fs::path& cwd, std::vector<std::string> facts);

// -save-temps (listing_planner.cpp): `listing`, the driver's commands for the
// caller's own command line (`clang ... -###`), one job each, in the
// driver's order where one reads or overwrites what another writes (so the
// device chains run in parallel). Not cached. An error when a command writes
// a temporary file or the last one is not the caller's object.
Result<Plan> make_listing_plan(const std::vector<toolchain::driver_listing::Argv>& listing,
                               const toolchain::frontend::CompileRequest& req, const fs::path& cwd);

// An OpenMP offload link seen in launcher mode as one job: `link` (the -o
// path as the executor writes it, a depfile of every file the linker read)
// producing `program`, reading `inputs`, its work files under `work`, keyed
// on every program clang-linker-wrapper may run.
Job offload_link_job(const toolchain::frontend::LinkRequest& link, std::vector<fs::path> inputs,
                     const fs::path& program, const fs::path& work, const fs::path& cwd,
                     const toolchain::Toolchain& tc);

// A one-step build's plan: `from`'s jobs (one source's compile) appended to
// `into` as translation unit `unit`; the ids of the jobs that write `from`'s
// program (the object).
std::vector<JobId> append_unit(Plan& into, const Plan& from, size_t unit);

}  // namespace ob::plan
