// The one option table: every option offload-build accepts, grouped by the
// stage that consumes it (the group shows in --help).
#include "options.hpp"

#include <thread>

namespace ob::cli {

void add_global_options(CLI::App& app, GlobalOptions& o) {
  // Consumed by the manifest stage.
  app.add_option("-C", o.directory, "Change to DIR before doing anything (like make/ninja)")
      ->option_text("DIR")
      ->group("Project");
  app.add_option("--manifest", o.manifest, "Project manifest (default: offload.json in DIR)")
      ->option_text("FILE")
      ->group("Project");
  app.add_option("--target", o.targets,
                 "Offload target, repeatable; replaces the manifest's list (host, sm_90, gfx90a, "
                 "triple:arch)")
      ->option_text("T")
      ->allow_extra_args(false)
      ->group("Project");
  // Consumed by the planner.
  app.add_flag("--two-parse", o.two_parse,
               "Compile C/C++ device passes with the driver's own --offload-device-only, each "
               "parsing the source for the host again, instead of sharing one host parse per "
               "source (the default where it gives the same bytes)")
      ->group("Project");
  // Consumed by the launcher's pass-through (src/cli/launcher_prefix.cpp).
  app.add_option("--prefix-command", o.prefix_command,
                 "Launcher mode, ccache's prefix_command: run compiles without offload through "
                 "this command (distcc, icecc; words split on spaces), every offload job locally "
                 "(default: $OFFLOAD_BUILD_PREFIX_COMMAND; docs/DISTRIBUTED.md)")
      ->option_text("CMD")
      ->group("Execution");
  // Consumed by the executor.
  app.add_option("-j,--jobs", o.jobs, "Run up to N jobs at once (default: number of CPUs)")
      ->option_text("N")
      ->check(CLI::PositiveNumber)
      ->group("Execution");
  app.add_flag("--dry-run", o.dry_run,
               "Print every command, shell-quoted and re-runnable, and run nothing")
      ->group("Execution");
  // Consumed by the cache.
  app.add_option("--cache-dir", o.cache_dir,
                 "Cache directory (default: $OFFLOAD_BUILD_CACHE_DIR, $XDG_CACHE_HOME/offload-build "
                 "or ~/.cache/offload-build)")
      ->option_text("DIR")
      ->group("Cache");
  app.add_option("--base-dir", o.base_dir,
                 "Key absolute paths under DIR relative to the working directory (and, in launcher "
                 "mode, pass them so), as ccache's base_dir, so checkouts at other places share "
                 "cache entries; kernel names are relative to it too (default: the manifest's "
                 "base_dir, else $OFFLOAD_BUILD_BASE_DIR)")
      ->option_text("DIR")
      ->group("Cache");
  app.add_option("--project-dir", o.project_dirs,
                 "Launcher mode, repeatable: a directory of the project (the CMake package passes "
                 "CMAKE_SOURCE_DIR and CMAKE_BINARY_DIR): paths under it are keyed and passed "
                 "relative to the working directory, as under --base-dir, and kernel names are "
                 "relative to the one holding the working directory, so a checkout elsewhere hits "
                 "with no base directory set")
      ->option_text("DIR")
      ->group("Cache");
  app.add_option("--kernel-namespace", o.kernel_namespace,
                 "Launcher mode: a name (the project's) that keeps this project's OpenMP kernel "
                 "names apart from another project's linked into the same program (default: "
                 "$OFFLOAD_BUILD_KERNEL_NAMESPACE; a manifest build uses its \"name\")")
      ->option_text("NAME")
      ->group("Cache");
  app.add_option("--remote-storage", o.remote_storage,
                 "Remote storage after the local cache, repeatable, in order: redis://..., "
                 "redis+unix://..., http(s)://... with |attribute=value suffixes (docs/CACHE.md); "
                 "replaces $OFFLOAD_BUILD_REMOTE_STORAGE and the manifest's remote_storage")
      ->option_text("URL")
      ->allow_extra_args(false)
      ->group("Cache");
  app.add_flag("--no-cache", o.no_cache, "Neither use nor fill the cache")->group("Cache");
  app.add_flag("--explain", o.explain,
               "Say for each job whether the cache served it, and for a miss which input changed")
      ->group("Cache");
  // Consumed by the subprocess layer.
  app.add_flag("-v,--verbose", o.verbose, "Print each command as it runs")->group("Output");
  // Consumed by the report stage (src/report: progress, colors, --report).
  app.add_flag("-q,--quiet", o.quiet,
               "Print no progress and no summary: only errors (and what compilers print)")
      ->group("Output");
  app.add_option("--color", o.color,
                 "Color the summary and error:/warning: prefixes: auto (a terminal, unless "
                 "NO_COLOR is set), always, never")
      ->option_text("WHEN")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->group("Output");
  app.add_option("--report", o.report,
                 "Write a JSON report of the build to FILE (jobs, commands, times, cache "
                 "decisions, tools; docs/REPORT.md), also when it fails")
      ->option_text("FILE")
      ->group("Output");
  app.add_option("--timings", o.timings,
                 "Write the build as one self-contained HTML page: a bar per job on a time axis, "
                 "the critical path, tables per target and kind (default FILE: "
                 "<build dir>/offload-build-timings.html; give FILE with '=': --timings=FILE; "
                 "docs/TIMINGS.md)")
      ->expected(0, 1)
      ->option_text("[=FILE]")
      ->group("Output");
  app.add_option("--trace", o.trace,
                 "Write the build's jobs as Chrome trace events (JSON for Perfetto or "
                 "chrome://tracing); launcher compiles add theirs to FILE ($OFFLOAD_BUILD_TRACE), "
                 "so a whole make or ninja run is one trace (docs/TIMINGS.md)")
      ->option_text("FILE")
      ->group("Output");
}

size_t effective_jobs(const GlobalOptions& o) {
  if (o.jobs > 0) return o.jobs;
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

size_t probe_jobs(const GlobalOptions& o, const exec::JobserverSetup& jobserver) {
  return jobserver.serial || jobserver.jobserver ? 1 : effective_jobs(o);
}

}  // namespace ob::cli
