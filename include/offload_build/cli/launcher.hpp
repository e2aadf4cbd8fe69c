// Launcher mode: `offload-build COMPILER ARGS...` (how CMake calls a
// <LANG>_COMPILER_LAUNCHER) and `offload-build [OPTIONS] wrap -- COMPILER ARGS...`.
// An OpenMP offload compile (-c with offload targets) is split into the same
// device, package and host jobs as a manifest build and served from the same
// cache; anything else runs the compiler unchanged. docs/LAUNCHER.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "offload_build/cli/commands.hpp"
#include "offload_build/process/jobserver.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::cache {
class WholeCompile;
}

namespace ob::cli {
class BuildContext;
}  // namespace ob::cli

namespace ob::cli {

// Whether `offload-build [OPTIONS] WORD ...` is a launcher call: WORD is not an option
// nor one of `subcommands`, and names a program (a path to an executable, a
// program on PATH, or a compiler-looking name such as clang++-22).
bool is_launcher_call(const std::vector<std::string>& subcommands, const std::string& word);

// Run `command` (COMPILER ARGS...). Returns the exit code: the compiler's own
// when it ran unchanged.
int launch(const std::vector<std::string>& command, const Request& options);

// Why a command runs unchanged: `code`, its kind, is what `cache stats`
// counts (clang_cli::unchanged::k...); `reason` says more.
struct Unchanged {
  std::string reason;
  std::string code;
  std::string option;  // kOption: the option's name (clang_cli::Parsed::option)
};

// ---- launcher_compile.cpp ----

// `name` (argv[0]) as a path: relative to `cwd` when it has a slash, else found on PATH.
std::optional<fs::path> resolve_program(const std::string& name, const fs::path& cwd);
// The LLVM installation `compiler` is part of (/usr/bin/clang++-22 is
// /usr/lib/llvm-22/bin/clang).
std::optional<Toolchain> toolchain_of(const fs::path& compiler);
// Runs a launcher plan with the cache and the jobserver (under --dry-run,
// prints it and runs nothing); nullopt when a job
// failed (the caller then runs the compiler unchanged, which prints exactly
// its own diagnostics).
// With `record` (--report), the jobs' events and the cache's miss reasons go there.
// With `whole`, the compile's whole entry is stored after it succeeded.
struct Recording;
std::optional<int> run_plan(const Plan& plan, BuildContext& context, Recording* record = nullptr,
                            cache::WholeCompile* whole = nullptr);

// Split and run an offload compile. Returns the exit code, or, when the
// command is not one offload-build splits, sets `why` and returns -1.
int split_compile(const std::vector<std::string>& command, const Request& options,
                  Unchanged& why);

// What every launcher call starts from: the working directory, the compiler
// (clang, resolved), the command with response files expanded, and that with
// the paths under the base directories relative to the working directory.
struct LaunchSetup {
  fs::path cwd;
  fs::path compiler;
  // The registered frontend whose driver the compiler is (frontend::recognize).
  const frontend::Frontend* frontend = nullptr;
  std::vector<std::string> expanded;
  std::vector<std::string> argv;
  // --base-dir and the --project-dir directories (real paths), and the
  // directory kernel names are relative to (launcher_roots).
  std::vector<fs::path> bases;
  fs::path anchor;
};
// The base directories of a launcher call (--base-dir and every
// --project-dir, real paths) and the anchor kernel names are relative to: the
// nearest --project-dir holding `cwd`, else `cwd` (ccache's rule).
std::pair<std::vector<fs::path>, fs::path> launcher_roots(const Request& options, const fs::path& cwd);
// What the driver `compiler` (a path) reads besides its argv: its
// directories (default configuration files), CCC_OVERRIDE_OPTIONS,
// CLANG_NO_DEFAULT_CONFIG.
clang_cli::DriverEnvironment driver_environment(const fs::path& compiler);
std::optional<LaunchSetup> launch_setup(const std::vector<std::string>& command,
                                        const Request& options, Unchanged& why);
// The files a compile's options name are usable: each keyed file
// (CompileRequest::keyed_files) a readable regular file, no -mllvm value
// naming an existing file; else `why`, and the compile runs unchanged (the
// compiler reports a missing or bad file itself). Before any cache lookup.
bool flag_files_usable(const clang_cli::CompileRequest& req, const fs::path& cwd, Unchanged& why);
// A parsed compile made ready to plan: its native targets found, the output
// (with `check_output`), depfile and record directories there; else `why`.
bool ready_to_split(clang_cli::CompileRequest& req, const LaunchSetup& setup, const Toolchain& tc,
                    const std::optional<fs::path>& memo, bool check_output, Unchanged& why);
// A launcher's cache (local, and remotes whose errors are warnings), opened
// once for the whole call; not under --dry-run (which only reads the probe
// memo: BuildContext::probe_memo()).
void open_launcher_cache(BuildContext& context);
// Kernel names from each file's place (relative to the base directory, if
// any) and the project's namespace (--kernel-namespace).
void use_stable_kernel_names(Plan& plan, const LaunchSetup& setup, const std::optional<fs::path>& memo,
                             const Request& options);
// run_plan (or the --dry-run script), then the --report of `command`.
std::optional<int> run_and_report(const Plan& plan, BuildContext& context,
                                  const std::vector<std::string>& command, const std::string& project,
                                  cache::WholeCompile* whole = nullptr);

// ---- launcher_build.cpp ----

// A one-step build (`clang -fopenmp <targets> a.c b.c -o prog`) split into
// each source's compile (as `-c` would split it) and the cached link, one
// plan. Returns the exit code; -1 with `why` when it is a one-step offload
// build not split, -1 with `why` untouched when it is no one-step build.
int split_build(const std::vector<std::string>& command, const Request& options,
                Unchanged& why);

// ---- launcher_unchanged.cpp ----

// Count a compile run unchanged in the cache's counters (unless --no-cache)
// and, under -v, say why: once per build and reason, not once per compile
// (a build: the nearest ancestor process that is not a `sh -c`, e.g. make
// or ninja; remembered in the cache directory).
void note_unchanged(const Unchanged& why, const Request& options);
// Whether this build (make's or ninja's run: the nearest ancestor that is not
// a command shell) has not said `code` yet; marks it said, under `cache`.
bool first_in_build(const std::filesystem::path& cache, const std::string& code);
// Whether this build said `code` already (marks nothing).
bool said_in_build(const std::filesystem::path& cache, const std::string& code);

// `wrap --report FILE`: the build report of one compile. `report` is
// make_report's JSON for a split compile (its jobs), or null for one run
// unchanged (`why`, the compiler's `exit_code`); the launcher fields are
// added here. A failure to write is a warning.
void write_launcher_report(const Request& options, const std::vector<std::string>& command,
                           nlohmann::json report, const Unchanged* why, int exit_code);

// ---- launcher_prefix.cpp ----

// ccache's prefix_command: words put before a compile that compiles no device
// code (distcc, icecc), split as ccache splits the setting (on spaces, no
// quoting); `wrapper` is a distcc/icecc/ccache/sccache taken from the
// compiler position (`distcc clang ...`) or the one a compiler links to
// (/usr/lib/distcc/clang-22), also the last of `words`.
struct Prefix {
  std::vector<std::string> words;
  std::string wrapper;
};
std::vector<std::string> split_prefix_command(std::string_view setting);
// The prefix of this launcher call: prefix_command, then a wrapper in the
// compiler position, which leaves `command`, or a masquerade link, whose
// compiler `command` then names (the real compiler on PATH).
Prefix take_prefix(std::vector<std::string>& command, const Request& options);
// Whether `command` may run through the prefix: it compiles no device code
// (clang_cli::offload_free, response files expanded; unreadable ones: no).
bool may_run_remotely(const std::vector<std::string>& command);
// The wrapper form's note that offload compiles run here, once per build.
void note_local_offload(const Prefix& prefix, const Request& options);

// ---- launcher_link.cpp ----

// Run an OpenMP offload link (CMAKE_<LANG>_LINKER_LAUNCHER) as one cached job:
// device links, wrapper and host link served together. Returns the exit code,
// or sets `pass_reason` and returns -1 when it is not such a link.
int cached_link(const std::vector<std::string>& command, const Request& options,
                std::string& pass_reason);

// That link as a job: `argv` (the -o path as the executor writes it, a
// depfile of every file the linker read) producing `program`, reading
// `inputs`, its work files under `work`.
Job offload_link_job(std::vector<std::string> argv, std::vector<fs::path> inputs, const fs::path& program,
                     const fs::path& work, const fs::path& cwd, const Toolchain& tc);

}  // namespace ob::cli
