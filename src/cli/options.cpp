// The one option table: every option offload-build accepts, grouped by the
// stage that consumes it (the group shows in --help). An option that sets a
// setting takes its help from the settings table (config/settings.cpp).
#include "options.hpp"

#include <fmt/format.h>
#include <thread>

#include "offload_build/config/settings.hpp"

namespace ob::cli {

std::string help_of(std::string_view key) {
  const config::Setting* s = config::find_setting(key);
  std::string help(s->doc);
  help += fmt::format(" [setting {}", s->key);
  if (!s->env.empty()) help += fmt::format(", ${}", s->env);
  if (!s->manifest.empty()) help += fmt::format(", offload.json \"{}\"", s->manifest);
  return help + "; `offload-build config`]";
}

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
               help_of("two_parse"))
      ->group("Project");
  // Consumed by the launcher's pass-through (src/cli/launcher_prefix.cpp).
  app.add_option("--prefix-command", o.prefix_command, help_of("prefix_command"))
      ->option_text("CMD")
      ->group("Execution");
  // Consumed by the executor's remote runner (src/exec/remote_runner.cpp).
  app.add_option("--remote-execution", o.remote_execution, help_of("remote_execution"))
      ->option_text("URL")
      ->group("Execution");
  // Consumed by the executor.
  app.add_option("-j,--jobs", o.jobs, help_of("jobs"))
      ->option_text("N")
      ->check(CLI::PositiveNumber)
      ->group("Execution");
  app.add_flag("--dry-run", o.dry_run,
               "Print every command, shell-quoted and re-runnable, and run nothing")
      ->group("Execution");
  // Consumed by the cache.
  app.add_option("--cache-dir", o.cache_dir,
                 help_of("cache_dir"))
      ->option_text("DIR")
      ->group("Cache");
  app.add_option("--base-dir", o.base_dir,
                 help_of("base_dir"))
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
                 help_of("kernel_namespace"))
      ->option_text("NAME")
      ->group("Cache");
  app.add_option("--remote-storage", o.remote_storage,
                 help_of("remote_storage"))
      ->option_text("URL")
      ->allow_extra_args(false)
      ->group("Cache");
  app.add_flag("--no-cache", o.no_cache, help_of("no_cache"))->group("Cache");
  app.add_flag("--explain", o.explain,
               help_of("explain"))
      ->group("Cache");
  // Consumed by the subprocess layer.
  app.add_flag("-v,--verbose", o.verbose, help_of("verbose"))->group("Output");
  // Consumed by the report stage (src/report: progress, colors, --report).
  app.add_flag("-q,--quiet", o.quiet,
               help_of("quiet"))
      ->group("Output");
  app.add_option("--color", o.color,
                 help_of("color"))
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
                 help_of("trace"))
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
