// The build plan: a DAG of jobs, each one subprocess with an argv vector.
// A job knows its inputs and outputs, so it can be skipped by a cache hit,
// scheduled in parallel, printed for --dry-run and reported as JSON.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::toolchain {
class DriverProbe;
struct StableNames;
}  // namespace ob::toolchain

namespace ob::plan {

namespace fs = std::filesystem;

// HostIr and Assemble exist in the single-parse C/C++ form only: the host IR
// parsed once per TU, and ptxas on a device cc1's PTX (nvptx). ImageLink and
// EmbedStub are Rust's: the host device's image linked from the device pass's
// archive (one relocatable object), and the empty module the package is
// embedded into (test flavour).
enum class JobKind { HostIr, DeviceCompile, Assemble, ImageLink, Package, EmbedStub, HostCompile, Link };

// "host-ir", "device", "assemble", "image-link", "package", "stub", "host", "link"
std::string_view job_kind_name(JobKind kind);

using JobId = size_t;

// Job::runs_here of a compile whose passes write module files (Fortran's).
inline constexpr const char* kWritesModules =
    "a Fortran compile: the module files one writes are the next one's inputs, so Fortran compiles run here";

struct Job {
  JobId id = 0;
  JobKind kind = JobKind::DeviceCompile;
  std::optional<manifest::Target> target;     // device compiles
  fs::path source;                  // the TU (absolute), empty for link
  std::vector<std::string> argv;    // runs in Plan::cwd
  std::vector<fs::path> inputs;     // absolute: files this job reads
  // Absolute: files it may read that no job of the plan writes and nothing
  // orders (the module files a Fortran source USEs from outside the plan, in
  // every directory flang searches; a Makefile without the edge may write
  // one while it runs): keyed by content where they exist and by absence
  // where not, and checked again after the run; stored only if all still are.
  std::vector<fs::path> unordered_reads;
  std::vector<fs::path> outputs;    // absolute: final paths this job produces
  // Outputs the command writes at their final paths (its argv names their
  // directory, not them: a Fortran compile's .mod files in its module
  // directory): they get no temporary name, and a cache hit writes them there.
  std::vector<fs::path> written_in_place;
  std::vector<JobId> deps;          // jobs that must finish first
  // When argv is a step split out of a driver command (a cc1 line), that
  // driver command: what compile_commands.json lists for editors and tools.
  std::vector<std::string> driver_argv;
  // After a GPU device compile with no device runtime installed: the object
  // must not call into the OpenMP device runtime (only ompx_bare kernels link).
  bool forbid_device_runtime_calls = false;
  // Why remote execution must run it here, where its planner knows (a
  // compile whose passes write module files: the next compile's inputs);
  // said once per build (kWritesModules). Empty: the runner decides.
  std::string runs_here;
  // Said after the job's failure: where a known cause is documented (a
  // Fortran offload link, which fails on a toolchain without flang's device runtime).
  std::string failure_hint;

  // --- What the cache needs to know (src/cache) ---
  // Whether the job's outputs may be served from and stored in the cache.
  bool cacheable = true;
  std::string uncacheable_reason;  // when not: why (--explain says it)
  // Not cacheable, yet skipped while nothing it reads or writes changed, as
  // ninja skips an edge (the build state's up-to-date check, where the flow
  // keeps one): a cheap step whose output costs as much to restore as to
  // make (the cargo flow's package, stub and embed steps).
  bool up_to_date_check = false;
  // A Make-style depfile the command writes (absolute): every file it read.
  // Its flags are already in argv; the executor gives it a temporary name too.
  std::optional<fs::path> depfile;
  // The depfile is also a product the caller asked for (launcher mode's -MD):
  // the cache stores it with the outputs and restores it on a hit.
  bool keep_depfile = false;
  // The depfile's `# env-dep:NAME` lines (rustc's dep-info) are inputs too:
  // the variable's value is keyed like a file's content, and the build state
  // stamps it by its value (a Rust crate's passes, manifest and cargo).
  bool env_deps = false;
  // Programs besides argv[0] whose identity decides the output (ptxas, nvlink, ld...).
  std::vector<fs::path> tools;
  // Jobs that share kernel names (one translation unit's device, package and
  // host jobs) have the same unit.
  size_t unit = 0;
  // The output embeds the identity of the files it read (OpenMP kernel names
  // do): by default their device and inode, so a file replaced by an
  // identical copy must still miss.
  bool inode_sensitive = false;
  // inode_sensitive jobs whose compiler runs with the stable-names library
  // (toolchain/stable_names.hpp): names come from each file's place and
  // content, which the key already holds, so inodes are left out of it.
  bool stable_names = false;
  // The output holds the working directory's name (flang's name for the
  // source, ModuleFiles::in_working_dir): the job runs with $PWD set to the
  // name, which its key holds (name_working_dir).
  bool names_working_dir = false;
  // Environment changes the command runs with (the stable-names library).
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  // The command records the lookups that found nothing (headers it looked for
  // and did not find: record_lookups) next to its depfile; the cache stores
  // its outputs only with that record, and checks on every hit that each
  // such path is still absent (docs/CACHE.md).
  bool records_lookups = false;
  // More that decides the outputs besides argv, tools and environment (the
  // settings a launcher compile's whole entry depends on): keyed as is.
  std::vector<std::string> key_facts;
  // Set by a planner that knows better than the command line what decides the
  // outputs (the cargo flow's device pass: cargo alone sees what it reads, and
  // the tools' paths differ between machines): the cache keys the job by this
  // text, its kind, target and inputs, instead of its tools, argv and environment.
  std::optional<std::string> key_material;

