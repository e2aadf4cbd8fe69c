#include <iostream>

#include <fmt/core.h>

#include "offload_build/cli/commands.hpp"
#include "offload_build/cache/job_cache.hpp"
#include "offload_build/cache/storage.hpp"
#include "offload_build/exec/executor.hpp"
#include "offload_build/exec/subprocess.hpp"
#include "offload_build/manifest/manifest.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/device_runtime_check.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "options.hpp"

namespace ob::cli {

namespace {

fs::path manifest_path(const GlobalOptions& o) {
  fs::path dir = o.directory;
  if (!o.manifest) return dir / "offload.json";
  return o.manifest->is_absolute() ? *o.manifest : dir / *o.manifest;
}

void print_summary(const ExecSummary& s) {
  std::cerr << fmt::format("offload-build: {} jobs: {} from cache, {} run\n", s.jobs_total,
                           s.jobs_served, s.jobs_run);
}

}  // namespace

fs::path cache_dir_for(const GlobalOptions& o, const std::optional<fs::path>& manifest_cache_dir) {
  if (o.cache_dir) return fs::absolute(*o.cache_dir);
  if (manifest_cache_dir) return *manifest_cache_dir;
  return cache::default_cache_dir();
}

Result<fs::path> build(const GlobalOptions& o) {
  exec::set_echo_policy({o.verbose, nullptr});
  const fs::path file = manifest_path(o);
  if (!fs::exists(file)) {
    return Error::usage(fmt::format(
        "no manifest at {}; create an offload.json there (see docs/MANIFEST.md), or pass -C DIR "
        "or --manifest FILE",
        file.string()));
  }
  auto manifest = load_manifest(file);
  if (!manifest) return manifest.error();
  if (!o.targets.empty()) OB_TRY(override_targets(*manifest, o.targets));
  auto toolchain = find_toolchain(manifest->toolchain);
  if (!toolchain) return toolchain.error();
  if (manifest->is_rust()) OB_TRY(rustc::prepare(*manifest, *toolchain, o.verbose));

  const Plan plan = make_plan(*manifest, *toolchain);
  if (o.dry_run) {
    std::cout << dry_run_script(plan) << std::flush;
    return plan.program;
  }

  auto runner = make_process_runner();
  ExecOptions exec_options;
  exec_options.parallelism = effective_jobs(o);
  exec_options.progress = &std::cerr;
  exec_options.check_outputs = [&plan](const Job& job, const std::vector<fs::path>& outs) {
    return check_device_object(job, outs.front(), plan.cwd);
  };

  std::optional<cache::Storage> storage;
  std::optional<cache::JobCache> job_cache;
  if (!o.no_cache) {
    storage.emplace(cache_dir_for(o, manifest->cache_dir),
                    manifest->cache_max_size.value_or(cache::kDefaultMaxSize));
    storage->warn_if_unwritable();
    job_cache.emplace(*storage, plan,
                      cache::JobCacheOptions{manifest->cache_time_macros,
                                             o.explain ? &std::cerr : nullptr});
    exec_options.serve = [&](const Job& job, const std::vector<fs::path>& temps) {
      return job_cache->serve(job, temps);
    };
    exec_options.after_run = [&](const Job& job, const std::vector<fs::path>& temps,
                                 const std::optional<fs::path>& depfile) {
      job_cache->store(job, temps, depfile);
    };
  }
  auto summary = execute(plan, *runner, exec_options);
  if (job_cache) job_cache->finish();
  if (!summary) return summary.error();
  print_summary(*summary);
  return plan.program;
}

}  // namespace ob::cli