  // "device sm_90 src/kernels.cpp", relative to `cwd`.
  std::string describe(const fs::path& cwd) const;
};

struct Plan {
  fs::path cwd;                     // the project directory
  std::vector<Job> jobs;            // topologically ordered: deps come first
  fs::path program;                 // absolute path of the linked program
  // The build state's file (up-to-date checks); empty: .offload-build/state.json beside `program`.
  fs::path state_file;
  fs::path build_dir;               // absolute: everything the jobs write is under it
  // Base directories (real paths: --base-dir, the project's directories):
  // absolute paths under them are keyed relative to `cwd`, and the stable
  // kernel names of files under them are relative to `name_anchor` (the
  // project directory holding `cwd`, else `cwd`; docs/CACHE.md).
  std::vector<fs::path> base_dirs;
  fs::path name_anchor;
  std::vector<fs::path> directories;  // output directories to create
  // Set when the compiler ignores the stable-names library: why its compiles
  // are keyed on inodes (--explain and -v say so).
  std::string kernel_names_fallback;

  // Append `job`, giving it the next id.
  JobId add(Job job) {
    job.id = jobs.size();
    jobs.push_back(std::move(job));
    return jobs.back().id;
  }
};

// How make_plan lays out C/C++ translation units.
struct PlanOptions {
  // Asked for the clang driver's own commands, to run each TU's host parse
  // once (single parse, src/plan/single_parse_planner.cpp). nullptr: every TU
  // keeps the two-parse driver form (each device pass parses the host side too).
  toolchain::DriverProbe* probe = nullptr;
  bool two_parse = false;  // --two-parse: never split
  // Probes run at once at most (each is a compiler process): -j, or 1 under
  // a make jobserver (they run in the slot make started us with).
  size_t parallel_probes = 1;
  // Told which form the TUs got and why (the CLI prints it under -v).
  std::function<void(const std::string&)> note;
  // Called once the driver probes' threads run (toolchain::list_all's
  // `started`); not called when no probe runs.
  std::function<void()> probing;
};

// Derive the whole plan for a manifest: per TU x target device compile,
// per TU package and host compile, one link (and in the single-parse form a
// host-IR job per TU and a ptxas job per nvptx device compile).
Plan make_plan(const manifest::Manifest& manifest, const toolchain::Toolchain& toolchain,
               const PlanOptions& options = {});

// The plan for a Rust crate (manifest.is_rust(); toolchain.rust set by
// rustc::prepare): per target a device pass, then package, embed, and the host
// pass that links (src/plan/rust_planner.cpp). make_plan dispatches here.
Plan make_rust_plan(const manifest::Manifest& manifest, const toolchain::Toolchain& toolchain);

// Give every inode-sensitive job (the compiles that name kernels) the
// stable-names library: its environment with `salt` (kernel_salt), and keys
// without inodes. When the compiler does not honour the library, only
// records why (Plan::kernel_names_fallback).
void use_stable_names(Plan& plan, const toolchain::StableNames& names, const std::string& salt);

// Make every C/C++ compile (an inode-sensitive job with a depfile: it reads
// headers; or one a planner marked records_lookups) record the lookups that found nothing (Job::records_lookups):
// OB_LOOKUPS_ENV names its depfile, and a compile that does not run with the
// preload library already (stable names off, or a compiler that ignores
// them) gets `library` in record-only mode. `library` nullopt (missing):
// the jobs are marked all the same, so nothing they write is stored. After
// use_stable_names.
void record_lookups(Plan& plan, const std::optional<fs::path>& library);

// Give every job that writes the working directory's name into its output
// (Job::names_working_dir) that name as $PWD, which flang's driver takes
// when it is the working directory: with base directories "/proc/self/cwd",
// the same in every checkout (as Bazel maps debug information); else the
// name flang would take here ($PWD when it is the working directory, else
// the directory's path).
void name_working_dir(Plan& plan);

// Path `p` as written into argv: relative to `cwd` when under it.
fs::path arg_path(const fs::path& p, const fs::path& cwd);

}  // namespace ob::plan
